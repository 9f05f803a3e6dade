"""Splicing quicker ways into a 3x3x3 solution while the robot is already executing it.

The robot starts at once on the first answer. Meanwhile searches look for a
way from a point a few commands ahead of the robot, either to solved (a
completion) or to a later point of the plan (a window, the rest kept), that
takes less motor time than what the plan holds there, and splice it in, but
only while the robot has not yet begun the command at that point: what it
has begun stays as it is. A plan is kept as the rig's commands (each with its
moves, motor time and the solver that found it), so that what the robot
executes, and which solver produced each move, can be shown.

The rig is known only through ``plan`` (moves -> the rig's commands as
(moves, seconds) pairs) and ``started`` (how many moves the robot has
begun), so this module holds no rig code. The daemon passes its rig's
planner and no ``started``: its motion ``take``s each command from the
plan as it hands it to the board, and what was taken counts as begun; the
commands taken ahead of the one turning are its ``lead_s``. A bench passes
the rig's planned pace as ``started``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..puzzles.cube.cubie import CubieCube, apply_moves_cubie
from ..puzzles.cube.notation import format_moves, inverse_moves, move_length

RigPlan = Callable[[Sequence[int]], list[tuple[tuple[int, ...], float]]]
MARGIN_S = 0.05  # time kept between a search's end and the robot reaching its cut
IMPROVEMENT_S = 0.005  # a splice must save at least this much motor time
IDLE_S = 0.02  # how often a refiner with nothing new to try looks at the robot's progress again


@dataclass(frozen=True)
class Command:
    moves: tuple[int, ...]
    seconds: float
    source: str  # the solver whose answer holds this command


@dataclass(frozen=True)
class Found:
    """A search's way from command ``cut`` of the plan it was given to command ``end`` (None: to solved)."""

    source: str
    cut: int
    prefix: list[int]  # the plan's moves before the cut when the search began
    moves: list[int]
    seconds: float  # search wall time
    end: int | None = None
    suffix: tuple[int, ...] = ()  # the plan's moves from ``end`` on when the search began (kept as they are)


def moves_of(commands: Sequence[Command]) -> list[int]:
    """The moves of ``commands``, in order."""
    return [m for command in commands for m in command.moves]


class SplicedPlan:
    """The commands the robot executes; completions replace the part it has not begun."""

    def __init__(self, moves: Sequence[int], source: str, plan: RigPlan, started: Callable[[], int] | None = None):
        self._plan = plan
        self._started = started if started is not None else self._moves_taken
        self._lock = threading.Lock()
        self.commands = self._commands(moves, source)
        self.splices: list[dict] = []
        self.taken = 0  # commands handed to the robot (``take``)
        self.lead_s = 0.0  # how far ahead of the robot commands are taken, in planned seconds
        self.on_splice: Callable[[], None] | None = None  # told after each splice

    def _moves_taken(self) -> int:
        return sum(len(command.moves) for command in self.commands[: self.taken])

    def take(self) -> Command | None:
        """The next command for the robot, from now on out of reach of any splice (None: the plan is done)."""
        with self._lock:
            if self.taken >= len(self.commands):
                return None
            self.taken += 1
            return self.commands[self.taken - 1]

    def _commands(self, moves: Sequence[int], source: str) -> list[Command]:
        return [Command(tuple(group), seconds, source) for group, seconds in self._plan(moves)]

    @property
    def moves(self) -> list[int]:
        return moves_of(self.commands)

    @property
    def motor_s(self) -> float:
        return sum(command.seconds for command in self.commands)

    def starts_s(self) -> list[float]:
        """When each command begins, in planned seconds after the robot's start."""
        starts, elapsed = [], 0.0
        for command in self.commands:
            starts.append(elapsed)
            elapsed += command.seconds
        return starts

    def moves_begun_by(self, elapsed_s: float) -> int:
        """Moves of the commands a robot keeping the planned pace has begun ``elapsed_s`` after its start."""
        commands, begun, start = self.commands, 0, 0.0
        for command in commands:
            if start > elapsed_s:
                break
            begun += len(command.moves)
            start += command.seconds
        return begun

    def moves_before(self, cut: int) -> list[int]:
        return moves_of(self.commands[:cut])

    def moves_from(self, end: int) -> tuple[int, ...]:
        return tuple(moves_of(self.commands[end:]))

    def splice(self, found: Found) -> bool:
        """Put ``found`` in place of the commands from its cut up to its end, if they take longer, the robot
        has not begun the one at the cut, and the plan still holds what it held before the cut and after the
        end; True if it did."""
        with self._lock:
            spliced = self._splice(found)
        if spliced and self.on_splice is not None:
            self.on_splice()
        return spliced

    def _splice(self, found: Found) -> bool:
        end = len(self.commands) if found.end is None else found.end
        if self.moves_before(found.cut) != found.prefix or self._started() > len(found.prefix):
            return False
        if end > len(self.commands) or self.moves_from(end) != found.suffix:
            return False
        way = self._commands(found.moves, found.source)
        old = sum(c.seconds for c in self.commands[found.cut : end])
        new = sum(c.seconds for c in way)
        if new > old - IMPROVEMENT_S:
            return False
        self.commands = self.commands[: found.cut] + way + self.commands[end:]
        self.splices.append(
            {
                "solver": found.source,
                "from_move": len(found.prefix),
                "to_move": len(found.prefix) + len(found.moves),
                "saved_s": round(old - new, 3),
                "search_s": round(found.seconds, 3),
            }
        )
        return True

    def segments(self) -> list[dict]:
        """Consecutive moves by the solver that found them: what the run record shows."""
        out: list[dict] = []
        for command in self.commands:
            if out and out[-1]["solver"] == command.source:
                out[-1]["moves"].extend(command.moves)
                out[-1]["planned_s"] += command.seconds
            else:
                out.append({"solver": command.source, "moves": list(command.moves), "planned_s": command.seconds})
        for segment in out:
            moves = segment["moves"]
            segment.update(moves=format_moves(moves), htm=move_length(moves, "htm"), qtm=move_length(moves, "qtm"))
            segment["planned_s"] = round(segment["planned_s"], 3)
        return out


