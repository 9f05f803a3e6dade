"""What the 3x3x3 A* searches share: the search tree's arrays, the network called in chunks, and a
per-child network's estimates of popped nodes' children with the requeueing they allow."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

# States per network call: bounds its memory and how late a budget is noticed. The first layer sums 20
# embedding rows per state through a chunk x 20 x 384 array; at 256 states that stays nearer the caches,
# and 12,288 states took 25% less time than in chunks of 1,024 on one thread, 12% less on two.
EVAL_CHUNK = 256


class Nodes:
    """Growing arrays of a search tree: state, cost so far, parent, the move (or command) that led here and
    the estimate the node was queued with."""

    def __init__(self, slots: int, capacity: int = 1 << 14):
        self.states = np.zeros((capacity, slots), dtype=np.uint8)
        self.g = np.zeros(capacity, dtype=np.int32)
        self.parent = np.full(capacity, -1, dtype=np.int64)
        self.move = np.full(capacity, -1, dtype=np.int16)
        self.h = np.zeros(capacity, dtype=np.float32)  # the estimate the node was queued with
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
        for name in ("states", "g", "parent", "move", "h"):
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


def estimate_in_chunks(heuristic, states: np.ndarray, time_is_up: Callable[[], bool] | None = None) -> np.ndarray:
    """``heuristic(states)`` in calls of at most ``EVAL_CHUNK`` states: the memory the network holds
    for a call grows with the call (about 58 kB a state). With ``time_is_up``, each call is made only while
    it says no (else ``OutOfTime``)."""
    parts = []
    for low in range(0, len(states), EVAL_CHUNK):
        if time_is_up is not None and time_is_up():
            raise OutOfTime
        parts.append(heuristic(states[low : low + EVAL_CHUNK]))
    return np.concatenate(parts) if parts else heuristic(states[:0])


class OutOfTime(Exception):
    """The time budget ran out in the middle of an iteration."""


class ChildEstimates:
    """A per-child network's estimates of popped nodes' children (Q* search), each node evaluated once.

    The evaluation also gives a popped node's own estimate, 1 + its best child's: one step deeper than the
    one it was queued with. A node whose own estimate proves higher by more than a margin can go back into
    the open list once (``requeue_underestimated``); its children's estimates are kept for its next pop.
    A popped node's queued estimate (``Nodes.h``) is set to -1, which marks it.
    """

    def __init__(self, nodes: Nodes, children: Callable[[np.ndarray], np.ndarray], time_is_up=None):
        self.nodes, self.children, self.time_is_up = nodes, children, time_is_up
        self.kept: dict[int, np.ndarray] = {}  # requeued nodes' child estimates, until they are expanded

    def of(self, popped: np.ndarray) -> np.ndarray:
        """(len(popped), 12): the estimate of each node's quarter-turn children."""
        known = self.nodes.h[popped] < 0  # popped before: requeued
        out = np.empty((len(popped), 12), dtype=np.float32)
        out[~known] = estimate_in_chunks(self.children, self.nodes.states[popped[~known]], self.time_is_up)
        for k in np.flatnonzero(known).tolist():
            out[k] = self.kept.pop(int(popped[k]))
        return out

    def requeue_underestimated(
        self,
        popped: np.ndarray,
        child_h: np.ndarray,
        own: np.ndarray,
        margin: float,
        open_list,
        priority: Callable[[np.ndarray, np.ndarray], np.ndarray],
    ) -> tuple[np.ndarray, np.ndarray]:
        """Put back the popped nodes popped for the first time whose ``own`` estimate exceeds the queued one
        by more than ``margin``, at ``priority(nodes, own)``; returns (the others, their child estimates)."""
        queued = self.nodes.h[popped]
        back = (queued >= 0) & (own > queued + margin)
        self.nodes.h[popped] = -1.0
        if back.any():
            nodes = popped[back]
            self.kept.update(zip(nodes.tolist(), child_h[back].copy()))  # not views that hold all of child_h
            open_list.push(priority(nodes, own[back]), nodes)
        return popped[~back], child_h[~back]
