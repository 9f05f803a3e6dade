"""Solving a scanned cube for the rig: the solvers' answers, ranked by the rig's motor time.

A 2x2x2 comes from the exact table. For a 3x3x3, two-phase (``[solver]
fallback``) answers first, in a worker process: the solution of least
motor time on the rig (``rig.planned_s``) it finds in ``FIRST_ANSWER_S``.
What the user waits for is solve time plus motor time, not a move count.
Neural A* solves the cube only when two-phase gives no answer (see
``RigSolver.solve``). Every candidate, with its lengths, planned motor time
and solve time, goes into the solution's details for the run record and
the dashboard.

The robot need not wait for a better answer: ``spliced_plan`` and
``refine`` (driven by ``robot.live_plan``) keep searching while it executes
the first one, two-phase in the worker from a few commands ahead (a longer
budget each round) and the rig-time neural A* (``solver.search.rig_astar``)
through windows of 7 commands ahead of the robot, and splice in any way
that saves motor time before the robot gets there (``solver.search.splice``);
the plan's ``segments`` tell which solver found which moves.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor

import solver
from solver.api import Solution
from solver.puzzles.cube.cubie import CubieCube, from_facelets, to_facelets
from solver.puzzles.cube.notation import move_length, simplify_moves
from solver.search.rig_metric import DEFAULT_RIG_DEPTH, Commands, PlannedS, RigPerimeter
from solver.search.splice import SplicedPlan, TailSearch, refine

from .rig_plan import Rig
from .worker_guard import exit_with_parent

log = logging.getLogger(__name__)

REFINE_BUDGETS_S = (0.15, 0.3, 0.6, 1.0)  # two-phase's budget in the refiner's successive rounds
# Two-phase's first answer is the solution of least motor time it finds in this long (bench/robot_time.py).
FIRST_ANSWER_S = 0.05
# Solutions up to this many moves longer than the shortest found are weighed too: with opposite faces
# turning together, a longer solution may take less motor time.
COST_SLACK = 1


def _two_phase_worker_start(cost: PlannedS) -> None:
    """Load the tables and solve one cube weighed by the rig's ``cost``, so that the first run's solve is as
    quick as the later ones (the cost's modules are imported here, as it arrives, not in the first run)."""
    exit_with_parent()  # not left running when the daemon is killed
    from solver.puzzles.cube.cubie import CubieCube, apply_moves_cubie
    from solver.puzzles.cube.notation import parse_moves
    from solver.search.twophase import prepare, solve_two_phase

    prepare()
    scrambled = apply_moves_cubie(CubieCube.solved(3), parse_moves("R U2 F' L D B2 R' U F2 D'"))
    solve_two_phase(scrambled, FIRST_ANSWER_S, 0, cost, COST_SLACK)


def _two_phase(state: str, budget_s: float, first_s: float, cost: PlannedS) -> tuple[list[int] | None, float]:
    """Runs in the worker process: the two-phase moves of least ``cost`` (the rig's motor time) found
    in ``first_s`` (or None), and the seconds they took. With none at all by then (a busy
    machine), the first of any length within ``budget_s``."""
    from solver.puzzles.cube.cubie import from_facelets
    from solver.search.twophase import solve_two_phase

    start = time.perf_counter()
    moves = _two_phase_quickest(state, min(budget_s, first_s), cost)
    left = budget_s - (time.perf_counter() - start)
    if moves is None and left > 0:
        moves = solve_two_phase(from_facelets(state), left)
    return moves, time.perf_counter() - start


def _two_phase_quickest(state: str, budget_s: float, cost: PlannedS) -> list[int] | None:
    """Runs in the worker process: the two-phase solution of least ``cost`` found within the whole budget."""
    from solver.puzzles.cube.cubie import from_facelets
    from solver.search.twophase import solve_two_phase

    return solve_two_phase(from_facelets(state), budget_s, 0, cost, COST_SLACK)


class _TwoPhaseTail(TailSearch):
    """Two-phase in the worker as a refiner's search, with a longer budget each round."""

    name = "two-phase"

    def __init__(
        self, worker: Callable[[], ProcessPoolExecutor], cost: PlannedS, budgets: Sequence[float] = REFINE_BUDGETS_S
    ):
        self._worker, self._cost, self._budgets = worker, cost, list(budgets)
        self.budget_s = self._budgets[0]

    def start(self, cube: CubieCube) -> Callable[[], list[int] | None]:
        budget = self.budget_s
        self.budget_s = self._budgets[min(self._budgets.index(budget) + 1, len(self._budgets) - 1)]
        try:
            pending = self._worker().submit(_two_phase_quickest, to_facelets(cube), budget, self._cost)
        except RuntimeError:  # the worker was shut down: the plan stays as it is
            return lambda: None
        return lambda: _result_or_none(pending, budget + 5)


def _result_or_none(pending: Future, timeout_s: float) -> list[int] | None:
    try:
        return pending.result(timeout=timeout_s)
    except Exception as error:  # noqa: BLE001 - a refinement that fails leaves the plan as it is
        log.warning("a two-phase refinement gave no answer (%s: %s)", type(error).__name__, error)
        return None


def candidate(rig: Rig, name: str, moves: list[int] | None, seconds: float) -> tuple[dict, list[int]]:
    """(what the run record shows of one solver's answer, its moves); ``moves`` None: it found none."""
    found = moves is not None
    moves = simplify_moves(moves) if moves is not None else []
    summary = {
        "solver": name,
        "found": found,
        "htm": move_length(moves, "htm"),
        "qtm": move_length(moves, "qtm"),
        "planned_s": round(rig.planned_s(moves), 3) if found else None,
        "solve_s": round(seconds, 3),
    }
    return summary, moves


class RigSolver:
    """Solves states for one rig with the run settings' solvers; ``close`` ends the worker."""

    def __init__(self, settings, rig: Rig):
        self.settings, self.rig = settings, rig
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._rig_perimeter: RigPerimeter | None = None  # built on first use (see prepare_refiner)
        self.rig_depth = DEFAULT_RIG_DEPTH  # commands the rig perimeter covers
        self.first_answer_s = FIRST_ANSWER_S
        self.refine_budgets_s = REFINE_BUDGETS_S

    @property
    def _runs_two_phase(self) -> bool:
        return self.settings.solve_fallback == "two-phase"

    def prepare(self) -> None:
        """Start the two-phase worker and load its tables now, so that no run waits for them."""
        if not self._runs_two_phase:
            return
        try:
            self._worker().submit(int).result()
        except Exception as error:  # noqa: BLE001 - the daemon still solves with A* alone
            log.warning(
                "the two-phase worker did not start (%s: %s); each run tries it again", type(error).__name__, error
            )
            self.close()

    def worker_pid(self) -> int | None:
        """Process id of the two-phase worker, if it runs (for memory figures)."""
        with self._lock:
            pool = self._pool
        return pool.submit(os.getpid).result() if pool is not None else None

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = None

    def solve(self, state: str) -> Solution:
        """The quickest solution on the rig among the solvers' answers (``found`` False if none came).

        With two-phase in the worker, its answer is awaited alone: neural A* with the shipped network
        answers a random cube in seconds, not in the tenth of a second two-phase takes, and racing it
        would only slow two-phase down on a small board. It searches from where two-phase has brought
        the robot instead (``refine``). Without an answer from two-phase, neural A* solves the cube.
        """
        if len(state) != 54:
            return solver.solve(state, self.settings.metric)
        start = time.perf_counter()
        candidates = []
        pending = self._start_two_phase(state)
        if pending is not None:
            candidates.append(candidate(self.rig, "two-phase", *self._await(pending)))
        details: dict = {}
        if not any(summary["found"] for summary, _ in candidates):
            neural = solver.solve(
                state,
                self.settings.metric,
                budget_s=self.settings.solve_budget_s,
                fallback=None,
                **self._search_options(),
            )
            details = dict(neural.details)
            candidates.append(
                candidate(self.rig, "neural-astar", neural.moves if neural.found else None, neural.seconds)
            )
        details["candidates"] = [summary for summary, _ in candidates]
        found = [(summary, moves) for summary, moves in candidates if summary["found"]]
        if not found:
            return Solution([], self.settings.metric, time.perf_counter() - start, 3, False, details)
        best, moves = min(found, key=lambda c: (c[0]["planned_s"], c[0]["solve_s"]))
        details["solver"] = best["solver"]
        return Solution(moves, self.settings.metric, time.perf_counter() - start, 3, True, details)

    def spliced_plan(self, solution: Solution, started: Callable[[], int] | None = None) -> SplicedPlan:
        """The rig's commands for ``solution``, to refine while the robot executes them; ``started``
        tells how many moves the robot has begun (None: the moves of the commands ``take``n)."""
        plan = lambda moves: [(command.moves, command.seconds) for command in self.rig.plan(moves)]  # noqa: E731
        source = solution.details.get("solver") or ("pocket-table" if solution.puzzle == 2 else "neural-astar")
        return SplicedPlan(solution.moves, source, plan, started)

    def refine(self, state: str, plan: SplicedPlan, started_at: float, stop: threading.Event | None = None) -> None:
        """Splice quicker completions into ``plan`` while the robot executes it (begun at ``started_at``,
        ``time.perf_counter()``), until the robot is too near the end or ``stop`` is set; a 3x3x3 only."""
        if len(state) != 54 or not plan.commands:
            return
        refine(from_facelets(state), plan, self._tail_searches(), started_at, stop)

    def _tail_searches(self) -> list[TailSearch]:
        searches: list[TailSearch] = [self._rig_shortcut()]
        if self._runs_two_phase:
            searches.insert(0, _TwoPhaseTail(self._worker, self.rig.planned_s, self.refine_budgets_s))
        return searches

    def prepare_refiner(self) -> RigPerimeter:
        """The rig's commands and their perimeter for the rig-time neural A*, made once (0.1 s at the default depth)."""
        with self._lock:
            if self._rig_perimeter is None:
                self._rig_perimeter = RigPerimeter(Commands.of_rig(self.rig.planned_s), self.rig_depth)
            return self._rig_perimeter

    def _rig_shortcut(self) -> TailSearch:
        from solver.search.heuristic import load_heuristic
        from solver.search.rig_astar import RigShortcut

        perimeter = self.prepare_refiner()
        return RigShortcut(perimeter.commands, perimeter, load_heuristic())

    def _search_options(self) -> dict:
        options = {
            "weight": self.settings.solve_weight,
            "batch": self.settings.solve_batch,
            "perimeter": self.settings.solve_perimeter,
        }
        return {key: value for key, value in options.items() if value is not None}

    def _start_two_phase(self, state: str) -> Future | None:
        if not self._runs_two_phase:
            return None
        return self._worker().submit(
            _two_phase, state, self.settings.fallback_budget_s, self.first_answer_s, self.rig.planned_s
        )

    def _await(self, pending: Future) -> tuple[list[int] | None, float]:
        """The worker's answer; a worker that died or hangs counts as no answer (A*'s stands)."""
        try:
            return pending.result(timeout=self.settings.fallback_budget_s + 10)
        except Exception as error:  # noqa: BLE001 - a broken worker must not lose A*'s answer
            log.warning(
                "the two-phase worker gave no answer (%s: %s); it is restarted for the next run",
                type(error).__name__,
                error,
            )
            self.close()
            return None, self.settings.fallback_budget_s

    def _worker(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                # spawn, not fork: the daemon has threads (the web server, onnxruntime) a fork would copy
                self._pool = ProcessPoolExecutor(
                    1,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_two_phase_worker_start,
                    initargs=(self.rig.planned_s,),
                )
            return self._pool


def _log_two_phase_loops() -> None:
    """Say whether two-phase runs compiled (its first answer decides the robot's first commands)."""
    from solver.search.twophase import native

    if native.library() is not None:
        log.info("two-phase search: %s", native.status())
    else:
        log.warning("two-phase search runs in Python, several times slower per answer: %s", native.status())


def _log_closed_set_loops() -> None:
    """Compile (first time on a machine) or load the neural A*'s closed-set loops now, not within the budget
    of the first search, and say which it runs."""
    from solver.search import closed

    if closed.COMPILED.library() is not None:
        log.info("neural A* closed set: %s", closed.COMPILED.status())
    else:
        log.info("neural A* closed set probes in numpy: %s", closed.COMPILED.status())


def warm_up_solvers(settings) -> None:
    """Load the solver tables and the network, and run the network once, so that no run pays for it."""
    from solver.puzzles.pocket import model
    from solver.search.heuristic import load_model
    from solver.search.perimeter import DEFAULT_DEPTH, load_perimeter
    from solver.search.tree import EVAL_CHUNK
    from solver.tables.exact import load_table

    load_table(model(settings.metric))
    if settings.solve_fallback == "two-phase":
        _log_two_phase_loops()
    load_model().warm_up(EVAL_CHUNK)
    _log_closed_set_loops()
    perimeter = DEFAULT_DEPTH if settings.solve_perimeter is None else settings.solve_perimeter
    if perimeter:
        load_perimeter(perimeter)
