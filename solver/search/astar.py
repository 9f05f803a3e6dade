"""Batched weighted A* over 3x3x3 quarter turns, guided by the cost-to-go network.

Each iteration pops the ``batch`` open nodes with the lowest
``f = weight * g + h``, expands all 12 quarter turns, evaluates the new
children with the network (in calls of at most ``EVAL_CHUNK`` states), and
merges duplicates through exact state keys (``solver.search.closed``), keeping parent links for the
path (DeepCubeA's batch-weighted A*).

With a perimeter (``solver.search.perimeter``), a child within its depth of solved
is not searched further: its exact distance completes a candidate solution,
and every other child's estimate is raised to ``depth + 1``, a floor its true
distance is known to reach. The search stops at the end of the first
iteration that finds a candidate (keeping the shortest found in it), or when
a budget runs out (time is checked before every network call, so a search
returns soon after its budget); then any stretch of the solution that the
perimeter knows a shorter way to make is replaced
(``solver.search.perimeter.shorten``). Ties are broken by insertion order, so a
given input always gives the same answer.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidState
from ..puzzles.cube.batch import Puzzle, apply_all_moves, from_cubie, is_solved, state_keys
from ..puzzles.cube.cubie import CubieCube
from .closed import EMPTY, ClosedSet
from .perimeter import OUTSIDE, Perimeter, shorten

DEFAULT_WEIGHT = 0.05  # chosen with bench/cube3_sweep.py on random states (see docs/solver.md)
DEFAULT_BATCH = 1000
DEFAULT_BUDGET_S = 1.0  # the one time budget of the daemon, the CLI and solver.solve (a config may raise it)
# States per network call: bounds its memory and how late a budget is noticed. The first layer sums 20
# embedding rows per state through a chunk x 20 x 384 array; at 256 states that stays nearer the caches,
# and 12,288 states took 25% less time than in chunks of 1,024 on one thread, 12% less on two.
EVAL_CHUNK = 256


@dataclass
class SearchResult:
    moves: list[int]  # quarter-turn move ids (see solver.puzzles.cube.notation), empty if not found
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


class _Open:
    """The open list: a heap on (f, insertion order)."""

    def __init__(self):
        self.heap: list[tuple[float, int, int]] = []
        self.tie = 0

    def push(self, f: np.ndarray, ids: np.ndarray) -> None:
        heap, push = self.heap, heapq.heappush
        for entry in zip(f.tolist(), range(self.tie, self.tie + len(ids)), ids.tolist()):
            push(heap, entry)
        self.tie += len(ids)

    def pop(self, batch: int) -> np.ndarray:
        """The ids of up to ``batch`` open nodes with the lowest f."""
        count = min(batch, len(self.heap))
        return np.array([heapq.heappop(self.heap)[2] for _ in range(count)], dtype=np.int64)


def estimate_in_chunks(heuristic, states: np.ndarray, time_is_up: Callable[[], bool] | None = None) -> np.ndarray:
    """The heuristic of ``states`` in calls of at most ``EVAL_CHUNK`` states: the memory the network holds
    for a call grows with the call (about 58 kB a state). With ``time_is_up``, each call is made only while
    it says no (else ``_OutOfTime``)."""
    out = np.empty(len(states), dtype=np.float32)
    for low in range(0, len(states), EVAL_CHUNK):
        if time_is_up is not None and time_is_up():
            raise _OutOfTime
        out[low : low + EVAL_CHUNK] = heuristic(states[low : low + EVAL_CHUNK])
    return out


class _OutOfTime(Exception):
    """The time budget ran out in the middle of an iteration."""


class _Search:
    """One search's tree, open list and best candidate solution."""

    def __init__(self, heuristic, perimeter: Perimeter | None, weight: float, deadline: float, stop=None):
        self.heuristic, self.perimeter, self.weight, self.deadline = heuristic, perimeter, weight, deadline
        self.stop = stop  # a threading.Event another thread may set to end the search early
        self.puzzle = Puzzle.cube3()
        self.turns = np.array([self.puzzle.moves[k] for k in self.puzzle.quarter_turns], dtype=np.int16)
        self.floor = perimeter.depth + 1 if perimeter else 1  # least distance of a state outside
        self.nodes = _Nodes(self.puzzle.slots)
        self.closed = ClosedSet()
        self.open = _Open()
        self.best: tuple[int, list[int]] | None = None  # (length, moves) of the best candidate

    def goal_distance(self, states: np.ndarray) -> np.ndarray:
        """Exact distance of states inside the perimeter (or solved ones without it), else OUTSIDE."""
        if self.perimeter is not None:
            return self.perimeter.distance(states)
        return np.where(is_solved(self.puzzle, states), 0, OUTSIDE).astype(np.int16)

    def add(self, states: np.ndarray, g: np.ndarray, parents: np.ndarray, moves: np.ndarray) -> None:
        """Record new nodes: those inside the perimeter become candidates, the rest open nodes."""
        ids = self.nodes.add(states, g, parents, moves)
        distance = self.goal_distance(states)
        inside = distance != OUTSIDE
        for i in np.flatnonzero(inside):
            self.offer(int(ids[i]), int(g[i] + distance[i]))
        outside = ~inside
        if outside.any():
            h = np.maximum(self.estimate(states[outside]), self.floor)
            self.open.push(self.weight * g[outside] + h, ids[outside])

    def time_is_up(self) -> bool:
        """The time budget is spent, or another thread asked the search to stop."""
        return time.perf_counter() > self.deadline or (self.stop is not None and self.stop.is_set())

    def estimate(self, states: np.ndarray) -> np.ndarray:
        """The heuristic in chunks (``estimate_in_chunks``), each only while time is left."""
        return estimate_in_chunks(self.heuristic, states, self.time_is_up)

    def offer(self, node: int, length: int) -> None:
        if self.best is not None and length >= self.best[0]:
            return
        tail = self.perimeter.finish(self.nodes.states[node]) if self.perimeter is not None else []
        if tail is not None:
            self.best = (length, self.nodes.path(node) + tail)

    def expand(self, popped: np.ndarray) -> None:
        children = apply_all_moves(self.puzzle, self.nodes.states[popped], self.puzzle.quarter_turns)
        children = children.reshape(-1, self.puzzle.slots)
        parents = np.repeat(popped, len(self.turns))
        child_g = self.nodes.g[parents] + 1
        moves = np.tile(self.turns, len(popped))
        fresh = _merge_duplicates(children, parents, child_g, moves, self.nodes, self.closed)
        if len(fresh):
            self.add(children[fresh], child_g[fresh], parents[fresh], moves[fresh])


