"""Solving a scanned cube for the rig: every solver's answer, ranked by the rig's motor time.

A 2x2x2 comes from the exact table. For a 3x3x3, neural A* runs in the
daemon while two-phase (``[solver] fallback``) runs at the same time in a
worker process on another core; the solutions that arrive are planned on
the rig, and the one whose plan is quickest wins: what the user waits for
is motor time, not a move count. Neural A* stops as soon as two-phase has
an answer: a solution it found later would have to save more motor time
than the extra wait, and with the shipped network it does not
(``bench/robot_time.py``). Every candidate,
with its lengths, planned motor time and solve time, goes into the
solution's details for the run record and the dashboard.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor

import solver
from solver.api import Solution
from solver.puzzles.cube.notation import move_length, simplify_moves

from .rig_plan import Rig

log = logging.getLogger(__name__)


def _two_phase_worker_start() -> None:
    """Load the tables and solve one cube, so that the first run's solve is as quick as the later ones."""
    from solver.puzzles.cube.cubie import CubieCube, apply_moves_cubie
    from solver.puzzles.cube.notation import parse_moves
    from solver.search.twophase import prepare, solve_two_phase

    prepare()
    solve_two_phase(apply_moves_cubie(CubieCube.solved(3), parse_moves("R U2 F' L D B2 R' U F2 D'")))


def _two_phase(state: str, budget_s: float) -> tuple[list[int] | None, float]:
    """Runs in the worker process: two-phase moves (or None) and the seconds they took."""
    from solver.puzzles.cube.cubie import from_facelets
    from solver.search.twophase import solve_two_phase

    start = time.perf_counter()
    moves = solve_two_phase(from_facelets(state), budget_s)
    return moves, time.perf_counter() - start


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


def _set_if_answered(done: Future, answered: threading.Event) -> None:
    if not done.cancelled() and done.exception() is None and done.result()[0] is not None:
        answered.set()


class RigSolver:
    """Solves states for one rig with the run settings' solvers; ``close`` ends the worker."""

    def __init__(self, settings, rig: Rig):
        self.settings, self.rig = settings, rig
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

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
        """The quickest solution on the rig among the solvers' answers (``found`` False if none came)."""
        if len(state) != 54:
            return solver.solve(state, self.settings.metric)
        start = time.perf_counter()
        answered = threading.Event()
        pending = self._start_two_phase(state)
        if pending is not None:
            pending.add_done_callback(lambda done: _set_if_answered(done, answered))
        neural = solver.solve(
            state,
            self.settings.metric,
            budget_s=self.settings.solve_budget_s,
            fallback=None,
            stop=answered,
            **self._search_options(),
        )
        candidates = [candidate(self.rig, "neural-astar", neural.moves if neural.found else None, neural.seconds)]
        if pending is not None:
            candidates.append(candidate(self.rig, "two-phase", *self._await(pending)))
        details = dict(neural.details, candidates=[summary for summary, _ in candidates])
        found = [(summary, moves) for summary, moves in candidates if summary["found"]]
        if not found:
            return Solution([], self.settings.metric, time.perf_counter() - start, 3, False, details)
        best, moves = min(found, key=lambda c: (c[0]["planned_s"], c[0]["solve_s"]))
        details["solver"] = best["solver"]
        return Solution(moves, self.settings.metric, time.perf_counter() - start, 3, True, details)

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
        return self._worker().submit(_two_phase, state, self.settings.fallback_budget_s)

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
                    1, mp_context=multiprocessing.get_context("spawn"), initializer=_two_phase_worker_start
                )
            return self._pool


def warm_up_solvers(settings) -> None:
    """Load the solver tables and the network, and run the network once, so that no run pays for it."""
    from solver.puzzles.pocket import model
    from solver.search.astar import EVAL_CHUNK
    from solver.search.heuristic import load_model
    from solver.search.perimeter import DEFAULT_DEPTH, load_perimeter
    from solver.tables.exact import load_table

    load_table(model(settings.metric))
    load_model().warm_up(EVAL_CHUNK)
    perimeter = DEFAULT_DEPTH if settings.solve_perimeter is None else settings.solve_perimeter
    if perimeter:
        load_perimeter(perimeter)
