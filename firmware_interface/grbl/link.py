"""Host side of a rig run by stock grblHAL: ``GrblLink``, the grblHAL counterpart of ``MarlinLink``.

Same public interface and ``Motion`` objects as ``MarlinLink``, so
``robot.motion.LinkMotion`` drives either. One stepper per face on a
grblHAL axis (default U:X R:Y F:Z D:A L:B B:C); q quarter turns move its
axis by ``q * units_per_quarter`` (degrees by default), opposite faces in
one line. dialect.py has the dialect, session.py, jobs.py and resets.py the
rules; in short:

* connect: the banner (opening the port may reset the board; after
  ``banner_wait`` a soft reset asks for it), then ``$I`` (version, build,
  axes) and ``$$`` (settings), ``$X`` (a board that starts in alarm, e.g.
  with homing on, is unlocked, with a warning in ``info``), ``G90 G21
  G94``, and a status report whose machine position becomes the targets.
  Another firmware, grbl before 1.1, or a board that lacks axes the faces
  are mapped to is refused (identity.py). The steps per unit ``$100``... are
  set (``steps_per_quarter`` given, only those that differ: grbl writes
  them to EEPROM) or checked (axis_steps.py).
* Moves are absolute, in machine coordinates (``G53``), to targets kept
  per axis on the host, one at a time: done when a report asked for after
  the line's ``ok`` says Idle with every axis on target. Sending a line
  again can never turn a face twice, so garbled or lost lines are simply
  sent again.
* ``home()`` sends nothing: the position becomes the origin ``query()``
  measures from (G92 would write grblHAL's non-volatile memory each run).
  ``enable()``/``disable()`` send nothing either: grblHAL powers its
  drivers itself (``$1``; 255 keeps them energised).
* ``estop()`` writes ``!`` and 0x18 at once, ahead of the queue; grbl
  then stays in alarm until ``clear()`` (``$X`` once the reset's banner is
  in, and the board's position becomes the targets).
* An alarm is a fault that says what to check (alarms.py). After a limit
  alarm grbl reads nothing until a soft reset: ``clear()`` then sends 0x18,
  waits for the banner, and unlocks with ``$X``.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future
from functools import partial

from .. import axis_steps
from ..errors import ConfigError, HandshakeError, LinkError, PortError
from ..line_port import LinePort
from ..motion import Motion, result_within
from ..square import Squaring, squaring_turns
from ..steps import Step
from .dialect import (
    AXIS_LETTERS,
    BUILD_INFO_LINE,
    DEFAULT_AXES,
    SETTINGS_LINE,
    SETUP_LINE,
    UNLOCK_LINE,
    board_steps,
    parse_reply,
    steps_lines,
)
from .identity import identify, refusal, too_old
from .jobs import Job, plan_entry
from .limits import move_feed
from .session import GrblSession
from .timing import GrblTiming

log = logging.getLogger(__name__)

__all__ = ["GrblLink", "GrblTiming"]


def _steps_text(values: dict[str, float], letters: str) -> str:
    return " ".join(steps_lines(values, letters))


class GrblLink(Squaring, LinePort):
    """A rig on grblHAL over pyserial. Thread-safe; one I/O thread per link."""

    thread_name = "grbl"
    timing: GrblTiming
    _session: GrblSession

    def __init__(
        self,
        port: str,
        *,
        axes: dict[str, str] | None = None,
        units_per_quarter: float = 90.0,
        steps_per_quarter: float | dict[str, float] | None = None,
        feed: float = 27000.0,
        timing: GrblTiming | None = None,
        tolerance: float | None = None,
        retries: int = 10,
    ):
        if not isinstance(port, str) or not port:
            raise ConfigError(f"port must be a device path or pyserial URL, got {port!r}")
        self.axes = dict(axes or DEFAULT_AXES)
        letters = list(self.axes.values())
        if len(set(letters)) != len(letters) or not all(a in AXIS_LETTERS and len(a) == 1 for a in letters):
            raise ConfigError(
                f"axes must map faces to distinct grblHAL axis letters ({AXIS_LETTERS}), got {self.axes!r}"
            )
        if units_per_quarter <= 0 or feed <= 0 or retries < 1 or (tolerance is not None and tolerance <= 0):
            raise ConfigError("units_per_quarter, feed, tolerance and retries must be positive")
        self.port, self.units_per_quarter, self.feed = port, float(units_per_quarter), float(feed)
        self._move_feed = self.feed  # the G1 F that makes a quarter take the planned time (limits.py)
        self.steps_per_quarter = axis_steps.per_face(steps_per_quarter, list(self.axes))
        self.timing = timing or GrblTiming()
        # half a degree of face rotation by default: far above a step, far below a garbled digit
        self.tolerance = tolerance if tolerance is not None else self.units_per_quarter / 180
        self._lock = threading.Lock()
        self._after: list = []
        self._ser = None
        self._thread: threading.Thread | None = None
        self._closing = self._connected = False
        self._info: dict | None = None
        self._next_mid = 1
        self._rx = bytearray()
        self._session = GrblSession(
            axes=self.axes,
            units_per_quarter=self.units_per_quarter,
            tolerance=self.tolerance,
            retries=retries,
            timing=self.timing,
            port=port,
            write=self._write,
            after=self._after,
        )

    # ------------------------------------------------------------ port and I/O thread

    def _on_raw_line(self, raw: bytes, now: float) -> None:
        self._on_line(raw.decode("latin-1").strip(), now)

    def _tick(self, now: float) -> None:
        self._session.tick(now)

    def _on_line(self, text: str, now: float) -> None:
        if text:
            log.debug("%s < %s", self.port, text)
            self._session.on_line(parse_reply(text), now)

    def _port_lost(self, why: str) -> None:
        self._session.fail(PortError(why, port=self.port), dead=True)
        self._connected = False

    # ------------------------------------------------------------ connect

    def connect(self) -> dict:
        """Open the port (again after a reset or a lost port), wait for the banner, identify the board, unlock,
        set G90, read the position."""
        if self._closing:
            raise LinkError("the link was closed", port=self.port)
        self._open_port(fresh=self._session.dead)
        hello: Future = Future()
        with self._lock:
            now = time.monotonic()
            if self._session.jobs:
                self._session.fail(
                    LinkError("a new session replaced the one this was sent in", port=self.port), dead=False
                )
            self._connected = False
            self._session.reset(now)
            self._session.connecting = True
            self._session.resets.begin_handshake(hello, now)
        self._run_after()
        try:
            self._await_banner(hello)
            self._set_up()
            board = self._set_steps()
        finally:
            with self._lock:
                self._session.connecting = False
        with self._lock:
            self._connected = True
            slow = self._plan_feed()
            self._info = {
                "port": self.port,
                "protocol": 1,
                "dialect": "grblhal",
                **identify(self._session.report),
                "motors": list(self.axes),
                "axes": dict(self.axes),
                "units_per_quarter": self.units_per_quarter,
                "steps_per_quarter": axis_steps.quarter_steps(board, self.axes, self.units_per_quarter),
                "feed": self.feed,
                "move_feed": self._move_feed,
                "window": 1,
                "boot_id": None,
            }
            self._info["warnings"] = [*self._info["warnings"], *([slow] if slow else [])]
            info = dict(self._info)
        for warning in info["warnings"]:
            log.warning("%s: %s", self.port, warning)
        return info

    def _await_banner(self, hello: Future) -> None:
        try:
            banner = hello.result(timeout=self.timing.boot_timeout)
        except TimeoutError:
            with self._lock:
                self._session.resets.hello = None
                heard = list(self._session.report.heard)
            said = f"; it said {', '.join(repr(line) for line in heard)}" if heard else ""
            raise HandshakeError(
                f"no grbl banner within {self.timing.boot_timeout} s, even after a soft reset "
                f"(not grbl, or a wrong baud rate){said}",
                port=self.port,
            ) from None
        except HandshakeError:
            raise
        except LinkError as err:
            raise HandshakeError(f"handshake failed: {err}", port=self.port) from None
        why = too_old(banner or "")
        if why:
            raise HandshakeError(why, port=self.port)

    def _set_up(self) -> None:
        futures: list[Future] = [Future() for _ in range(5)]
        jobs = [
            Job("line", text=BUILD_INFO_LINE, future=futures[0]),
            Job("line", text=SETTINGS_LINE, future=futures[1], optional=True),
            Job("unlock", text=UNLOCK_LINE, future=futures[2]),
            Job("line", text=SETUP_LINE, future=futures[3]),
            Job("sync", future=futures[4]),
        ]
        with self._lock:
            now = time.monotonic()
            for job in jobs:
                self._session.submit(job, now)
        self._run_after()
        try:
            position = futures[-1].result(timeout=self.timing.boot_timeout)
        except TimeoutError:
            with self._lock:
                self._session.fail(LinkError("handshake timed out", port=self.port), dead=False)
            raise HandshakeError(
                "no idle status report after $X (is the board stuck in alarm?)", port=self.port
            ) from None
        except LinkError as err:
            raise HandshakeError(f"setting the board up failed: {err}", port=self.port) from None
        with self._lock:
            self._session.board_axes()
            why = refusal(self._session.report, self.axes)
        if why or position is None:
            raise HandshakeError(why or "no position in the board's status report", port=self.port)

    def _set_steps(self, tries: int = 3) -> dict[str, float]:
        """Each face's steps per quarter turn on the board made the rig's (``steps_per_quarter``), or checked
        alike; read again up to ``tries`` times (a garbled ``$$`` line), then a HandshakeError that says what to
        do. Returns the board's steps per unit by axis."""
        upq, why = self.units_per_quarter, ""
        for attempt in range(tries):
            if attempt:
                self._run_lines([SETTINGS_LINE])
            with self._lock:
                letters = self._session.report.letters or ""
                board = board_steps(self._session.report.settings, letters)
            want = axis_steps.wanted(board, self.axes, upq, self.steps_per_quarter)
            if want:
                log.info("%s: setting steps per unit: %s", self.port, " ".join(steps_lines(want, letters)))
                self._run_lines(steps_lines(want, letters))
                continue
            how = partial(_steps_text, letters=letters)
            why = axis_steps.refusal(board, self.axes, upq, self.steps_per_quarter, how, "controller.grblhal") or ""
            if not why:
                return board
        raise HandshakeError(why or "the board's steps per unit did not take the values robotd set", port=self.port)

    def _run_lines(self, lines: list[str]) -> None:
        """Send ``lines`` one by one, each done on its ok."""
        futures: list[Future] = [Future() for _ in lines]
        with self._lock:
            now = time.monotonic()
            for line, future in zip(lines, futures):
                self._session.submit(Job("line", text=line, future=future), now)
        self._run_after()
        try:
            for future in futures:
                result_within(future, self.timing.boot_timeout, f"no ok to {' '.join(lines)}")
        except LinkError as err:
            raise HandshakeError(f"setting the board up failed: {err}", port=self.port) from None

    @property
    def info(self) -> dict | None:
        with self._lock:
            return dict(self._info) if self._info else None

    # ------------------------------------------------------------ commands

    def _check_usable(self) -> None:
        if not self._connected:
            raise (
                self._session.fault
                if self._session.dead and self._session.fault
                else LinkError("not connected: call connect() first", port=self.port)
            )
        if self._session.fault is not None:
            raise self._session.fault

    def _plan_feed(self) -> str | None:
        """The G1 feed for the planned quarter-turn time on this board; a warning when it cannot be met."""
        report, axes = self._session.report, list(self.axes.values())
        letters, upq = report.letters or "", self.units_per_quarter
        self._move_feed, warning = move_feed(report.settings, letters, axes, upq, self.feed)
        return warning

    def _submit(self, step_verb: str, kind: str, turns=(), feed: float = 0.0) -> Motion:
        motion = Motion(Step(step_verb, self._next_mid, tuple(turns)))
        self._next_mid += 1
        axis_turns = tuple((self.axes[face], q) for face, q in turns)
        self._session.submit(Job(kind, motion=motion, turns=axis_turns, feed=feed), time.monotonic())
        return motion

    def _command(self, verb: str, kind: str) -> Motion:
        with self._lock:
            self._check_usable()
            motion = self._submit(verb, kind)
        self._run_after()
        return motion

    def enable(self, motors=()) -> Motion:
        """Nothing to send (grblHAL energises its drivers itself); done once everything before it is."""
        return self._command("ENABLE", "mark")

    def disable(self, motors=()) -> Motion:
        return self._command("DISABLE", "mark")

    def home(self, motors=()) -> Motion:
        """No switches on a cube rig: the current position becomes zero (kept on the host)."""
        return self._command("HOME", "home")

    def set_speed(self, quarter_ms: int) -> Motion:
        """Feed rate so a quarter turn takes ``quarter_ms`` (acceleration counted, from the board's ``$$``), for
        moves queued after."""
        if isinstance(quarter_ms, bool) or not isinstance(quarter_ms, int) or quarter_ms <= 0:
            raise ConfigError(f"quarter-turn time must be a positive whole number of ms, got {quarter_ms!r}")
        with self._lock:
            self._check_usable()
            self.feed = self.units_per_quarter / (quarter_ms / 60000.0)
            self._plan_feed()
            motion = Motion(Step("SPEED", self._next_mid, quarter_ms=quarter_ms))
            self._next_mid += 1
        motion.received.set_result(True)
        motion.completed.set_result({"mid": motion.mid, "command": motion.command, "line": None})
        return motion

    def plan(self, entries) -> list[Motion]:
        """Queue turns ``(face, q)`` or pairs ``((f1, q1), (f2, q2))``: one Motion each, done once the board
        reports it idle with the faces there."""
        checked = [plan_entry(entry, self.axes, self.port) for entry in entries]
        with self._lock:
            self._check_usable()
            motions = [
                self._submit("TURN" if len(turns) == 1 else "PAIR", "move", turns, self._move_feed) for turns in checked
            ]
        self._run_after()
        return motions

    def turn(self, face: str, quarter_turns: int) -> Motion:
        return self.plan([(face, quarter_turns)])[0]

    def off_square(self) -> dict[str, float]:
        """Face -> the fraction of a quarter turn (signed) that brings it back to square, for each face a stop
        left between two quarter turns (from its last confirmed position, counted from ``home``)."""
        with self._lock:
            confirmed, origin = self._session.confirmed, self._session.origin
            positions = {face: confirmed.get(axis, 0.0) - origin.get(axis, 0.0) for face, axis in self.axes.items()}
        return squaring_turns(positions, self.units_per_quarter)

    def _queue_turns(self, turns: list) -> Motion:
        return self._submit("TURN", "move", turns, self._move_feed)

    def wait(self, motions=None, timeout: float | None = None) -> list[dict]:
        if motions is None:
            with self._lock:
                motions = [job.motion for job in self._session.jobs if job.motion is not None]
        return [m.wait(timeout) for m in motions]

    def estop(self, wait: bool = True) -> dict | Future:
        """Feed hold and soft reset now, ahead of the queue; every motion not done fails (ESTOP)."""
        future: Future = Future()
        with self._lock:
            if self._ser is None:
                raise PortError("emergency stop impossible: the port is not open", port=self.port)
            self._session.resets.begin_estop(future, time.monotonic())
        self._run_after()
        return future.result() if wait else future

    def query(self, timeout: float | None = None) -> dict:
        """A status report once everything queued before is done: each face's position from home."""
        future: Future = Future()
        with self._lock:
            self._check_usable()
            self._session.submit(Job("query", future=future), time.monotonic())
        self._run_after()
        position = result_within(future, timeout or self.timing.query_timeout, "no status report")
        with self._lock:
            origin, status = dict(self._session.origin), self._session.status
        faces = {face: round(position[axis] - origin.get(axis, 0.0), 4) for face, axis in self.axes.items()}
        return {
            "position": faces,
            "done_through": self._session.done_mid,
            "halted": False,
            "state": status.label if status else None,
        }

    def clear(self, timeout: float | None = None) -> dict:
        """After an emergency stop or an alarm: a soft reset first where grbl needs one (a limit alarm) or one
        of ours has not shown its banner yet, then ``$X``; the board's position becomes the targets."""
        with self._lock:
            session = self._session
            if session.dead or not self._connected:
                raise session.fault or LinkError("not connected: call connect() first", port=self.port)
            session.fault = None
            now = time.monotonic()
            reset = session.needs_reset or session.resets.awaited(now)
            if reset:
                session.submit(Job("reset"), now)
            session.submit(Job("unlock", text=UNLOCK_LINE), now)
            session.submit(Job("sync"), now)
        result = self.query(timeout or self.timing.query_timeout + (self.timing.reset_banner if reset else 0.0))
        with self._lock:
            if session.last_alarm is not None:
                session.last_alarm["cleared"] = True
        return result

    def status(self) -> dict:
        with self._lock:
            session = self._session
            fault, report = session.fault, session.status
            head = session.jobs[0] if session.jobs else None
            return {
                "port": self.port,
                "connected": self._connected and not session.dead,
                "healthy": self._connected and fault is None,
                "halted": False,
                "fault": None
                if fault is None
                else {
                    "type": type(fault).__name__,
                    "code": getattr(fault, "code", None),
                    "message": str(fault),
                    "done_through": fault.done_through,
                },
                "handshake": dict(self._info) if self._info else None,
                "last_heard_s": round(time.monotonic() - session.last_rx, 4) if self._connected else None,
                "state": report.label if report else None,
                "in_flight": int(head is not None and head.line is not None and head.ok_at is None),
                "backlog": len(session.jobs),
                "done_through": session.done_mid,
                "alarm": dict(session.last_alarm) if session.last_alarm else None,
                "counters": dict(session.counters),
            }
