"""The 2x2x2 as a ``PuzzleModel``: its coordinates in the DLB-fixed frame and their move tables.

A state is ``perm * 729 + twist``: ``perm`` ranks the arrangement of the
seven movable corners (7! = 5040, lexicographic rank), ``twist`` packs the
twists of the first six movable slots in base 3 (3^6 = 729; the seventh
follows from the total). 5040 * 729 = 3,674,160 states in all.

There is one model per metric (``model("htm")``: the 9 moves of U R F,
``model("qtm")``: their 6 quarter turns), each with its own exact table
(``solver.tables.exact``). States, validation and notation are the cube's
(``solver.puzzles.cube``); a model's move id ``k`` is the notation move
``moves[k]``.
"""

from __future__ import annotations

from functools import cache
from itertools import permutations
from math import factorial

import numpy as np

from ..errors import InvalidState
from . import PuzzleModel
from .cube.batch import Puzzle
from .cube.cubie import CubieCube, from_face_letters, from_facelets, solved_facelets, to_facelets
from .cube.notation import MOVE_NAMES, QUARTER_TURNS, check_metric, move_permutation, parse_moves
from .cube.scramble import DLB_SLOT

MOVABLE = tuple(s for s in range(8) if s != DLB_SLOT)
PERMS = factorial(7)
TWISTS = 3**6
STATES = PERMS * TWISTS
SOLVED_INDEX = 0  # identity permutation has rank 0, no twist is 0
_TWIST_WEIGHTS = 3 ** np.arange(5, -1, -1)
_FACTORIAL_LIST = [factorial(6 - i) for i in range(7)]
_FACTORIALS = np.array(_FACTORIAL_LIST)
_SLOT_POSITION = {s: k for k, s in enumerate(MOVABLE)}


def rank_permutations(perms: np.ndarray) -> np.ndarray:
    """Lexicographic rank of each row, a permutation of 0..6 (vectorised Lehmer code)."""
    smaller_after = (perms[:, None, :] < perms[:, :, None]) & np.triu(np.ones((7, 7), bool), 1)
    return (smaller_after.sum(axis=2) * _FACTORIALS).sum(axis=1)


def twist_index(twists: np.ndarray) -> np.ndarray:
    """Twist coordinate of rows of seven corner twists (only the first six count)."""
    return twists[:, :6] @ _TWIST_WEIGHTS


def _all_twists() -> np.ndarray:
    digits = (np.arange(TWISTS)[:, None] // _TWIST_WEIGHTS) % 3
    return np.concatenate([digits, (-digits.sum(axis=1, keepdims=True)) % 3], axis=1)


@cache
def move_tables() -> tuple[np.ndarray, np.ndarray]:
    """(perm table (5040, 9), twist table (729, 9)): coordinate after each of the 9 moves."""
    puzzle = Puzzle.cube2()
    slot_pos = _SLOT_POSITION
    all_perms = np.array(list(permutations(range(7))), dtype=np.int64)
    all_twists = _all_twists()
    perm_table = np.zeros((PERMS, len(puzzle.moves)), dtype=np.int32)
    twist_table = np.zeros((TWISTS, len(puzzle.moves)), dtype=np.int32)
    for m in range(len(puzzle.moves)):
        source = [slot_pos[int(puzzle.source[m, s])] for s in MOVABLE]
        lut = puzzle.flat_lut[puzzle.lut_base[m, list(MOVABLE)][:, None] + np.arange(3)] % 3  # twist added
        perm_table[:, m] = rank_permutations(all_perms[:, source])
        twist_table[:, m] = twist_index(np.take_along_axis(lut[None], all_twists[:, source][..., None], 2)[..., 0])
    return perm_table, twist_table


def coordinate(cube: CubieCube) -> int:
    """State index of a 2x2 cubie state in the DLB-fixed frame (plain Python: one state is hot)."""
    perm = [_SLOT_POSITION[cube.cp[s]] for s in MOVABLE]
    rank = 0
    for i, p in enumerate(perm):
        rank += sum(1 for q in perm[i + 1 :] if q < p) * _FACTORIAL_LIST[i]
    twist = 0
    for s in MOVABLE[:6]:
        twist = twist * 3 + cube.co[s]
    return rank * TWISTS + twist


def unrank(index: int) -> CubieCube:
    """The cubie state (DLB solved) with state index ``index``."""
    rank, twist = divmod(index, TWISTS)
    free, perm = list(range(7)), []
    for weight in _FACTORIAL_LIST:
        k, rank = divmod(rank, weight)
        perm.append(free.pop(k))
    twists = [(twist // 3 ** (5 - k)) % 3 for k in range(6)]
    twists.append(-sum(twists) % 3)
    cp, co = list(range(8)), [0] * 8
    for k, slot in enumerate(MOVABLE):
        cp[slot], co[slot] = MOVABLE[perm[k]], twists[k]
    return CubieCube(2, tuple(cp), tuple(co))


def metric_moves(metric: str) -> tuple[int, ...]:
    """Notation move ids (U R F only) used in a metric."""
    return tuple(range(9)) if check_metric(metric) == "htm" else tuple(m for m in QUARTER_TURNS if m < 9)


class PocketCube(PuzzleModel):
    """The 2x2x2 in one metric; states are 24-letter facelet strings (DESIGN.md)."""

    name = "2x2x2"
    solved = solved_facelets(2)
    factor_sizes = (PERMS, TWISTS)

    def __init__(self, metric: str) -> None:
        self.metric = metric
        self.moves = metric_moves(metric)
        self.move_names = tuple(MOVE_NAMES[m] for m in self.moves)
        self.tracked_moves = len(self.moves)
        self.sticker_moves = tuple(tuple(int(i) for i in move_permutation(m, 2)) for m in self.moves)

    @property
    def table_name(self) -> str:
        return f"pocket-{self.metric}"

    def parse(self, state: str) -> str:
        if isinstance(state, str) and len(state) != 24:
            raise InvalidState(f"a 2x2x2 state has 24 stickers, got {len(state)} characters")
        return to_facelets(from_facelets(state))

    def rank(self, state: str) -> int:
        return coordinate(from_face_letters(state))

    def unrank(self, index: int) -> str:
        return to_facelets(unrank(index))

    def factor_moves(self) -> tuple[np.ndarray, ...]:
        perm_table, twist_table = move_tables()
        return perm_table[:, list(self.moves)], twist_table[:, list(self.moves)]

    def parse_moves(self, text: str) -> list[int]:
        """Move ids of a sequence in cube notation; in QTM a half turn is two quarter turns."""
        ids: list[int] = []
        for k, move in enumerate(parse_moves(text)):
            if move >= 9:
                raise InvalidState(
                    f"move {k + 1} ({MOVE_NAMES[move]}) turns a face of the DLB corner, which "
                    "the 2x2x2 frame keeps in place: use U, R and F"
                )
            ids += [self.moves.index(move)] if move in self.moves else [self.moves.index(move - 1)] * 2
        return ids


MODELS = {metric: PocketCube(metric) for metric in ("htm", "qtm")}


def model(metric: str = "htm") -> PocketCube:
    """The 2x2x2 model of a metric ("htm" or "qtm"; raises InvalidState for another)."""
    return MODELS[check_metric(metric)]
