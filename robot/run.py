"""The run state machine: scan, solve, plan, execute, verify — one run at a time.

    idle -> scanning -> solving -> executing -> verifying -> done
                 any step -> error | stopped

The runner owns the rig while a run is active. Each step runs on a worker
thread with a timeout; the run's own thread only waits, so a stop request
(from any thread) ends the run at once: it sends the emergency stop to the
motion layer first, then the run is recorded as ``stopped``. Every
transition, the scan, the solution and each executed command are events on
the bus; the history records all of them.

Between runs, ``jog`` moves one thing (a face turn, a servo op) for a
builder checking the rig, and ``rig_action`` does one of the motion's rig
actions (home, motors on/off, reconnect). Neither is a run: they get no run
id and no history row, only a ``jog`` or ``rig`` event. Runs, jogs and rig
actions exclude each other, and a stop halts any of them.

A stop is never forgotten by the motion starting: the runner ``arm``s the
motion once, as it starts a run, jog or rig action (before anything checks
its stop flag), and from an e-stop on the motion refuses to move
(``Stopped``) until the next one starts. So a Stop pressed after the worker
last looked at the flag, but before the motion began, still ends the run
without a turn; and a reconnect or motors-on from the dashboard after a
stop starts a new operation, so it is not refused.
"""

from __future__ import annotations

import concurrent.futures
import functools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import solver
from solver.api import DEFAULT_FALLBACK, DEFAULT_FALLBACK_BUDGET_S
from solver.puzzles.cube.notation import move_length
from solver.search.astar import DEFAULT_BUDGET_S

from .errors import RobotError, Stopped
from .events import EventBus
from .history import History
from .live_plan import LivePlan
from .rig_plan import PlannedStep, Rig, estimate_s
from .six_axis import SixAxisRig
from .solving import RigSolver

log = logging.getLogger("robotd")

PHASES = ("idle", "scanning", "solving", "executing", "verifying", "done", "error", "stopped")
_POLL_S = 0.01
_JOG_STOP_WAIT_S = 5.0  # after an e-stop, how long a given-up jog may take to notice it
_RIG_ACTION_S = 60.0  # a reconnect waits for a board that resets when its port opens, then homes


@dataclass
class ScanResult:
    """A reconstructed cube: facelet string (face letters), a confidence per sticker, and (when the
    scanner remembers its scans) the scan's id and the stickers read with low confidence."""

    state: str
    confidence: list[float] = field(default_factory=list)
    scan_id: int | None = None
    doubtful: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # e.g. colours drifted from the calibration
    retakes: list[dict] = field(default_factory=list)  # images taken again at another exposure


class ScanRefused(Exception):
    """The vision would not trust a scan (retried like any scan failure): the stickers in doubt, the scan's id."""

    def __init__(self, message: str, stickers: tuple[str, ...] = (), scan_id: int | None = None):
        super().__init__(message)
        self.stickers, self.scan_id = tuple(stickers), scan_id


class Scanner(Protocol):
    def scan(self) -> ScanResult: ...


class Motion(Protocol):
    # Any: the steps of the rig this motion drives (MotorCommand for six axes, RigStep for flip/spin)
    def arm(self) -> None:
        """A new operation (run, jog, rig action) starts: moves are allowed again until the next ``estop``."""

    def run_plan(self, plan: Sequence[Any], on_done: Callable[[int], None]) -> None: ...

    def estop(self) -> None: ...


class Jogging(Protocol):
    """A motion that can also do one move on its own (``LinkMotion``, ``ServoMotion``)."""

    def jog(self, command: str) -> None: ...

    def jog_commands(self) -> list[str]: ...


@dataclass(frozen=True)
class RunSettings:
    """How a run behaves; read from ``[run]`` and ``[solver]`` of the config."""

    verify: bool = True
    scan_retries: int = 2
    scan_timeout_s: float = 20.0
    solve_budget_s: float = DEFAULT_BUDGET_S
    solve_weight: float | None = None
    solve_batch: int | None = None
    solve_perimeter: int | None = None
    solve_fallback: str | None = DEFAULT_FALLBACK
    fallback_budget_s: float = DEFAULT_FALLBACK_BUDGET_S
    metric: str = "htm"
    execute_margin_s: float = 10.0
    execute_factor: float = 2.0


def is_solved(state: str) -> bool:
    """True when every face shows a single colour."""
    n = 9 if len(state) == 54 else 4
    return all(len(set(state[i : i + n])) == 1 for i in range(0, len(state), n))


