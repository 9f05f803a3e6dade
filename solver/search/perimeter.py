"""Exact distances of every 3x3x3 state within a few quarter turns of solved.

A breadth-first search from the solved cube over the 12 quarter turns
records each state reached within ``depth`` moves (depth 6: 983,926 states;
counts as in the published QTM distance distribution) with its distance.
The neural A* uses it as a perimeter (Dillenburg and Nelson's perimeter
search): inside it the heuristic is exact and a solution is finished by
walking down the table; outside it the true distance is known to be at
least ``depth + 1``, a floor for the network's estimate.

The table is kept in the table cache (``solver.tables.cache``) after its
first build. States are stored as a sorted array of 64-bit hashes of their
exact keys (9 bytes per state with the distance). Two states sharing a hash
is so unlikely (about 3e-8 for the whole depth-6 table) that a hit is
trusted as an estimate during the search, while every walk down the table
is checked to end at the solved state.
"""

from __future__ import annotations

import time
from functools import cache

import numpy as np

from ..puzzles.cube.batch import (
    Puzzle,
    apply_all_moves,
    apply_move,
    hash_bits,
    is_solved,
    key_hashes,
    solved,
    state_keys,
)
from ..puzzles.cube.notation import inverse_moves
from ..tables.cache import read_table, write_table

DEFAULT_DEPTH = 6
MAX_DEPTH = 7
OUTSIDE = -1
FORMAT_VERSION = 1
FILTER_BITS_PER_STATE = 16  # about 6% of outside states pass the filter and are looked up


def state_hashes(states: np.ndarray) -> np.ndarray:
    """A 64-bit hash (uint64) of each 3x3 batch row's exact key."""
    return key_hashes(state_keys(states))


class Perimeter:
    """Lookup of exact distances (quarter turns) for states within ``depth`` of solved."""

    def __init__(self, depth: int, hashes: np.ndarray, distances: np.ndarray, build_s: float):
        self.depth = depth
        self.hashes = hashes
        self.distances = distances
        self.build_s = build_s
        self.puzzle = Puzzle.cube3()
        self._filter_bits = max(16, int(np.ceil(np.log2(FILTER_BITS_PER_STATE * len(hashes) + 1))))
        self._filter = np.zeros(1 << (self._filter_bits - 3), np.uint8)
        bit = hash_bits(hashes, self._filter_bits)
        np.bitwise_or.at(self._filter, bit >> 3, np.left_shift(1, bit & 7).astype(np.uint8))

    def __len__(self) -> int:
        return len(self.hashes)

    def distance(self, states: np.ndarray) -> np.ndarray:
        """Distance (int16) of each state, or ``OUTSIDE`` (-1) if it is farther than ``depth``."""
        query = state_hashes(states)
        # A bit filter first (a Bloom filter with one hash): most states searched lie outside, and a
        # binary search of the whole table for each of them was a tenth of the A*'s time.
        bit = hash_bits(query, self._filter_bits)
        maybe = np.flatnonzero((self._filter[bit >> 3] >> (bit & 7).astype(np.uint8)) & 1)
        out = np.full(len(states), OUTSIDE, dtype=np.int16)
        index = np.minimum(np.searchsorted(self.hashes, query[maybe]), len(self.hashes) - 1)
        hit = self.hashes[index] == query[maybe]
        out[maybe[hit]] = self.distances[index[hit]]
        return out

    def finish(self, state: np.ndarray) -> list[int] | None:
        """Quarter turns (``solver.puzzles.cube.notation`` move ids) taking a perimeter state to solved; None
        if the walk fails, which only a hash collision can cause."""
        turns = self.puzzle.quarter_turns
        row = state[None]
        d = int(self.distance(row)[0])
        path: list[int] = []
        while d > 0:
            children = apply_all_moves(self.puzzle, row, turns)[0]
            closer = np.flatnonzero(self.distance(children) == d - 1)
            if not len(closer):
                return None
            row, d = children[closer[0]][None], d - 1
            path.append(self.puzzle.moves[turns[closer[0]]])
        return path if is_solved(self.puzzle, row)[0] else None


