"""Seeded randomness: uniformly random reachable states and random scrambles.

Both are vectorised (numpy ``Generator``, shape (N, ...)) for training and
benchmarks; ``solver.api.scramble`` turns one of them into facelet strings.
"""

from __future__ import annotations

import numpy as np

from .batch import Puzzle, apply_move, solved
from .geometry import FACES, OPPOSITE

DLB_SLOT = 6  # the 2x2 frame keeps this corner (DBL) solved


def _random_permutations(rng: np.random.Generator, count: int, length: int) -> np.ndarray:
    return np.argsort(rng.random((count, length)), axis=1)


def permutation_parity(perms: np.ndarray) -> np.ndarray:
    """Parity (0 even, 1 odd) of each row permutation, by counting inversions."""
    inversions = (perms[:, :, None] > perms[:, None, :]) & np.triu(np.ones(perms.shape[1:] * 2, bool), 1)
    return inversions.sum(axis=(1, 2)) % 2


def _random_orientations(rng: np.random.Generator, count: int, pieces: int, modulus: int) -> np.ndarray:
    o = rng.integers(0, modulus, (count, pieces))
    o[:, -1] = (-o[:, :-1].sum(axis=1)) % modulus
    return o


def random_states(puzzle: Puzzle, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` states drawn uniformly from all reachable states of the puzzle."""
    if puzzle.size == 2:
        movable = np.array([s for s in range(8) if s != DLB_SLOT])
        cp = np.tile(np.arange(8), (count, 1))
        cp[:, movable] = movable[_random_permutations(rng, count, 7)]
        co = np.zeros((count, 8), dtype=np.int64)
        co[:, movable] = _random_orientations(rng, count, 7, 3)
        return (cp * 3 + co).astype(np.uint8)
    cp = _random_permutations(rng, count, 8)
    ep = _random_permutations(rng, count, 12)
    odd = permutation_parity(cp) != permutation_parity(ep)
    ep[odd, 0], ep[odd, 1] = ep[odd, 1], ep[odd, 0].copy()
    co = _random_orientations(rng, count, 8, 3)
    eo = _random_orientations(rng, count, 12, 2)
    return np.concatenate([cp * 3 + co, ep * 2 + eo], axis=1).astype(np.uint8)


def _allowed_after(puzzle: Puzzle, axis: tuple[int, ...]) -> np.ndarray:
    """allowed[prev, next] over move-axis positions; row len(axis) is 'no previous move'.

    A move may not follow one of its own face, and of two opposite faces only
    the order U before D, R before L, F before B is used, so every scramble is
    already as short as it looks.
    """
    faces = [puzzle.moves[k] // 3 for k in axis]
    allowed = np.ones((len(axis) + 1, len(axis)), dtype=bool)
    for i, a in enumerate(faces):
        for j, b in enumerate(faces):
            opposite = FACES[b] == OPPOSITE[FACES[a]]
            allowed[i, j] = a != b and not (opposite and b < a)
    return allowed


def random_scrambles(
    puzzle: Puzzle,
    depths: np.ndarray,
    rng: np.random.Generator,
    quarter_turns_only: bool = False,
    redundant: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Scramble N solved cubes by ``depths[i]`` random moves each.

    By default no move follows one of its own face (see ``_allowed_after``);
    with ``redundant`` every move is drawn uniformly, so moves may cancel.

    Returns (states (N, slots), moves (N, max depth) as move-axis positions,
    -1 past each scramble's end).
    """
    depths = np.asarray(depths, dtype=np.int64)
    axis = puzzle.quarter_turns if quarter_turns_only else tuple(range(len(puzzle.moves)))
    allowed = _allowed_after(puzzle, axis) if not redundant else np.ones((len(axis) + 1, len(axis)), bool)
    states = solved(puzzle, len(depths))
    moves = np.full((len(depths), int(depths.max(initial=0))), -1, dtype=np.int64)
    previous = np.full(len(depths), len(axis))
    for step in range(moves.shape[1]):
        weights = allowed[previous] * rng.random((len(depths), len(axis)))
        choice = weights.argmax(axis=1)
        active = step < depths
        moves[active, step] = np.asarray(axis)[choice[active]]
        states[active] = apply_move(puzzle, states[active], moves[active, step])
        previous = np.where(active, choice, previous)
    return states, moves
