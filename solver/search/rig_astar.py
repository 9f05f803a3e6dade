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

import heapq
import itertools
import time
from collections.abc import Callable

import numpy as np

from ..puzzles.cube.batch import from_cubie, state_key_bytes
from ..puzzles.cube.cubie import CubieCube
from .astar import estimate_in_chunks
from .rig_metric import NOT_WITHIN, Commands, RigPerimeter
from .splice import Span, SplicedPlan, TailSearch

# An estimate in quarter turns becomes motor time at this many times the
# rig's cheapest rate per quarter turn (a half-turn pair): near solved the
# network is close to exact, and real solutions pair few turns.
ESTIMATE_SCALE = 1.4
MIN_WINDOW = 4  # commands: the rig perimeter already holds the quickest way through three
# Commands per window. Through 7 the search answers within 0.3 s about two times in three, through 9 hardly
# ever (today's network); 5 answers at once but seldom finds better, and trying it too slows the sweep.
WINDOWS = (7,)
NOT_SEEN = float("inf")  # the motor time of a state not reached yet


class RigSearch:
    """One search's tree and open list."""

    def __init__(self, commands: Commands, perimeter: RigPerimeter, heuristic):
        self.commands, self.perimeter, self.heuristic = commands, perimeter, heuristic
        quarter_turns = np.array([sum(2 if m % 3 == 1 else 1 for m in c) for c in commands.moves])
        self.ms_per_quarter = float((commands.ms / quarter_turns).min()) * ESTIMATE_SCALE
        self.floor_ms = (perimeter.depth + 1) * int(commands.ms.min())
        self.states: list[np.ndarray] = []
        self.parent: list[int] = []
        self.command: list[int] = []
        self.g: list[int] = []
        self.axis: list[int] = []
        self.seen: dict[bytes, int] = {}
        self.open: list[tuple[float, int, int]] = []
        self.tie = itertools.count()
        self.best: tuple[int, int, np.ndarray] | None = None  # (total ms, node, perimeter state)

    def add(self, states: np.ndarray, parents: np.ndarray, commands: np.ndarray, g: np.ndarray) -> None:
        seen, fresh = self.seen, []
        for i, (key, cost) in enumerate(zip(state_key_bytes(states), g.tolist())):
            if seen.get(key, NOT_SEEN) > cost:
                seen[key] = cost
                fresh.append(i)
        if not fresh:
            return
        states, parents, commands, g = states[fresh], parents[fresh], commands[fresh], g[fresh]
        first = len(self.g)
        self.states.extend(states)
        self.parent.extend(parents.tolist())
        self.command.extend(commands.tolist())
        self.g.extend(g.tolist())
        self.axis.extend(np.where(commands >= 0, self.commands.axes[commands], -1).tolist())
        left = self.perimeter.lookup(states)
        inside = left != NOT_WITHIN
        for i in np.flatnonzero(inside).tolist():
            total = int(g[i] + left[i])
            if self.best is None or total < self.best[0]:
                self.best = (total, first + i, states[i])
        outside = np.flatnonzero(~inside)
        if len(outside):
            h = np.maximum(estimate_in_chunks(self.heuristic, states[outside]) * self.ms_per_quarter, self.floor_ms)
            for i, f in zip(outside.tolist(), (g[outside] + h).tolist()):
                heapq.heappush(self.open, (f, next(self.tie), first + i))

    def path(self, node: int) -> list[int]:
        commands = []
        while self.parent[node] >= 0:
            commands.append(self.command[node])
            node = self.parent[node]
        return [m for c in reversed(commands) for m in self.commands.moves[c]]


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
    while run.open and time.perf_counter() < deadline:
        if run.best is not None and run.open[0][0] >= run.best[0]:
            break
        popped = [heapq.heappop(run.open)[2] for _ in range(min(batch, len(run.open)))]
        nodes = np.array(popped)
        rows = np.array([run.states[n] for n in popped])
        parent, command, children = commands.expand(rows, np.array([run.axis[n] for n in popped], np.int8))
        g = np.array(run.g, dtype=np.int64)[nodes[parent]] + commands.ms[command]
        run.add(children, nodes[parent], command, g)
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