def build(depth: int = DEFAULT_DEPTH) -> Perimeter:
    """Breadth-first search from solved to ``depth`` quarter turns (1..MAX_DEPTH)."""
    if not 1 <= depth <= MAX_DEPTH:
        raise ValueError(f"perimeter depth must be 1 to {MAX_DEPTH}, got {depth}")
    start = time.perf_counter()
    puzzle = Puzzle.cube3()
    frontier = solved(puzzle)
    layers = [state_hashes(frontier)]
    seen = layers[0]
    for _ in range(depth):
        children, hashes = _next_layer(puzzle, frontier)
        new = ~_member(hashes, seen)
        frontier, layer = children[new], hashes[new]
        layers.append(layer)
        seen = np.sort(np.concatenate([seen, layer]))
    distances = np.concatenate([np.full(len(h), d, np.uint8) for d, h in enumerate(layers)])
    hashes = np.concatenate(layers)
    order = np.argsort(hashes, kind="stable")
    return Perimeter(depth, hashes[order], distances[order], time.perf_counter() - start)


def _next_layer(puzzle: Puzzle, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct states one quarter turn from ``states``, their hashes, sorted)."""
    children = apply_all_moves(puzzle, states, puzzle.quarter_turns).reshape(-1, puzzle.slots)
    hashes, first = np.unique(state_hashes(children), return_index=True)
    return children[first], hashes


def _member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    index = np.minimum(np.searchsorted(sorted_set, values), len(sorted_set) - 1)
    return sorted_set[index] == values


@cache
def load_perimeter(depth: int = DEFAULT_DEPTH) -> Perimeter:
    """The perimeter of ``depth`` from the table cache, built (and cached) when absent."""
    name = f"cube3-perimeter-{depth}.v{FORMAT_VERSION}"
    cached = read_table(name)
    if cached is not None and cached[0].get("depth") == depth:
        count = cached[0].get("states", -1)
        if len(cached[1]) == count * 9:
            hashes = np.frombuffer(cached[1], dtype=np.uint64, count=count)
            distances = np.frombuffer(cached[1], dtype=np.uint8, offset=count * 8)
            return Perimeter(depth, hashes, distances, 0.0)
    perimeter = build(depth)
    header = {"format": FORMAT_VERSION, "depth": depth, "states": len(perimeter)}
    write_table(name, header, perimeter.hashes.tobytes() + perimeter.distances.tobytes())
    return perimeter


def exact_distance(state: np.ndarray, perimeter: Perimeter, max_forward: int = 5) -> int | None:
    """Optimal quarter-turn distance of one 3x3 batch row, or None if it exceeds
    ``perimeter.depth + max_forward`` (meet in the middle: breadth-first from the state until a
    layer touches the perimeter)."""
    puzzle = Puzzle.cube3()
    layer = state[None]
    for k in range(max_forward + 1):
        inside = perimeter.distance(layer)
        if (inside != OUTSIDE).any():
            return k + int(inside[inside != OUTSIDE].min())
        layer, _ = _next_layer(puzzle, layer)
    return None


def shorten(moves: list[int], perimeter: Perimeter) -> list[int]:
    """The same net turn with every stretch that the perimeter knows a shorter way to make
    replaced by it, largest saving first, until none is left (``moves``: quarter turns)."""
    moves = list(moves)
    while True:
        found = _best_shortcut(moves, perimeter)
        if found is None:
            return moves
        start, end, replacement = found
        moves[start:end] = replacement


def _best_shortcut(moves: list[int], perimeter: Perimeter) -> tuple[int, int, list[int]] | None:
    """(start, end, shorter moves) for the stretch ``moves[start:end]`` whose exact length saves
    the most quarter turns, or None if no stretch can be made shorter."""
    puzzle = Puzzle.cube3()
    n = len(moves)
    axis = {m: k for k, m in enumerate(puzzle.moves)}
    states = solved(puzzle, n)  # row i: the net turn of moves[i:i + span]
    best, best_saving = None, 0
    for span in range(1, n + 1):
        starts = np.arange(n - span + 1)
        states = apply_move(puzzle, states[: len(starts)], np.array([axis[moves[i + span - 1]] for i in starts]))
        distance = perimeter.distance(states)
        saving = np.where(distance == OUTSIDE, 0, span - distance)
        i = int(saving.argmax())
        if saving[i] > best_saving:
            walk = perimeter.finish(states[i])  # from the net turn back to solved: its inverse makes it
            if walk is not None:
                best, best_saving = (i, i + span, inverse_moves(walk)), int(saving[i])
    return best
