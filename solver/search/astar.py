"""Batched weighted A* over 3x3x3 quarter turns, guided by the cost-to-go network.

Each iteration pops the ``batch`` open nodes with the lowest
``f = weight * g + h``, expands all 12 quarter turns, evaluates the new
children with the network (in calls of at most ``EVAL_CHUNK`` states), and
merges duplicates through exact state keys (``solver.search.closed``), keeping parent links for the
path (DeepCubeA's batch-weighted A*).

With a per-child network (``CostToGo.per_child``) the popped nodes are evaluated instead, once each, and the
network's estimates of their 12 children are the children's (Q* search); a popped node whose own estimate then
proves higher than the one it was queued with goes back into the open list once (``requeue``).

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

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidState
from ..puzzles.cube.batch import Puzzle, apply_all_moves, from_cubie, is_solved, state_keys
from ..puzzles.cube.cubie import CubieCube
from .closed import EMPTY, ClosedSet
from .open_list import OpenList
from .perimeter import OUTSIDE, Perimeter, shorten
from .tree import ChildEstimates, Nodes, OutOfTime, estimate_in_chunks

DEFAULT_WEIGHT = 0.3  # chosen with bench/cube3_sweep.py on random states of its own seed (see docs/solver.md)
DEFAULT_BATCH = 1000
DEFAULT_BUDGET_S = 1.0  # the one time budget of the daemon, the CLI and solver.solve (a config may raise it)
# With a per-child network a popped node's children are estimated before it is expanded, which gives its own
# estimate as 1 + its best child's: one step deeper than the one it was queued with, at no extra cost.
DEFAULT_REQUEUE = 0.5
MAX_NODES = 1 << 30  # node ids are kept in 32 bits (solver.search.closed)


@dataclass
class SearchResult:
    moves: list[int]  # quarter-turn move ids (see solver.puzzles.cube.notation), empty if not found
    found: bool
    nodes_generated: int
    iterations: int
    seconds: float
    budget_exhausted: bool


class _Search:
    """One search's tree, open list and best candidate solution."""

    def __init__(self, heuristic, perimeter: Perimeter | None, weight: float, deadline: float, stop=None, requeue=None):
        self.heuristic, self.perimeter, self.weight = heuristic, perimeter, weight
        # A function of its own, not a method: ChildEstimates keeps it, and a bound method would make a
        # reference cycle that keeps a finished search's arrays alive until the next full collection.
        self.time_is_up = _time_check(deadline, stop)
        self.requeue = requeue  # see ``search``
        self.puzzle = Puzzle.cube3()
        self.turns = np.array([self.puzzle.moves[k] for k in self.puzzle.quarter_turns], dtype=np.int16)
        self.floor = perimeter.depth + 1 if perimeter else 1  # least distance of a state outside
        self.nodes = Nodes(self.puzzle.slots)
        self.closed = ClosedSet()
        self.open = OpenList()
        per_child = getattr(heuristic, "per_child", False)
        self.children = ChildEstimates(self.nodes, heuristic.children, self.time_is_up) if per_child else None
        self.best: tuple[int, list[int]] | None = None  # (length, moves) of the best candidate

    def goal_distance(self, states: np.ndarray) -> np.ndarray:
        """Exact distance of states inside the perimeter (or solved ones without it), else OUTSIDE."""
        if self.perimeter is not None:
            return self.perimeter.distance(states)
        return np.where(is_solved(self.puzzle, states), 0, OUTSIDE).astype(np.int16)

    def add(
        self, states: np.ndarray, g: np.ndarray, parents: np.ndarray, moves: np.ndarray, h: np.ndarray | None = None
    ) -> None:
        """Record new nodes: those inside the perimeter become candidates, the rest open nodes (with the
        estimates ``h`` when their parents' evaluation gave them, else evaluated here)."""
        ids = self.nodes.add(states, g, parents, moves)
        distance = self.goal_distance(states)
        inside = distance != OUTSIDE
        for i in np.flatnonzero(inside):
            self.offer(int(ids[i]), int(g[i] + distance[i]))
        outside = ~inside
        if outside.any():
            h = np.maximum(self.estimate(states[outside]) if h is None else h[outside], self.floor)
            self.nodes.h[ids[outside]] = h
            self.open.push(self.priority(ids[outside], h), ids[outside])

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
        child_h = None
        if self.children is not None:
            child_h = self.children.of(popped)
            if self.requeue is not None:
                own = np.maximum(1.0 + child_h.min(axis=1), self.floor)
                popped, child_h = self.children.requeue_underestimated(
                    popped, child_h, own, self.requeue, self.open, self.priority
                )
        children = apply_all_moves(self.puzzle, self.nodes.states[popped], self.puzzle.quarter_turns)
        children = children.reshape(-1, self.puzzle.slots)
        parents = np.repeat(popped, len(self.turns))
        child_g = self.nodes.g[parents] + 1
        moves = np.tile(self.turns, len(popped))
        fresh = _merge_duplicates(children, parents, child_g, moves, self.nodes, self.closed)
        if len(fresh):
            h = None if child_h is None else child_h.reshape(-1)[fresh]
            self.add(children[fresh], child_g[fresh], parents[fresh], moves[fresh], h)

    def priority(self, nodes: np.ndarray, h: np.ndarray) -> np.ndarray:
        """f of open nodes with the estimates ``h``."""
        return self.weight * self.nodes.g[nodes] + h


