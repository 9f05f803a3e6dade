"""A puzzle as a move graph over all its states: the one adapter between research code and the solver's tables.

Every experiment sees a puzzle as a ``StateGraph``: a successor array
``next_state[state, move]`` over the puzzle's state indices, the exact
(breadth-first) distance of every state and the solved index. The
experiments reach the 2x2x2's model and the solver's table builder only
through this module (``pocket_graph``, ``from_coordinates``, ``time_bfs``),
so when those move, this is the one file to change.

The 2x2x2 is numbered as in ``solver.puzzles.pocket`` (3,674,160 states, the
DLB corner fixed) and its distances come from the solver's own breadth-first
search (``solver.tables.exact.bfs_codes``); nothing here searches.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..puzzles.pocket import model as pocket_model
from ..tables.exact import Coordinates, bfs_codes, coordinates


@dataclass(frozen=True, eq=False)
class StateGraph:
    """All states of a puzzle and its moves; every move has its inverse among the moves."""

    name: str
    next_state: np.ndarray  # (states, moves) int32: the state after each move
    distance: np.ndarray  # (states,) uint8: exact moves to solved
    solved: int
    move_names: tuple[str, ...]
    bfs_s: float = 0.0  # seconds the distances took to build

    @property
    def states(self) -> int:
        return len(self.next_state)

    @property
    def moves(self) -> int:
        return self.next_state.shape[1]

    def optimal(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Whether each action leads one move closer to solved."""
        return self.distance[self.next_state[states, actions]] == self.distance[states].astype(np.int16) - 1


def from_coordinates(name: str, coords: Coordinates, move_names: tuple[str, ...]) -> StateGraph:
    """The graph of a puzzle's table coordinates, with distances from the solver's breadth-first search."""
    start = time.perf_counter()
    distance = bfs_codes(coords) >> 4
    bfs_s = time.perf_counter() - start
    everyone = np.arange(coords.states, dtype=np.int64)
    next_state = np.empty((coords.states, coords.moves), dtype=np.int32)
    for move in range(coords.moves):
        next_state[:, move] = coords.neighbours(everyone, move)
    return StateGraph(name, next_state, distance, coords.solved, move_names, bfs_s)


def torus(rows: int, cols: int) -> StateGraph:
    """A toy puzzle for checks: a grid wrapped both ways, moves one step up, down, left or right.

    Its distances are known in closed form (no search): the wrapped row
    offset plus the wrapped column offset from the solved corner (0, 0).
    """
    r, c = np.divmod(np.arange(rows * cols), cols)
    steps = [((r - 1) % rows, c), ((r + 1) % rows, c), (r, (c - 1) % cols), (r, (c + 1) % cols)]
    next_state = np.stack([a * cols + b for a, b in steps], axis=1).astype(np.int32)
    distance = (np.minimum(r, rows - r) + np.minimum(c, cols - c)).astype(np.uint8)
    return StateGraph(f"{rows}x{cols} torus", next_state, distance, 0, ("up", "down", "left", "right"))


@lru_cache(maxsize=2)
def pocket_graph(metric: str = "qtm") -> StateGraph:
    """The 2x2x2 in a metric (QTM: U U' R R' F F', as in the papers; HTM adds the half turns)."""
    model = pocket_model(metric)
    return from_coordinates(f"2x2x2 {metric.upper()}", coordinates(model), model.move_names)


def time_bfs(metric: str = "qtm") -> float:
    """Seconds the solver's breadth-first search takes over all 2x2x2 states (move tables already made)."""
    coords = coordinates(pocket_model(metric))
    start = time.perf_counter()
    bfs_codes(coords)
    return time.perf_counter() - start
