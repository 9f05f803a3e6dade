"""Coordinates of the 2x2x2 in its DLB-fixed frame, and their move tables.

A state is ``perm * 729 + twist``: ``perm`` ranks the arrangement of the
seven movable corners (7! = 5040, lexicographic rank), ``twist`` packs the
twists of the first six movable slots in base 3 (3^6 = 729; the seventh
follows from the total). 5040 * 729 = 3,674,160 states in all.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import permutations
from math import factorial

import numpy as np

from .batch import Puzzle
from .cubie import CubieCube
from .scramble import DLB_SLOT

MOVABLE = tuple(s for s in range(8) if s != DLB_SLOT)
PERMS = factorial(7)
TWISTS = 3 ** 6
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


@lru_cache(maxsize=None)
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
        rank += sum(1 for q in perm[i + 1:] if q < p) * _FACTORIAL_LIST[i]
    twist = 0
    for s in MOVABLE[:6]:
        twist = twist * 3 + cube.co[s]
    return rank * TWISTS + twist