def _time_check(deadline: float, stop) -> Callable[[], bool]:
    """Whether the time budget is spent, or another thread asked the search to stop (``stop``, a
    threading.Event, may be None)."""

    def time_is_up() -> bool:
        return time.perf_counter() > deadline or (stop is not None and stop.is_set())

    return time_is_up


def _check(weight: float, batch: int, budget_s: float, max_nodes: int, requeue: float | None) -> None:
    if requeue is not None and not requeue >= 0:
        raise InvalidState(f"the requeue margin must be 0 or more (or None), got {requeue}")
    if not weight > 0:
        raise InvalidState(f"weight must be positive, got {weight}")
    if batch < 1:
        raise InvalidState(f"batch must be 1 or more, got {batch}")
    if not budget_s > 0:
        raise InvalidState(f"the time budget must be positive, got {budget_s} s")
    if not 1 <= max_nodes <= MAX_NODES:
        raise InvalidState(f"the node budget must be 1 to {MAX_NODES:,}, got {max_nodes:,}")


def search(
    cube: CubieCube,
    heuristic,
    weight: float = DEFAULT_WEIGHT,
    batch: int = DEFAULT_BATCH,
    budget_s: float = DEFAULT_BUDGET_S,
    max_nodes: int = 10_000_000,
    perimeter: Perimeter | None = None,
    stop=None,
    requeue: float | None = DEFAULT_REQUEUE,
) -> SearchResult:
    """Find quarter turns that solve ``cube`` (a valid 3x3 cubie state).

    ``stop``: an optional ``threading.Event``; once set, the search ends as
    if its time budget had run out (another solver has answered).
    ``requeue`` (with a per-child heuristic only): a popped node whose own
    estimate, 1 + its best child's, exceeds the one it was queued with by
    more than this goes back into the open list once instead of being
    expanded (None: never).
    """
    _check(weight, batch, budget_s, max_nodes, requeue)
    start = time.perf_counter()
    run = _Search(heuristic, perimeter, weight, start + budget_s, stop, requeue)
    root = from_cubie(cube)[None]
    run.closed.add_batch(state_keys(root), 0)
    iterations, exhausted = 0, False
    try:
        run.add(root, np.zeros(1, np.int32), np.full(1, -1), np.full(1, -1, np.int16))
        while run.best is None and len(run.open):
            if run.time_is_up() or run.nodes.count >= max_nodes:
                exhausted = True
                break
            run.expand(run.open.pop(batch))
            iterations += 1
    except OutOfTime:
        exhausted = True
    moves = run.best[1] if run.best else []
    if perimeter is not None:
        moves = shorten(moves, perimeter)
    return SearchResult(
        moves, run.best is not None, run.nodes.count, iterations, time.perf_counter() - start, exhausted
    )


def _merge_duplicates(children, parents, child_g, moves, nodes: Nodes, closed: ClosedSet) -> np.ndarray:
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
