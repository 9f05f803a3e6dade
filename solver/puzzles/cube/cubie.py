"""The cubie layer: a cube as permutation + orientation of its corners and edges.

``slot i holds piece cp[i] twisted co[i]`` (and ep/eo for edges), the
convention of Kociemba's two-phase solver. A 2x2x2 has corners only and is
kept in the frame where its DLB corner is solved. Face-letter facelet
strings convert both ways; piece checks (real pieces, each once, twist,
flip, parity) raise ``InvalidState`` naming the stickers involved.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from ...errors import InvalidState
from .facelets import puzzle_size, to_face_letters
from .geometry import (
    CORNER_SLOTS,
    EDGE_SLOTS,
    FACES,
    corner_facelets,
    edge_facelets,
    face_turn_permutation,
    sticker_name,
)


@dataclass(frozen=True)
class CubieCube:
    size: int
    cp: tuple[int, ...]
    co: tuple[int, ...]
    ep: tuple[int, ...] = ()
    eo: tuple[int, ...] = ()

    @classmethod
    def solved(cls, size: int = 3) -> CubieCube:
        edges = 12 if size == 3 else 0
        return cls(size, tuple(range(8)), (0,) * 8, tuple(range(edges)), (0,) * edges)

    def multiply(self, other: CubieCube) -> CubieCube:
        """This state followed by ``other`` (``other`` as a move applied to solved)."""
        cp = tuple(self.cp[j] for j in other.cp)
        co = tuple((self.co[j] + t) % 3 for j, t in zip(other.cp, other.co))
        ep = tuple(self.ep[j] for j in other.ep)
        eo = tuple((self.eo[j] + f) % 2 for j, f in zip(other.ep, other.eo))
        return CubieCube(self.size, cp, co, ep, eo)

    def is_solved(self) -> bool:
        return self == CubieCube.solved(self.size)


def _names(indices, n: int) -> str:
    return " ".join(sticker_name(i, n) for i in indices)


# What a slot shows for each (piece, twist): colours read in the slot's order.
_CORNER_BY_COLOURS = {
    name[-t:] + name[:-t] if t else name: (p, t) for p, name in enumerate(CORNER_SLOTS) for t in range(3)
}
_EDGE_BY_COLOURS = {name[::-1] if f else name: (p, f) for p, name in enumerate(EDGE_SLOTS) for f in range(2)}


def _read_corner(faces: str, slot: int, n: int) -> tuple[int, int]:
    """(piece, twist) in a corner slot, or InvalidState if the stickers are no real corner."""
    where = corner_facelets(n)[slot]
    colours = faces[where[0]] + faces[where[1]] + faces[where[2]]
    found = _CORNER_BY_COLOURS.get(colours)
    if found is None:
        raise InvalidState(
            f"the corner at {_names(where, n)} ({CORNER_SLOTS[slot]} slot) has colours of faces "
            f"{' '.join(colours)}: no real corner looks like that"
        )
    return found


def _read_edge(faces: str, slot: int) -> tuple[int, int]:
    where = edge_facelets()[slot]
    colours = faces[where[0]] + faces[where[1]]
    found = _EDGE_BY_COLOURS.get(colours)
    if found is None:
        raise InvalidState(
            f"the edge at {_names(where, 3)} ({EDGE_SLOTS[slot]} slot) has colours of faces "
            f"{' '.join(colours)}: no real edge looks like that"
        )
    return found


def _check_each_piece_once(perm: tuple[int, ...], names: tuple[str, ...], kind: str) -> None:
    if len(set(perm)) == len(perm):
        return
    for piece, name in enumerate(names):
        slots = [names[s] for s, p in enumerate(perm) if p == piece]
        if len(slots) > 1:
            raise InvalidState(f"the {name} {kind} appears {len(slots)} times (in slots {', '.join(slots)})")


def _parity(perm: tuple[int, ...]) -> int:
    seen, parity = set(), 0
    for start in range(len(perm)):
        length, j = 0, start
        while j not in seen:
            seen.add(j)
            j = perm[j]
            length += 1
        parity ^= length > 0 and length % 2 == 0
    return int(parity)


def _check_invariants(cube: CubieCube) -> None:
    twist = sum(cube.co) % 3
    if twist:
        raise InvalidState(
            f"a corner is twisted: the corner twists add up to {twist} mod 3 instead of 0 "
            f"(one corner turned {'clockwise' if twist == 1 else 'counter-clockwise'} in place)"
        )
    if cube.size == 3:
        if sum(cube.eo) % 2:
            raise InvalidState("an edge is flipped: the edge flips add up to an odd number")
        if _parity(cube.cp) != _parity(cube.ep):
            raise InvalidState(
                "permutation parity error: corners and edges have different parity "
                "(two pieces are swapped, e.g. two edges exchanged)"
            )


def from_face_letters(faces: str) -> CubieCube:
    """Cubie state of a facelet string written in face letters; checks every piece."""
    n = puzzle_size(faces)
    corners = [_read_corner(faces, s, n) for s in range(8)]
    cp, co = tuple(p for p, _ in corners), tuple(t for _, t in corners)
    _check_each_piece_once(cp, CORNER_SLOTS, "corner")
    ep: tuple[int, ...] = ()
    eo: tuple[int, ...] = ()
    if n == 3:
        edges = [_read_edge(faces, s) for s in range(12)]
        ep, eo = tuple(p for p, _ in edges), tuple(f for _, f in edges)
        _check_each_piece_once(ep, EDGE_SLOTS, "edge")
    cube = CubieCube(n, cp, co, ep, eo)
    _check_invariants(cube)
    return cube


def from_facelets(state: str) -> CubieCube:
    """Validate a facelet string in any six colour letters and return its cubie state."""
    return from_face_letters(to_face_letters(state))


def to_facelets(cube: CubieCube) -> str:
    """Facelet string, in face letters, of a cubie state."""
    n = cube.size
    out = [""] * (6 * n * n)
    for face in range(6):
        out[face * n * n + (n * n) // 2] = FACES[face]  # centres (odd n)
    for slot, (piece, twist) in enumerate(zip(cube.cp, cube.co)):
        for k, index in enumerate(corner_facelets(n)[slot]):
            out[index] = CORNER_SLOTS[piece][(k - twist) % 3]
    for slot, (piece, flip) in enumerate(zip(cube.ep, cube.eo)):
        for k, index in enumerate(edge_facelets()[slot]):
            out[index] = EDGE_SLOTS[piece][(k + flip) % 2]
    return "".join(out)


def solved_facelets(size: int) -> str:
    return "".join(face * size * size for face in FACES)


@cache
def move_cube(move: int, size: int = 3) -> CubieCube:
    """The cubie effect of move index ``move`` (see ``notation``) in the given size.

    On a 2x2 only U, R and F moves keep the DLB corner in place.
    """
    faces = solved_facelets(size)
    source = face_turn_permutation(FACES[move // 3], size)
    for _ in range(move % 3 + 1):
        faces = "".join(faces[i] for i in source)
    if size == 2 and move // 3 >= 3:
        raise ValueError("the 2x2 cubie model keeps DLB fixed and has only U, R and F moves")
    return from_face_letters(faces)


def apply_moves_cubie(cube: CubieCube, moves) -> CubieCube:
    for m in moves:
        cube = cube.multiply(move_cube(m, cube.size))
    return cube
