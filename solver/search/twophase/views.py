"""The six views of one cube that the two-phase search runs side by side.

Phase 1 always aims at G1 = <U, D, R2, L2, F2, B2>, so its solutions end
with a phase 2 about the U-D axis. Looking at the cube turned a third of a
turn about its URF-DBL diagonal (R->U->F->R, L->D->B->L) puts the R-L or F-B
axis there instead, and solving the inverse state gives other solutions
again (read backwards and inverted). The six views have six different sets
of phase-1 sequences, and the search finds short totals sooner among all of
them than among one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from ...puzzles.cube.cubie import CubieCube, from_face_letters, to_facelets
from ...puzzles.cube.geometry import FACES, NORMALS, stickers
from ...puzzles.cube.notation import inverse_moves


def _turn(v: tuple[int, int, int]) -> tuple[int, int, int]:
    """A third of a turn about the URF-DBL diagonal: x -> y -> z -> x (R -> U -> F -> R)."""
    x, y, z = v
    return (z, x, y)


@cache
def _turn_tables() -> tuple[tuple[int, ...], dict[str, str], tuple[int, ...]]:
    """(facelet that each facelet goes to, face letter -> turned face letter, face -> face it came from)."""
    index_of = {s: i for i, s in enumerate(stickers(3))}
    target = tuple(index_of[(_turn(pos), _turn(normal))] for pos, normal in stickers(3))
    face_of_normal = {normal: face for face, normal in NORMALS.items()}
    relabel = {face: face_of_normal[_turn(NORMALS[face])] for face in FACES}
    came_from = tuple(FACES.index(next(f for f in FACES if relabel[f] == face)) for face in FACES)
    return target, relabel, came_from


def turned(cube: CubieCube) -> CubieCube:
    """The same cube seen after turning it a third of a turn about the URF-DBL diagonal."""
    target, relabel, _ = _turn_tables()
    faces = to_facelets(cube)
    out = [""] * len(faces)
    for i, letter in enumerate(faces):
        out[target[i]] = relabel[letter]
    return from_face_letters("".join(out))


def inverse(cube: CubieCube) -> CubieCube:
    """The state that the moves making ``cube`` from solved, inverted, make."""
    cp, co, ep, eo = [0] * 8, [0] * 8, [0] * 12, [0] * 12
    for slot, (piece, twist) in enumerate(zip(cube.cp, cube.co)):
        cp[piece], co[piece] = slot, (-twist) % 3
    for slot, (piece, flip) in enumerate(zip(cube.ep, cube.eo)):
        ep[piece], eo[piece] = slot, flip
    return CubieCube(3, tuple(cp), tuple(co), tuple(ep), tuple(eo))


@dataclass(frozen=True)
class View:
    """A cube as one search sees it: turned ``turns`` thirds about the diagonal, maybe inverted."""

    cube: CubieCube
    turns: int
    inverted: bool

    def to_original(self, moves: list[int]) -> list[int]:
        """The moves, found for this view, as moves that solve the original cube."""
        came_from = _turn_tables()[2]
        for _ in range(self.turns):
            moves = [3 * came_from[m // 3] + m % 3 for m in moves]
        return inverse_moves(moves) if self.inverted else moves


def views(cube: CubieCube) -> list[View]:
    """The six views: turned 0, 1, 2 thirds, each as is and inverted."""
    out = []
    seen = cube
    for turns in range(3):
        out += [View(seen, turns, False), View(inverse(seen), turns, True)]
        seen = turned(seen)
    return out