Span = tuple[int, int | None]  # (cut, end): commands from the cut up to the end (None: the plan's end)


class TailSearch:
    """One kind of search the refiner runs: how long it may take, and which part of the plan it may replace."""

    name: str = ""
    budget_s: float = 0.2
    late_s: float = 0.0  # how much later than its budget this search has been answering (a running mean)

    def cut(self, plan: SplicedPlan, elapsed_s: float) -> int | None:
        """The first command the robot reaches after this search would end (None: none left)."""
        ready = elapsed_s + plan.lead_s + self.budget_s + self.late_s + MARGIN_S
        return next((index for index, start in enumerate(plan.starts_s()) if start >= ready), None)

    def spans(self, plan: SplicedPlan, elapsed_s: float) -> list[Span]:
        """The parts of the plan to search a quicker way through, first choice first (none: nothing left);
        by default the whole rest from the cut."""
        cut = self.cut(plan, elapsed_s)
        return [] if cut is None else [(cut, None)]

    def start(self, cube: CubieCube) -> Callable[[], list[int] | None]:
        """Begin searching for moves that solve ``cube``; the result comes from the returned call (which may
        wait). A span that ends before the plan does is searched as the cube its part of the plan solves."""
        raise NotImplementedError

    def took(self, budget_s: float, seconds: float) -> None:
        self.late_s = 0.5 * self.late_s + 0.5 * max(0.0, seconds - budget_s)


def refine(
    cube: CubieCube,
    plan: SplicedPlan,
    searches: Sequence[TailSearch],
    started_at: float,
    stop: threading.Event | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> None:
    """Run each of ``searches`` in a thread of its own, from points ahead of the robot, and splice what
    they find, until none has a point left ahead of the robot or ``stop`` is set."""
    stop = stop or threading.Event()
    threads = [
        threading.Thread(target=_search_loop, args=(cube, plan, search, started_at, stop, clock), daemon=True)
        for search in searches[1:]
    ]
    for thread in threads:
        thread.start()
    try:
        if searches:
            _search_loop(cube, plan, searches[0], started_at, stop, clock)
    finally:
        for thread in threads:
            thread.join()


def _search_loop(
    cube: CubieCube,
    plan: SplicedPlan,
    search: TailSearch,
    started_at: float,
    stop: threading.Event,
    clock: Callable[[], float],
) -> None:
    tried: set[tuple[Span, tuple[int, ...]]] = set()  # the same part of the same plan
    while not stop.is_set():
        spans = search.spans(plan, clock() - started_at)
        if not spans:
            return
        commands = plan.commands  # a splice puts a new list in place, so this one stays as it is
        moves_now = tuple(moves_of(commands))
        span = next((span for span in spans if (span, moves_now) not in tried), None)
        if span is None:
            time.sleep(IDLE_S)  # nothing new to try: wait for the robot to move on
            continue
        tried.add((span, moves_now))
        prefix, part, suffix = _split(commands, span)
        begun, budget = clock(), search.budget_s
        start = apply_moves_cubie(cube, prefix) if span[1] is None else _solved_by(part)
        found = search.start(start)()
        search.took(budget, clock() - begun)
        if found is not None:
            plan.splice(Found(search.name, span[0], prefix, found, clock() - begun, span[1], suffix))


def _split(commands: list[Command], span: Span) -> tuple[list[int], list[int], tuple[int, ...]]:
    """The moves before a span, in it and after it."""
    cut, end = span
    end = len(commands) if end is None else end
    return moves_of(commands[:cut]), moves_of(commands[cut:end]), tuple(moves_of(commands[end:]))


def _solved_by(moves: list[int]) -> CubieCube:
    """The cube that ``moves`` solve: a way through a span is a way to solve it."""
    return apply_moves_cubie(CubieCube.solved(3), inverse_moves(moves))