class Runner:
    """Drives runs on one rig; ``start`` returns at once, ``run`` blocks until the run ends."""

    def __init__(
        self,
        scanner: Scanner,
        motion: Motion,
        rig: Rig,
        history: History,
        bus: EventBus,
        settings: RunSettings = RunSettings(),
        keep_refused: Callable[[int, int | None], Path | None] | None = None,
        why_unsolved: Callable[[], str | None] | None = None,
    ):
        self.scanner, self.motion, self.rig = scanner, motion, rig
        self.why_unsolved = why_unsolved  # what else robotd knows when a verification fails (robotd --rig-only)
        self.solving = RigSolver(settings, rig)
        self.history, self.bus, self.settings = history, bus, settings
        self.keep_refused = keep_refused  # (run id, scan id) -> the folder a refused scan was kept in
        self.phase = "idle"
        self.run_id: int | None = None
        self.progress: dict = {}
        self.jogging: str | None = None  # the jog's command, or the rig action, under way
        self._doing = ""  # the same in words: "a jog (R')", "the rig action home"
        self._stop = threading.Event()
        self._stop_reason = "stop requested"
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._steps = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="robotd-step")
        bus.subscribe(self._record_event)

    def _record_event(self, event: dict) -> None:
        if event["run_id"] is not None:
            self.history.add_event(event["run_id"], event["kind"], event["data"], event["t"])

    @property
    def busy(self) -> bool:
        return self.phase in ("scanning", "solving", "executing", "verifying")

    def start(self, prepare: Callable[[], dict] | None = None, mode: str = "rig") -> int:
        """Begin a run on a background thread; ``prepare`` (e.g. a simulator scramble) runs first."""
        with self._lock:
            if self.busy:
                raise RobotError(f"a run is already in progress (run {self.run_id}, {self.phase})")
            if self.jogging is not None:
                raise RobotError(f"{self._doing} is in progress: start the run once it has ended")
            self._stop.clear()
            self.motion.arm()
            self.run_id = self.history.start_run(mode=mode)
            self.progress = {"started_at": time.time(), "steps": {}}
            self._set_phase("scanning")
        self._thread = threading.Thread(target=self._run, args=(self.run_id, prepare), name="robotd-run", daemon=True)
        self._thread.start()
        return self.run_id

    def run(self, prepare: Callable[[], dict] | None = None, mode: str = "rig") -> dict:
        """Do one complete run and return its summary."""
        run_id = self.start(prepare, mode)
        if self._thread is not None:  # start() has just started it
            self._thread.join()
        return self.summary(run_id)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the current run's thread; True when it has ended."""
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    def stop(self, reason: str = "stop requested") -> None:
        """Halt at once from any thread: emergency stop first, then the run (or jog) ends as ``stopped``."""
        jogging = self.jogging
        self._stop_reason = reason
        self._stop.set()
        if self.busy:
            self.motion.estop()
            self.bus.publish("stop_requested", self.run_id, reason=reason)
        elif jogging is not None:
            self.motion.estop()
            self.bus.publish("stop_requested", None, reason=reason, jog=jogging)

    def jog_commands(self) -> list[str]:
        """What ``jog`` accepts, in the order a dashboard shows them; empty when the motion cannot jog."""
        commands = getattr(self.motion, "jog_commands", None)
        return list(commands()) if commands is not None else []

    def jog(self, command: str) -> dict:
        """Do one move between runs (``Jogging.jog``); blocks until it is done, then publishes a ``jog`` event."""
        jog = getattr(self.motion, "jog", None)
        if jog is None:
            raise RobotError("this rig's motion cannot jog")
        _, seconds = self._between_runs(
            command, f"a jog ({command})", lambda: jog(command), self.settings.execute_margin_s, "jog", command=command
        )
        return {"command": command, "outcome": "done", "seconds": seconds}

    def rig_actions(self) -> list[str]:
        """The rig actions the motion can do (``home``, ``motors``, ``reconnect``); empty when it has none."""
        actions = getattr(self.motion, "rig_actions", None)
        return list(actions()) if actions is not None else []

    @property
    def motors_on(self) -> bool | None:
        """Whether the motors (servos) are energised; None when the motion does not say."""
        return getattr(self.motion, "motors_on", None)

    def rig_action(self, action: str, call: Callable[[], str]) -> dict:
        """Do one rig action between runs; ``call`` does it on the motion and says what it did in words.

        Blocks until it is done, then publishes a ``rig`` event; refused like a jog while anything else moves.
        """
        message, seconds = self._between_runs(
            action, f"the rig action {action}", call, _RIG_ACTION_S, "rig", action=action
        )
        return {"action": action, "outcome": "done", "seconds": seconds, "message": message}

    def _between_runs(
        self, label: str, doing: str, call: Callable, timeout_s: float, kind: str, **about
    ) -> tuple[object, float]:
        """``call`` on a step worker with the rig claimed; its result and the seconds it took. Publishes ``kind``
        with ``about``, the outcome and (on success, the result; else the error) the message."""
        self._claim_between_runs(label, doing)
        started, outcome, message, result = time.perf_counter(), "error", None, None
        try:
            result = self._on_step_worker(call, doing, timeout_s)
            outcome = "done"
        except RobotError as error:
            if not (isinstance(error, Stopped) or self._stop.is_set()):
                message = str(error)
                raise
            outcome, message = "stopped", f"stopped: {self._stop_reason}"  # not the link's own words for it
            raise Stopped(message) from None
        except Exception as error:  # reported like a run's unexpected failure, never a bare 500
            message = f"internal error: {type(error).__name__}: {error}"
            raise RobotError(message) from None
        finally:
            seconds = round(time.perf_counter() - started, 4)
            self.bus.publish(
                kind, None, **about, outcome=outcome, message=result if outcome == "done" else message, seconds=seconds
            )
            with self._lock:
                self.jogging = None
        return result, seconds

    def _claim_between_runs(self, label: str, doing: str) -> None:
        with self._lock:
            if self.busy:
                raise RobotError(f"a run is in progress (run {self.run_id}, {self.phase}): stop it first")
            if self.jogging is not None:
                raise RobotError(f"{self._doing} is in progress: wait until it has ended")
            self._stop.clear()
            self.motion.arm()
            self.jogging, self._doing = label, doing

    def _on_step_worker(self, call: Callable, doing: str, timeout_s: float):
        """``call`` on a step worker; given up on (stop, timeout), the motors are stopped before it returns."""
        future = self._steps.submit(call)
        try:
            return self._await(future, doing, timeout_s)
        finally:
            if not future.done():
                self.motion.estop()
                concurrent.futures.wait([future], timeout=_JOG_STOP_WAIT_S)

    def status(self) -> dict:
        return {"phase": self.phase, "run_id": self.run_id, "progress": dict(self.progress), "jogging": self.jogging}

    def summary(self, run_id: int) -> dict:
        run = self.history.get_run(run_id) or {}
        run.pop("events", None)
        return run

    def close(self) -> None:
        self.stop("daemon shutting down")
        self.wait(5)
        self._steps.shutdown(wait=False, cancel_futures=True)
        self.solving.close()

    def _set_phase(self, phase: str) -> None:
        previous, self.phase = self.phase, phase
        self.bus.publish("phase", self.run_id, phase=phase, previous=previous)

    def _step(self, name: str, call: Callable, timeout_s: float, moves: bool = False):
        """Run one step of the run on a worker thread and add its time to the run's progress. A step that
        ``moves`` the motors and is given up on while it still runs stops them again (``_on_step_worker``)."""
        started = time.perf_counter()
        try:
            if moves:
                return self._on_step_worker(call, name, timeout_s)
            return self._await(self._steps.submit(call), name, timeout_s)
        finally:
            steps = self.progress["steps"]
            steps[name] = round(steps.get(name, 0.0) + time.perf_counter() - started, 4)

    def _await(self, future: concurrent.futures.Future, name: str, timeout_s: float):
        """The result of work on a step worker, honouring the stop flag and the timeout."""
        started = time.perf_counter()
        while True:
            self._raise_if_stopped()
            try:
                return future.result(timeout=_POLL_S)
            except concurrent.futures.TimeoutError:
                if time.perf_counter() - started > timeout_s:
                    raise RobotError(f"{name} took longer than its {timeout_s:.1f} s timeout") from None

    def _raise_if_stopped(self) -> None:
        if self._stop.is_set():
            raise Stopped(f"stopped: {self._stop_reason}")

    def _run(self, run_id: int, prepare: Callable[[], dict] | None) -> None:
        outcome, message = "done", None
        try:
            if prepare is not None:
                prepared = prepare() or {}
                self.history.update_run(run_id, seed=prepared.get("seed"))
                self.bus.publish("prepared", run_id, **prepared)
            self._scan_solve_execute(run_id)
        except Stopped:
            outcome, message = "stopped", f"stopped: {self._stop_reason}"
        except (RobotError, solver.InvalidState) as error:
            outcome, message = "error", str(error)
        except Exception as error:  # an unexpected failure still ends the run cleanly and is recorded
            outcome, message = "error", f"internal error: {type(error).__name__}: {error}"
        if self._stop.is_set() and outcome == "error":
            outcome, message = "stopped", f"stopped: {self._stop_reason}"
        self.history.finish_run(
            run_id,
            outcome,
            message,
            step_durations=self.progress["steps"],
            actual_s=self.progress["steps"].get("executing"),
        )
        if message:
            self.bus.publish("error" if outcome == "error" else "stopped", run_id, message=message)
        self._set_phase(outcome)

    def _scan_solve_execute(self, run_id: int) -> None:
        square = getattr(self.motion, "square_before_run", None)
        if square is not None:  # a face a stop left part-way would spoil the scan and jam the turns
            started = time.perf_counter()
            turned = self._step("scanning", square, _RIG_ACTION_S, moves=True)
            if turned:
                seconds = round(time.perf_counter() - started, 4)
                self.bus.publish("rig", run_id, action="square faces", outcome="done", message=turned, seconds=seconds)
        scan = self._scan_with_retries(run_id)
        self.history.update_run(run_id, puzzle=3 if len(scan.state) == 54 else 2, scanned_state=scan.state)
        self._set_phase("solving")
        solution = self._step(
            "solving",
            lambda: self._solve(scan.state),
            self.settings.solve_budget_s + self.settings.fallback_budget_s + 10,
        )
        plan = self.rig.plan(solution.moves)
        estimated = estimate_s(plan)
        self.history.update_run(
            run_id,
            solver=_solver_name(solution),
            solver_params=solution.details,
            solution=solution.text,
            length_htm=move_length(solution.moves, "htm"),
            length_qtm=move_length(solution.moves, "qtm"),
            estimated_s=estimated,
        )
        self.bus.publish(
            "solution",
            run_id,
            moves=solution.text,
            htm=move_length(solution.moves, "htm"),
            qtm=move_length(solution.moves, "qtm"),
            seconds=round(solution.seconds, 4),
            commands=[c.text for c in plan],
            estimated_s=round(estimated, 3),
            solver=_solver_name(solution),
            candidates=solution.details.get("candidates", []),
        )
        self.progress.update(total_moves=len(solution.moves), done_moves=0, estimated_s=estimated, state=scan.state)
        if plan:
            self._set_phase("executing")
            timeout = estimated * self.settings.execute_factor + self.settings.execute_margin_s
            execute = functools.partial(self._execute_saying_where, run_id, scan.state, solution, plan)
            self._step("executing", execute, timeout, moves=True)
        if self.settings.verify and plan:
            self._set_phase("verifying")
            check = self._scan_with_retries(run_id, phase="verifying")
            self.bus.publish("verified", run_id, state=check.state, solved=is_solved(check.state))
            if not is_solved(check.state):
                why = self.why_unsolved() if self.why_unsolved is not None else None
                raise RobotError(
                    f"the cube is not solved after executing the solution; the re-scan reads {check.state}"
                    + (f"; {why}" if why else "")
                )

    def _execute_saying_where(
        self, run_id: int, state: str, solution: solver.Solution, plan: Sequence[PlannedStep]
    ) -> None:
        """``_execute``; a failure says how far the run got in moves, as the dashboard counts them."""
        try:
            self._execute(run_id, state, solution, plan)
        except Stopped:
            raise
        except RobotError as error:
            done, total = self.progress.get("done_moves", 0), self.progress.get("total_moves")
            raise RobotError(
                f"{error}; {done} of {total} moves were done (a board numbers its motions from the "
                "connection on, set-up included)"
            ) from None

    def _execute(self, run_id: int, state: str, solution: solver.Solution, plan: Sequence[PlannedStep]) -> None:
        """Execute ``plan``; a 3x3x3 on a motion that takes a plan as it goes is refined meanwhile."""
        self._raise_if_stopped()  # a stop before the motion begins (the motion would refuse it too)
        run_feed = getattr(self.motion, "run_feed", None)
        if run_feed is None or len(state) != 54 or not isinstance(self.rig, SixAxisRig):
            self.motion.run_plan(plan, lambda i: self._executed(run_id, plan, i))
            return
        live = LivePlan(self.solving, self.rig, state, solution, self.motion.feed_lead_s)  # type: ignore[attr-defined]
        live.plan.on_splice = lambda: self._spliced(run_id, live)
        try:
            live.execute(lambda take: run_feed(take, lambda i: self._executed(run_id, live.taken, i)))
        finally:
            record = live.update()
            self.history.update_run(
                run_id,
                solution=record["moves"],
                length_htm=record["htm"],
                length_qtm=record["qtm"],
                estimated_s=record["estimated_s"],
                solver_params=dict(solution.details, segments=record["segments"], splices=record["splices"]),
            )

    def _spliced(self, run_id: int, live: LivePlan) -> None:
        update = live.update()
        self.progress.update(total_moves=update["total_moves"], estimated_s=update["estimated_s"])
        self.bus.publish("solution_update", run_id, **update)

    def _executed(self, run_id: int, plan: Sequence[PlannedStep], index: int) -> None:
        done = sum(len(c.moves) for c in plan[: index + 1])
        state = solver.apply(self.progress["state"], plan[index].text)
        self.progress.update(done_moves=done, state=state)
        self.bus.publish(
            "move",
            run_id,
            index=index,
            command=plan[index].text,
            done_moves=done,
            total_moves=self.progress["total_moves"],
            state=state,
        )

    def _scan_with_retries(self, run_id: int, phase: str = "scanning") -> ScanResult:
        """The scan of ``phase`` (the first one, or the re-scan that verifies the solution), tried again after a
        refusal or a camera fault, then a RobotError that says what the vision said."""
        attempts = self.settings.scan_retries + 1
        for attempt in range(1, attempts + 1):
            try:
                scan = self._step(phase, self.scanner.scan, self.settings.scan_timeout_s)
            except (Stopped, RobotError):
                raise
            except Exception as error:  # vision.ScanError and camera faults: retry, then report the last
                refused = error if isinstance(error, ScanRefused) else ScanRefused(str(error))
                kept = self._keep_refused(run_id, refused.scan_id) if attempt == attempts else None
                self.bus.publish(
                    "scan_failed",
                    run_id,
                    phase=phase,
                    attempt=attempt,
                    message=str(error),
                    stickers=list(refused.stickers),
                    scan_id=refused.scan_id,
                    kept=None if kept is None else str(kept),
                )
                if attempt == attempts:
                    where = f"; the refused scan is kept in {kept}" if kept else ""
                    what = "scan" if phase == "scanning" else "the re-scan after the solution"
                    raise RobotError(f"{what} failed after {attempts} attempts: {error}{where}") from None
                continue
            if phase != "scanning":
                return scan  # the run publishes what it makes of it
            self.bus.publish(
                "scan",
                run_id,
                state=scan.state,
                confidence=scan.confidence,
                attempt=attempt,
                doubtful=scan.doubtful,
                scan_id=scan.scan_id,
                warnings=scan.warnings,
                retakes=scan.retakes,
            )
            return scan
        raise AssertionError("unreachable")

    def _keep_refused(self, run_id: int, scan_id: int | None) -> Path | None:
        """Keep the last refused scan on disk for a bug report; never lets a failure hide the scan's error."""
        if self.keep_refused is None:
            return None
        try:
            return self.keep_refused(run_id, scan_id)
        except Exception:  # keeping it is a courtesy: the run reports the scan's own error
            log.exception("keeping the refused scan of run %s failed", run_id)
            return None

    def _solve(self, state: str) -> solver.Solution:
        solution = self.solving.solve(state)
        if not solution.found:
            fallback = (
                f" nor by the {self.settings.solve_fallback} fallback in {self.settings.fallback_budget_s:g} s"
                if self.settings.solve_fallback
                else ""
            )
            raise RobotError(
                f"no solution found within the {self.settings.solve_budget_s:g} s solver budget "
                f"({solution.details.get('nodes_generated', 0):,} nodes){fallback}; state {state}"
            )
        suited = getattr(self.rig, "suited", None)  # a flip/spin rig: the solution it performs quickest
        return suited(state, solution) if suited is not None else solution


def _solver_name(solution: solver.Solution) -> str:
    return "pocket-table" if solution.puzzle == 2 else solution.details.get("solver", "neural-astar")


__all__ = ["PHASES", "Jogging", "Runner", "RunSettings", "ScanRefused", "ScanResult", "is_solved"]
