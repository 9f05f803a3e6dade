"""Where every sticker of an n x n x n cube sits in space, and what a face turn does to it.

Everything the cubie layer needs (which stickers form each corner and edge,
the sticker permutation of each face turn) is derived here from 3D geometry
instead of being typed in by hand, so the two puzzle sizes share one source.

Coordinates are integers: x grows from L to R, y from D to U, z from B to F.
A sticker of an n-cube sits on a cubie whose coordinates are in
{-(n-1), ..., n-1} stepping by 2, and is described by (cubie position, normal).
Facelet order is the Kociemba convention of DESIGN.md: faces U R F D L B,
each face in reading order as drawn in the unfolded net (U above F,
L F R B in a row, D below F).
"""

from __future__ import annotations

from functools import cache

import numpy as np

FACES = "URFDLB"
OPPOSITE = {"U": "D", "D": "U", "R": "L", "L": "R", "F": "B", "B": "F"}
NORMALS = {
    "U": (0, 1, 0),
    "R": (1, 0, 0),
    "F": (0, 0, 1),
    "D": (0, -1, 0),
    "L": (-1, 0, 0),
    "B": (0, 0, -1),
}

# Corner slots and edge slots in Kociemba's order; each lists its faces in
# the order its stickers are read (U/D sticker first, then clockwise).
CORNER_SLOTS = ("URF", "UFL", "ULB", "UBR", "DFR", "DLF", "DBL", "DRB")
EDGE_SLOTS = ("UR", "UF", "UL", "UB", "DR", "DF", "DL", "DB", "FR", "FL", "BL", "BR")


def _net_position(face: str, row: int, col: int, n: int) -> tuple[int, int, int]:
    """Cubie coordinates of the sticker at (row, col) of a face drawn in the net."""
    r = 2 * row - (n - 1)  # grows downwards in the drawing
    c = 2 * col - (n - 1)  # grows rightwards in the drawing
    edge = n - 1
    return {
        "U": (c, edge, r),  # top row of U is at the back
        "D": (c, -edge, -r),  # top row of D touches F
        "F": (c, -r, edge),
        "B": (-c, -r, -edge),  # seen from behind: left of drawing is R side
        "R": (edge, -r, -c),  # seen from the right: left of drawing is F side
        "L": (-edge, -r, c),  # seen from the left: left of drawing is B side
    }[face]


@cache
def stickers(n: int) -> tuple[tuple[tuple[int, int, int], tuple[int, int, int]], ...]:
    """(position, normal) of every facelet of an n-cube, in facelet-string order."""
    out = []
    for face in FACES:
        for row in range(n):
            for col in range(n):
                out.append((_net_position(face, row, col, n), NORMALS[face]))
    return tuple(out)


def sticker_name(index: int, n: int) -> str:
    """Human name of a facelet index: face letter and 1-based reading position, e.g. 'F3'."""
    per_face = n * n
    return f"{FACES[index // per_face]}{index % per_face + 1}"


def _rotate_clockwise(v: tuple[int, int, int], axis: tuple[int, int, int]) -> tuple[int, int, int]:
    """Rotate v by a quarter turn clockwise as seen looking at the face whose normal is axis."""
    # Clockwise seen from outside is -90 degrees about the outward axis:
    # v' = -(axis x v) + axis (axis . v).
    ax, ay, az = axis
    x, y, z = v
    cross = (ay * z - az * y, az * x - ax * z, ax * y - ay * x)
    dot = ax * x + ay * y + az * z
    return (-cross[0] + ax * dot, -cross[1] + ay * dot, -cross[2] + az * dot)


@cache
def face_turn_permutation(face: str, n: int) -> np.ndarray:
    """Sticker permutation of one clockwise quarter turn of an outer face.

    Returned as ``source``: after the turn, facelet i shows what facelet
    ``source[i]`` showed before, so ``new = old[source]``.
    """
    return _turn_permutation(face, n, whole=False)


@cache
def cube_rotation_permutation(face: str, n: int) -> np.ndarray:
    """Sticker permutation of turning the whole cube a quarter turn clockwise as seen from ``face``.

    ``"R"`` is the rotation x, ``"U"`` is y, ``"F"`` is z (and ``"L"`` is x').
    Same form as ``face_turn_permutation``: ``new = old[source]``.
    """
    return _turn_permutation(face, n, whole=True)


def _turn_permutation(face: str, n: int, whole: bool) -> np.ndarray:
    index_of = {s: i for i, s in enumerate(stickers(n))}
    axis = NORMALS[face]
    layer = n - 1
    source = np.arange(len(index_of), dtype=np.intp)
    for i, (pos, normal) in enumerate(stickers(n)):
        if not whole and sum(p * a for p, a in zip(pos, axis)) != layer:
            continue
        target = index_of[(_rotate_clockwise(pos, axis), _rotate_clockwise(normal, axis))]
        source[target] = i
    source.setflags(write=False)
    return source


def _sticker_at(position: tuple[int, int, int], face: str, n: int) -> int:
    return stickers(n).index((position, NORMALS[face]))


def _slot_facelets(slot: str, n: int) -> tuple[int, ...]:
    edge = n - 1
    x, y, z = (sum(NORMALS[f][k] for f in slot) * edge for k in range(3))
    return tuple(_sticker_at((x, y, z), face, n) for face in slot)


@cache
def corner_facelets(n: int) -> tuple[tuple[int, ...], ...]:
    """Facelet indices of each corner slot, in the slot's reading order."""
    return tuple(_slot_facelets(slot, n) for slot in CORNER_SLOTS)


@cache
def edge_facelets() -> tuple[tuple[int, ...], ...]:
    """Facelet indices of each edge slot of a 3x3, in the slot's reading order."""
    return tuple(_slot_facelets(slot, 3) for slot in EDGE_SLOTS)


def centre_facelets() -> tuple[int, ...]:
    """Facelet index of each centre of a 3x3, in face order U R F D L B."""
    return tuple(9 * k + 4 for k in range(6))