def _check(weight: float, batch: int, budget_s: float, max_nodes: int) -> None:
    if not weight > 0:
        raise InvalidState(f"weight must be positive, got {weight}")
    if batch < 1:
        raise InvalidState(f"batch must be 1 or more, got {batch}")
    if not budget_s > 0:
        raise InvalidState(f"the time budget must be positive, got {budget_s} s")
    if max_nodes < 1:
        raise InvalidState(f"the node budget must be 1 or more, got {max_nodes}")


def search(
    cube: CubieCube,
    heuristic,
    weight: float = DEFAULT_WEIGHT,
    batch: int = DEFAULT_BATCH,
    budget_s: float = DEFAULT_BUDGET_S,
    max_nodes: int = 10_000_000,
    perimeter: Perimeter | None = None,
    stop=None,
) -> SearchResult:
    """Find quarter turns that solve ``cube`` (a valid 3x3 cubie state).

    ``stop``: an optional ``threading.Event``; once set, the search ends as
    if its time budget had run out (another solver has answered).
    """
    _check(weight, batch, budget_s, max_nodes)
    start = time.perf_counter()
    run = _Search(heuristic, perimeter, weight, start + budget_s, stop)
    root = from_cubie(cube)[None]
    run.closed.add_batch(state_keys(root), 0)
    iterations, exhausted = 0, False
    try:
        run.add(root, np.zeros(1, np.int32), np.full(1, -1), np.full(1, -1, np.int16))
        while run.best is None and run.open.heap:
            if run.time_is_up() or run.nodes.count >= max_nodes:
                exhausted = True
                break
            run.expand(run.open.pop(batch))
            iterations += 1
    except _OutOfTime:
        exhausted = True
    moves = run.best[1] if run.best else []
    if perimeter is not None:
        moves = shorten(moves, perimeter)
    return SearchResult(
        moves, run.best is not None, run.nodes.count, iterations, time.perf_counter() - start, exhausted
    )


def _merge_duplicates(children, parents, child_g, moves, nodes: _Nodes, closed: ClosedSet) -> np.ndarray:
    """The indices of the children never seen before, entered in ``closed`` under the node ids they will
    get (the next ones, in order); a node seen before and now reached more cheaply takes the first of its
    cheapest new parents."""
    fresh, seen = closed.add_batch(state_keys(children), nodes.count)
    again = np.flatnonzero(seen != EMPTY)
    node = seen[again]
    better = child_g[again] < nodes.g[node]
    again, node = again[better], node[better]
    if len(again):
        order = np.lexsort((again, child_g[again], node))
        first = order[np.unique(node[order], return_index=True)[1]]
        pick, target = again[first], node[first]
        nodes.g[target], nodes.parent[target], nodes.move[target] = child_g[pick], parents[pick], moves[pick]
    return fresh
