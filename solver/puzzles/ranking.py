"""Numbering piece arrangements: even permutations and orientation digits.

An even permutation of n items is numbered by the Lehmer code of its first
n - 2 entries (n! / 2 values): the last two entries follow from the parity.
Orientations are base-b digits; where their sum is fixed, the last digit is
left out of the number and recomputed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np


def parity(perm: Sequence[int]) -> int:
    """0 for an even permutation, 1 for an odd one."""
    seen, odd = [False] * len(perm), 0
    for start in range(len(perm)):
        length, j = 0, start
        while not seen[j]:
            seen[j], j, length = True, perm[j], length + 1
        odd ^= length > 0 and length % 2 == 0
    return int(odd)


def rank_even(perm: Sequence[int]) -> int:
    """Number of an even permutation of 0..n-1, in 0 .. n!/2 - 1."""
    n, rank = len(perm), 0
    for i in range(n - 2):
        rank = rank * (n - i) + sum(1 for q in perm[i + 1 :] if q < perm[i])
    return rank


def unrank_even(rank: int, n: int) -> tuple[int, ...]:
    """The even permutation of 0..n-1 numbered ``rank``."""
    digits = []
    for base in range(3, n + 1):
        rank, digit = divmod(rank, base)
        digits.append(digit)
    left = list(range(n))
    perm = [left.pop(d) for d in reversed(digits)]
    perm += left
    if parity(perm):
        perm[-2], perm[-1] = perm[-1], perm[-2]
    return tuple(perm)


def rank_digits(digits: Sequence[int], base: int) -> int:
    """The digits as one number, the first digit most significant."""
    value = 0
    for d in digits:
        value = value * base + d
    return value


def unrank_digits(value: int, base: int, count: int) -> list[int]:
    digits = [0] * count
    for i in range(count - 1, -1, -1):
        value, digits[i] = divmod(value, base)
    return digits


def factor_table(size: int, moves: int, step: Callable[[int, int], int]) -> np.ndarray:
    """(size, moves) table of ``step(value, move)``: a factor's value after each move."""
    return np.array([[step(value, move) for move in range(moves)] for value in range(size)], dtype=np.int64)
