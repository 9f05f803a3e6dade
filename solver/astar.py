"""Batched weighted A* over 3x3x3 quarter turns, guided by the cost-to-go network.

Each iteration pops the ``batch`` open nodes with the lowest
``f = weight * g + h``, expands all 12 quarter turns, evaluates every new
child in one network call, and merges duplicates through exact state keys,
keeping parent links for the path (DeepCubeA's batch-weighted A*). The
search stops when a solved state is generated or a budget runs out; ties
are broken by insertion order, so a given input always gives the same answer.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass

import numpy as np

from .batch import Puzzle, apply_all_moves, from_cubie, is_solved, state_keys
from .cubie import CubieCube
from .errors import InvalidState

DEFAULT_WEIGHT = 0.6
DEFAULT_BATCH = 200


@dataclass
class SearchResult:
    moves: list[int]          # quarter-turn move ids (see solver.notation), empty if not found
    found: bool
    nodes_generated: int
    iterations: int
    seconds: float
    budget_exhausted: bool


class _Nodes:
    """Growing arrays of the search tree: state, cost so far, parent and the move that led here."""

    def __init__(self, slots: int, capacity: int = 1 << 14):
        self.states = np.zeros((capacity, slots), dtype=np.uint8)
        self.g = np.zeros(capacity, dtype=np.int32)
        self.parent = np.full(capacity, -1, dtype=np.int64)
        self.move = np.full(capacity, -1, dtype=np.int16)
        self.count = 0

    def add(self, states: np.ndarray, g: np.ndarray, parent: np.ndarray, move: np.ndarray) -> np.ndarray:
        n = len(states)
        while self.count + n > len(self.g):
            self._grow()
        ids = np.arange(self.count, self.count + n)
        self.states[ids], self.g[ids], self.parent[ids], self.move[ids] = states, g, parent, move
        self.count += n
        return ids

    def _grow(self) -> None:
        for name in ("states", "g", "parent", "move"):
            old = getattr(self, name)
            new = np.empty((2 * len(old),) + old.shape[1:], dtype=old.dtype)
            new[: len(old)] = old
            setattr(self, name, new)

    def path(self, node: int) -> list[int]:
        moves = []
        while self.parent[node] >= 0:
            moves.append(int(self.move[node]))
            node = int(self.parent[node])
        return moves[::-1]


def _check(weight: float, batch: int, budget_s: float, max_nodes: int) -> None:
    if not weight > 0:
        raise InvalidState(f"weight must be positive, got {weight}")
    if batch < 1:
        raise InvalidState(f"batch must be 1 or more, got {batch}")
    if not budget_s > 0:
        raise InvalidState(f"the time budget must be positive, got {budget_s} s")
    if max_nodes < 1:
        raise InvalidState(f"the node budget must be 1 or more, got {max_nodes}")


def search(cube: CubieCube, heuristic, weight: float = DEFAULT_WEIGHT, batch: int = DEFAULT_BATCH,
           budget_s: float = 60.0, max_nodes: int = 10_000_000) -> SearchResult:
    """Find quarter turns that solve ``cube`` (a valid 3x3 cubie state)."""
    _check(weight, batch, budget_s, max_nodes)
    start = time.perf_counter()
    puzzle = Puzzle.cube3()
    turns = np.array([puzzle.moves[k] for k in puzzle.quarter_turns], dtype=np.int16)
    root = from_cubie(cube)[None]
    nodes = _Nodes(puzzle.slots)
    nodes.add(root, np.zeros(1, np.int32), np.full(1, -1), np.full(1, -1, np.int16))
    if is_solved(puzzle, root)[0]:
        return SearchResult([], True, 1, 0, time.perf_counter() - start, False)
    index = {state_keys(root)[0].tobytes(): 0}
    open_heap = [(float(heuristic(root)[0]), 0, 0)]  # (f, tie, node)
    iterations, tie = 0, 1
    while open_heap:
        if time.perf_counter() - start > budget_s or nodes.count >= max_nodes:
            return SearchResult([], False, nodes.count, iterations, time.perf_counter() - start, True)
        popped = _pop_batch(open_heap, batch)
        iterations += 1
        children = apply_all_moves(puzzle, nodes.states[popped], puzzle.quarter_turns).reshape(-1, puzzle.slots)
        parents = np.repeat(popped, len(turns))
        child_g = nodes.g[parents] + 1
        fresh, keys = _merge_duplicates(children, parents, child_g, turns, nodes, index)
        if not len(fresh):
            continue
        ids = nodes.add(children[fresh], child_g[fresh], parents[fresh], np.tile(turns, len(popped))[fresh])
        index.update(zip((keys[i] for i in fresh), ids.tolist()))
        goal = np.flatnonzero(is_solved(puzzle, children[fresh]))
        if len(goal):
            node = int(ids[goal[0]])
            return SearchResult(nodes.path(node), True, nodes.count, iterations, time.perf_counter() - start, False)
        h = heuristic(children[fresh])
        f = weight * child_g[fresh] + h
        for value, node in zip(f.tolist(), ids.tolist()):
            heapq.heappush(open_heap, (value, tie, node))
            tie += 1
    return SearchResult([], False, nodes.count, iterations, time.perf_counter() - start, False)


def _pop_batch(open_heap: list, batch: int) -> np.ndarray:
    """The ids of up to ``batch`` open nodes with the lowest f."""
    count = min(batch, len(open_heap))
    return np.array([heapq.heappop(open_heap)[2] for _ in range(count)], dtype=np.int64)


def _merge_duplicates(children, parents, child_g, turns, nodes: _Nodes, index: dict) -> tuple[np.ndarray, list]:
    """(indices of children never seen before, every child's key); seen ones reached more cheaply
    get the better parent."""
    keys = [k.tobytes() for k in state_keys(children)]
    fresh, first_in_batch = [], set()
    for i, key in enumerate(keys):
        node = index.get(key)
        if node is None:
            if key not in first_in_batch:
                first_in_batch.add(key)
                fresh.append(i)
            continue
        if child_g[i] < nodes.g[node]:
            nodes.g[node] = child_g[i]
            nodes.parent[node] = parents[i]
            nodes.move[node] = turns[i % len(turns)]
    return np.array(fresh, dtype=np.int64), keys
