"""Coordinates of the 3x3x3 for the two-phase solver, and their move tables.

Phase 1 brings the cube into the subgroup G1 = <U, D, R2, L2, F2, B2>, where
every corner twist and edge flip is 0 and the four UD-slice edges (FR FL BL
BR) are in the slice. Its coordinates are

- ``twist``: the twists of corner slots URF..DBL in base 3 (3^7 = 2187),
- ``flip``: the flips of edge slots UR..BL in base 2 (2^11 = 2048),
- ``slice``: which four of the twelve edge slots hold slice edges (C(12, 4) = 495).

Phase 2 solves inside G1 with the ten moves that keep it, and needs

- ``corner_perm``: the permutation of the 8 corners (8! = 40320),
- ``ud_edge_perm``: the permutation of the 8 U and D layer edges (8! = 40320),
- ``slice_perm``: the permutation of the 4 slice edges inside the slice (4! = 24),

and, for a third pruning table, ``ud_split``: which 4 of the 8 U/D-layer edge
slots hold the U-layer edges UR UF UL UB (C(8, 4) = 70), read off ``ud_edge_perm``.

Every coordinate is 0 on the solved cube. Move tables are built by applying
each move's cubie permutation and orientation change to every coordinate
value at once (numpy), and give the coordinate after each move.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from itertools import combinations, permutations
from math import comb, factorial

import numpy as np

from ...puzzles.cube.cubie import CubieCube, move_cube
from ...puzzles.cube.geometry import FACES

TWISTS = 3**7
FLIPS = 2**11
SLICES = comb(12, 4)
CORNER_PERMS = factorial(8)
UD_EDGE_PERMS = factorial(8)
SLICE_PERMS = factorial(4)
UD_SPLITS = comb(8, 4)

MOVES = tuple(range(18))
# U U2 U' R2 F2 D D2 D' L2 B2: the moves that keep G1 (notation move ids).
PHASE2_MOVES = tuple(m for m in MOVES if FACES[m // 3] in "UD" or m % 3 == 1)
SLICE_EDGES = (8, 9, 10, 11)  # FR FL BL BR

_TWIST_WEIGHTS = 3 ** np.arange(6, -1, -1)
_FLIP_WEIGHTS = 2 ** np.arange(10, -1, -1)


# --- orientation coordinates -------------------------------------------------


def twist_index(co: np.ndarray) -> np.ndarray:
    """Twist coordinate of rows of 8 corner twists (the last one follows from the others)."""
    return co[:, :7] @ _TWIST_WEIGHTS


def twist_rows(indices: np.ndarray) -> np.ndarray:
    """The 8 corner twists of each twist coordinate."""
    digits = (np.asarray(indices)[:, None] // _TWIST_WEIGHTS) % 3
    return np.concatenate([digits, (-digits.sum(axis=1, keepdims=True)) % 3], axis=1)


def flip_index(eo: np.ndarray) -> np.ndarray:
    """Flip coordinate of rows of 12 edge flips."""
    return eo[:, :11] @ _FLIP_WEIGHTS


def flip_rows(indices: np.ndarray) -> np.ndarray:
    digits = (np.asarray(indices)[:, None] // _FLIP_WEIGHTS) % 2
    return np.concatenate([digits, digits.sum(axis=1, keepdims=True) % 2], axis=1)


# --- which slots of a set hold a given 4 pieces ---------------------------------

_BINOMIAL = np.array([[comb(n, k) for k in range(5)] for n in range(12)])


def combination_index(occupied: np.ndarray) -> np.ndarray:
    """Colexicographic rank of the 4 occupied positions of each boolean row (0 for the first four)."""
    occupied = np.asarray(occupied, dtype=np.int64)
    seen = np.cumsum(occupied, axis=1)  # occupied positions up to and including this one
    terms = _BINOMIAL[np.arange(occupied.shape[1]), np.clip(seen, 0, 4)] * occupied
    return terms.sum(axis=1)


def slice_index(occupied: np.ndarray) -> np.ndarray:
    """Slice coordinate of rows of 12 booleans (edge slot holds a slice edge).

    Counted from the BR end, so that slots FR FL BL BR (the solved cube) rank 0.
    """
    return combination_index(np.asarray(occupied)[:, ::-1])


@cache
def slice_rows() -> np.ndarray:
    """(495, 12) booleans: the occupied slots of each slice coordinate."""
    every = np.zeros((SLICES, 12), dtype=bool)
    every[np.arange(SLICES)[:, None], np.array(list(combinations(range(12), 4)))] = True
    rows = np.empty_like(every)
    rows[slice_index(every)] = every
    rows.setflags(write=False)
    return rows


# --- permutations (lexicographic rank) ---------------------------------------


def permutation_index(perms: np.ndarray) -> np.ndarray:
    """Lexicographic rank of each row, a permutation of 0..n-1 (vectorised Lehmer code)."""
    n = perms.shape[1]
    weights = np.array([factorial(n - 1 - i) for i in range(n)])
    smaller_after = (perms[:, None, :] < perms[:, :, None]) & np.triu(np.ones((n, n), bool), 1)
    return smaller_after.sum(axis=2) @ weights


@cache
def permutation_rows(n: int) -> np.ndarray:
    """All permutations of 0..n-1, row k being the one of rank k."""
    rows = np.array(list(permutations(range(n))), dtype=np.int64)  # already in lexicographic order
    rows.setflags(write=False)
    return rows


# --- one cube (plain Python: these run once per solve or search endpoint) ----


@cache
def _rank_of(n: int) -> dict[tuple[int, ...], int]:
    return {tuple(row): rank for rank, row in enumerate(permutation_rows(n).tolist())}


def phase1_coordinates(cube: CubieCube) -> tuple[int, int, int]:
    """(twist, flip, slice) of a 3x3 cubie state."""
    twist = 0
    for t in cube.co[:7]:
        twist = twist * 3 + t
    flip = 0
    for f in cube.eo[:11]:
        flip = flip * 2 + f
    occupied = np.array([[p in SLICE_EDGES for p in cube.ep]])
    return twist, flip, int(slice_index(occupied)[0])


def phase2_coordinates(cp: Sequence[int], ep: Sequence[int]) -> tuple[int, int, int]:
    """(corner_perm, ud_edge_perm, slice_perm) of corner and edge permutations of a G1 state."""
    if any(p >= 8 for p in ep[:8]):
        raise ValueError("phase 2 coordinates need the slice edges in the slice")
    return _rank_of(8)[tuple(cp)], _rank_of(8)[tuple(ep[:8])], _rank_of(4)[tuple(p - 8 for p in ep[8:])]


# --- move tables ---------------------------------------------------------------


def _moves(moves: tuple[int, ...]) -> list[CubieCube]:
    return [move_cube(m, 3) for m in moves]


def _frozen(table: np.ndarray) -> np.ndarray:
    table = table.astype(np.int32)
    table.setflags(write=False)
    return table


@cache
def twist_moves() -> np.ndarray:
    """(2187, 18): twist coordinate after each move."""
    co = twist_rows(np.arange(TWISTS))
    return _frozen(np.stack([twist_index((co[:, m.cp] + m.co) % 3) for m in _moves(MOVES)], axis=1))


@cache
def flip_moves() -> np.ndarray:
    """(2048, 18): flip coordinate after each move."""
    eo = flip_rows(np.arange(FLIPS))
    return _frozen(np.stack([flip_index((eo[:, m.ep] + m.eo) % 2) for m in _moves(MOVES)], axis=1))


@cache
def slice_moves() -> np.ndarray:
    """(495, 18): slice coordinate after each move."""
    rows = slice_rows()
    return _frozen(np.stack([slice_index(rows[:, m.ep]) for m in _moves(MOVES)], axis=1))


@cache
def corner_perm_moves() -> np.ndarray:
    """(40320, 10): corner permutation coordinate after each phase-2 move."""
    rows = permutation_rows(8)
    return _frozen(np.stack([permutation_index(rows[:, m.cp]) for m in _moves(PHASE2_MOVES)], axis=1))


@cache
def ud_edge_perm_moves() -> np.ndarray:
    """(40320, 10): U/D-layer edge permutation coordinate after each phase-2 move."""
    rows = permutation_rows(8)
    # Phase-2 moves keep the U/D edges in slots 0..7, so their sources are there too.
    return _frozen(np.stack([permutation_index(rows[:, m.ep[:8]]) for m in _moves(PHASE2_MOVES)], axis=1))


@cache
def slice_perm_moves() -> np.ndarray:
    """(24, 10): slice edge permutation coordinate after each phase-2 move."""
    rows = permutation_rows(4)
    return _frozen(
        np.stack([permutation_index(rows[:, [e - 8 for e in m.ep[8:]]]) for m in _moves(PHASE2_MOVES)], axis=1)
    )


@cache
def ud_split_of_edge_perm() -> np.ndarray:
    """(40320,): the ud_split coordinate of each ud_edge_perm."""
    return _frozen(combination_index(permutation_rows(8) < 4))


@cache
def ud_split_moves() -> np.ndarray:
    """(70, 10): ud_split coordinate after each phase-2 move."""
    split = ud_split_of_edge_perm()
    representative = np.zeros(UD_SPLITS, dtype=np.int64)
    representative[split[::-1]] = np.arange(UD_EDGE_PERMS)[::-1]  # the first edge permutation of each split
    return _frozen(split[ud_edge_perm_moves()[representative]])
