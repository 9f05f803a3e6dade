"""Neural A* in a rig's own time metric: the least motor time from a 3x3x3 state, not the fewest moves.

The actions are the rig's commands (``rig_metric.Commands``: single turns
and opposite faces together), the cost so far is their motor time, and the
cost to go is the network's estimate in quarter turns scaled to motor time,
never below what the rig perimeter proves (a state outside it needs at
least ``depth + 1`` commands). A child inside the rig perimeter completes a
candidate with its exact least motor time; the search ends when no open
node can beat the best candidate under the estimate, or at its budget.
Meant for states a dozen moves or fewer from solved, where it finishes in
tens of milliseconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from ..puzzles.cube.batch import Puzzle, from_cubie, state_key_bytes
from ..puzzles.cube.cubie import CubieCube
from .open_list import OpenList
from .rig_metric import NOT_WITHIN, Commands, RigPerimeter
from .splice import Span, SplicedPlan, TailSearch
from .tree import ChildEstimates, Nodes, estimate_in_chunks

# An estimate in quarter turns becomes motor time at this many times the
# rig's cheapest rate per quarter turn (a half-turn pair): near solved the
# network is close to exact, and real solutions pair few turns.
ESTIMATE_SCALE = 1.4
MIN_WINDOW = 4  # commands: the rig perimeter already holds the quickest way through three
# Commands per window. Through 7 the search answers within 0.3 s nine times in ten (median 0.07 s), through
# 8 seven in ten and through 9 one in nine (today's network, windows of two-phase's first answers; see
# docs/solver.md); 5 answers at once but seldom finds better, and trying 8 as well found no more.
WINDOWS = (7,)
NOT_SEEN = float("inf")  # the motor time of a state not reached yet
REQUEUE = 0.5  # quarter turns; see RigSearch


class RigSearch:
    """One search's tree and open list.

    With a per-child network (``CostToGo.per_child``) a popped node is evaluated once, and its 12
    quarter-turn children's estimates give every command's child one: exact for a quarter turn, and for a
    command of k quarter turns the best of its first quarter turns' children less k - 1, a floor under a
    consistent estimate. A node whose own estimate (1 + its best child's) then proves more than
    ``REQUEUE`` quarter turns above the one it was queued with goes back into the open list once.
    """

    def __init__(self, commands: Commands, perimeter: RigPerimeter, heuristic):
        self.commands, self.perimeter, self.heuristic = commands, perimeter, heuristic
        self.first_turns, self.more_turns = first_quarter_turns(commands)
        quarter_turns = self.more_turns + 1
        self.ms_per_quarter = float((commands.ms / quarter_turns).min()) * ESTIMATE_SCALE
        self.floor_ms = (perimeter.depth + 1) * int(commands.ms.min())
        self.nodes = Nodes(Puzzle.cube3().slots)
        self.seen: dict[bytes, int] = {}
        self.open = OpenList()
        per_child = getattr(heuristic, "per_child", False)
        self.children = ChildEstimates(self.nodes, heuristic.children) if per_child else None
        self.best: tuple[int, int, np.ndarray] | None = None  # (total ms, node, perimeter state)

    def add(self, states: np.ndarray, parents: np.ndarray, commands: np.ndarray, g: np.ndarray, qt=None) -> None:
        """Record the children not reached as cheaply before; ``qt``: their quarter-turn estimates where the
        parents' evaluation gave them, else the network is asked here."""
        seen, fresh = self.seen, []
        for i, (key, cost) in enumerate(zip(state_key_bytes(states), g.tolist())):
            if seen.get(key, NOT_SEEN) > cost:
                seen[key] = cost
                fresh.append(i)
        if not fresh:
            return
        states, parents, commands, g = states[fresh], parents[fresh], commands[fresh], g[fresh]
        ids = self.nodes.add(states, g, parents, commands)
        left = self.perimeter.lookup(states)
        inside = left != NOT_WITHIN
        for i in np.flatnonzero(inside).tolist():
            total = int(g[i] + left[i])
            if self.best is None or total < self.best[0]:
                self.best = (total, int(ids[i]), states[i])
        outside = np.flatnonzero(~inside)
        if len(outside):
            qt = estimate_in_chunks(self.heuristic, states[outside]) if qt is None else qt[fresh][outside]
            h = np.maximum(qt * self.ms_per_quarter, self.floor_ms)
            self.nodes.h[ids[outside]] = h
            self.open.push(self.priority(ids[outside], h), ids[outside])

    def expand(self, popped: np.ndarray) -> None:
        child_qt = None
        if self.children is not None:
            child_qt = self.children.of(popped)
            own = np.maximum((1.0 + child_qt.min(axis=1)) * self.ms_per_quarter, self.floor_ms)
            margin = REQUEUE * self.ms_per_quarter
            popped, child_qt = self.children.requeue_underestimated(
                popped, child_qt, own, margin, self.open, self.priority
            )
        nodes = self.nodes
        last_axes = np.where(nodes.move[popped] >= 0, self.commands.axes[nodes.move[popped]], -1).astype(np.int8)
        parent, command, children = self.commands.expand(nodes.states[popped], last_axes)
        qt = None
        if child_qt is not None:
            starts = np.where(self.first_turns[command], child_qt[parent], -np.inf).max(axis=1)
            qt = starts - self.more_turns[command]
        g = nodes.g[popped[parent]].astype(np.int64) + self.commands.ms[command]
        self.add(children, popped[parent], command, g, qt)

    def priority(self, nodes: np.ndarray, h: np.ndarray) -> np.ndarray:
        """f of open nodes with the estimates ``h`` (ms)."""
        return self.nodes.g[nodes] + h

    def path(self, node: int) -> list[int]:
        return [m for c in self.nodes.path(node) for m in self.commands.moves[c]]


def first_quarter_turns(commands: Commands) -> tuple[np.ndarray, np.ndarray]:
    """(commands, 12) bool: the quarter turns (in ``Puzzle.quarter_turns`` order) a command can begin
    with, its faces commuting and a half turn begun either way; (commands,): its quarter turns less one."""
    quarter_turns = Puzzle.cube3().quarter_turns
    first = np.zeros((len(commands.moves), len(quarter_turns)), dtype=bool)
    more = np.zeros(len(commands.moves), dtype=np.int64)
    for c, moves in enumerate(commands.moves):
        for move in moves:
            half = move % 3 == 1
            for turn in (move - 1, move + 1) if half else (move,):
                first[c, quarter_turns.index(turn)] = True
            more[c] += 2 if half else 1
    return first, more - 1


def rig_search(
    state: np.ndarray,
    commands: Commands,
    perimeter: RigPerimeter,
    heuristic,
    budget_s: float,
    batch: int = 50,
) -> list[int] | None:
    """Moves solving one batch row in the least motor time the search finds, or None within ``budget_s``."""
    deadline = time.perf_counter() + budget_s
    run = RigSearch(commands, perimeter, heuristic)
    run.add(state[None], np.full(1, -1), np.full(1, -1), np.zeros(1, np.int64))
    while len(run.open) and time.perf_counter() < deadline:
        if run.best is not None and run.open.lowest() >= run.best[0]:
            break
        run.expand(run.open.pop(batch))
    if run.best is None:
        return None
    tail = perimeter.finish(run.best[2])
    return None if tail is None else run.path(run.best[1]) + tail


class RigShortcut(TailSearch):
    """The rig-time neural A* as a refiner's search: a quicker way through a few commands of the plan.

    Two-phase's solutions are quickest near their ends but not always in
    between (where phase 1 hands over to phase 2, or a search stopped
    early), so the search sweeps windows of each length in ``windows``
    from the first command the robot leaves time for towards the end; the
    last ones end at solved.
    """

    name = "neural-astar"

    def __init__(
        self,
        commands: Commands,
        perimeter: RigPerimeter,
        heuristic,
        budget_s: float = 0.3,
        windows: tuple[int, ...] = WINDOWS,
    ):
        self.commands, self.perimeter, self.heuristic = commands, perimeter, heuristic
        self.budget_s, self.windows = budget_s, windows

    def spans(self, plan: SplicedPlan, elapsed_s: float) -> list[Span]:
        cut = self.cut(plan, elapsed_s)
        if cut is None:
            return []
        count = len(plan.commands)
        spans: list[Span] = []
        for start in range(cut, max(cut, count - MIN_WINDOW) + 1):
            for window in self.windows:
                span = (start, None if start + window >= count else start + window)
                if span not in spans:
                    spans.append(span)
        return spans

    def start(self, cube: CubieCube) -> Callable[[], list[int] | None]:
        moves = rig_search(from_cubie(cube), self.commands, self.perimeter, self.heuristic, self.budget_s)
        return lambda: moves
