"""Host side of a rig run by stock Marlin 2.1 on a 3D-printer board: ``MarlinLink``.

It offers what ``robot.motion.LinkMotion`` uses of ``RigLink`` (connect,
enable, home, set_speed, plan, estop, status, clear, query, info, close,
port) and returns the same ``Motion`` objects, so the daemon can drive it
unchanged. One stepper per face, on a Marlin axis each (default U:X R:Y F:Z
D:I L:J B:K; ``I J K`` and ``A B C`` name the same axes 4-6); a face turn of
q quarter turns is a ``G1`` by ``q * units_per_quarter``, two opposite faces
one ``G1`` with both axes. Moves are absolute (``G90``), to targets the
link keeps from the position Marlin reports (at connect, after clear())
and the moves since: should the tail of a line Marlin cut run as well as
the line itself, the face moves to the same place, not twice as far.

Protocol (dialect.py has the line format and the replies, session.py the
rules: one line at a time, markers as proof of what ran, resends only when
Marlin asks, silence probes, the stop):

* connect: the board usually resets when the port opens; ``N0 M110 N0`` is
  repeated until an ``ok`` comes (sooner after the ``start`` banner) and
  marker line 1 is printed; then ``M115``, ``M114`` and ``M92`` identify the
  board (identity.py: firmware, version, axis count and names, ``Cap:``
  lines, steps per unit; a board that is no Marlin or lacks the configured
  axes is refused with a ``HandshakeError`` that says why); the steps per
  unit are set (``steps_per_quarter`` given) or checked (axis_steps.py);
  ``M203``, ``M201`` and ``M204`` report its speed limits: moves go at the
  speed that makes a quarter turn take the time the feed plans, Marlin's
  acceleration counted, with a warning when the board cannot (limits.py);
  then ``G90``, and ``M84 S0``: the drivers stay on until ``disable()``
  (Marlin switches them off 120 s after its last move by default, so the
  faces would turn freely while robotd says the motors are on). ``info``
  carries what was learnt, the stop method and warnings.
* Truthful completion: each move is ``G1`` (three lines, MOVE_PARTS),
  ``M400`` and a marker (``M118``), done when its marker is printed: Marlin
  runs lines in order and answers M400 only once the planner is empty.
* ``estop()`` writes ``M410`` (quick stop) at once, ahead of the queue (a
  move's ``G1`` on the wire is let in first: session.py says why), and
  again after ``estop_retry``; with EMERGENCY_PARSER Marlin acts on it as it
  arrives, without it as it reads it, which is at once because the link
  never fills Marlin's command queue. Steps end at once; Marlin keeps
  running, but the faces stopped wherever they were: the fault (ESTOP) and
  ``status()["position_known"]`` say so until ``home()``. ``clear()`` waits
  until Marlin answers again (1-2 s) and reads the position. A kill()
  (M112 from elsewhere, a thermal error) halts Marlin until reset:
  ``clear()`` refuses and says so; ``connect()`` reopens the port (which
  resets most boards).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future

from solver.puzzles.cube.geometry import OPPOSITE

from .. import axis_steps
from ..errors import ConfigError, DeviceFault, HandshakeError, LinkError, PortError
from ..line_port import LinePort
from ..motion import Motion, result_within
from ..square import Squaring, squaring_turns
from ..steps import Step
from .dialect import AXIS_NUMBER, DEFAULT_AXES, move_command, parse_reply, steps_command
from .identity import board_axes, identify, refusal
from .limits import move_feed
from .lines import IDENT, MARKER, POSITION, STEPS, Line
from .session import MarlinSession
from .timing import MarlinTiming

log = logging.getLogger(__name__)

__all__ = ["MarlinLink", "MarlinTiming"]
MOST_IN_QUEUE = 3  # of Marlin's 4-line command queue: one is left for the stop (M410) to be read at once
# Marlin holds a block that arrives in an empty planner until 3 are queued or ~0.1 s has passed
# (BLOCK_DELAY_FOR_1ST_MOVE): a move as three G1 lines along one line starts at once instead. The stock 2.1
# binary (bench/stock_links.py): a quarter turn's first step 112 ms after turn() as one line, 22 ms as three.
MOVE_PARTS = 3
KEEP_DRIVERS_ON = "M84 S0"  # no idle timeout: the drivers stay on until M18 (robotd's motors off)


class MarlinLink(Squaring, LinePort):
    """A rig on Marlin over pyserial. Thread-safe; one I/O thread per link."""

    thread_name = "marlin"
    timing: MarlinTiming
    _session: MarlinSession

    def __init__(
        self,
        port: str,
        *,
        axes: dict[str, str] | None = None,
        units_per_quarter: float = 90.0,
        steps_per_quarter: float | dict[str, float] | None = None,
        feed: float = 27000.0,
        timing: MarlinTiming | None = None,
        buffer: int = MOST_IN_QUEUE,
        history: int = 512,
    ):
        if not isinstance(port, str) or not port:
            raise ConfigError(f"port must be a device path or pyserial URL, got {port!r}")
        self.axes = dict(axes or DEFAULT_AXES)
        if len(set(self.axes.values())) != len(self.axes) or not all(a in AXIS_NUMBER for a in self.axes.values()):
            raise ConfigError(
                f"axes must map faces to distinct Marlin axis letters ({' '.join(AXIS_NUMBER)}), got {self.axes!r}"
            )
        if units_per_quarter <= 0 or feed <= 0:
            raise ConfigError("units_per_quarter and feed must be positive")
        if not 1 <= buffer <= MOST_IN_QUEUE:
            raise ConfigError(
                f"buffer {buffer}: between 1 and {MOST_IN_QUEUE} lines (Marlin's command queue holds 4, and one "
                "must stay free for the stop to be read at once)"
            )
        self.port, self.units_per_quarter, self.feed = port, float(units_per_quarter), float(feed)
        self._move_feed = self.feed  # the G1 F that makes a quarter take the planned time (limits.py)
        self.steps_per_quarter = axis_steps.per_face(steps_per_quarter, list(self.axes))
        self.timing, self.buffer = timing or MarlinTiming(), buffer
        self._lock = threading.Lock()
        self._after: list[Callable[[], None]] = []
        self._ser = None
        self._thread: threading.Thread | None = None
        self._closing = False
        self._info: dict | None = None
        self._board_axes = dict(self.axes)  # each face's axis under the board's own name, learnt at connect
        self._target: dict[str, float] = {}  # each axis's position once the moves queued so far have run
        self._next_mid = 1
        self._rx = bytearray()
        self._session = MarlinSession(
            timing=self.timing,
            port=port,
            buffer=buffer,
            history=history,
            write=self._write,
            after=self._after,
            on_fault=self._log_fault,
        )
        self.counters = self._session.counters

    # ------------------------------------------------------------ port and I/O thread

    def _on_raw_line(self, raw: bytes, now: float) -> None:
        text = raw.decode("ascii", "replace").strip()
        if text:
            log.debug("%s < %s", self.port, text)
            self._session.on_line(parse_reply(text), now)

    def _tick(self, now: float) -> None:
        self._session.tick(now)

    def _port_lost(self, why: str) -> None:
        self._session.fail(PortError(why, port=self.port), dead=True)

    def _log_fault(self, err: LinkError) -> None:
        if not self._closing:  # the host's own stop (ESTOP) was asked for: no error
            log.log(logging.DEBUG if getattr(err, "code", None) == "ESTOP" else logging.ERROR, "%s", err)

    # ------------------------------------------------------------ connect

    def connect(self) -> dict:
        """Open the port (again after a halt: that resets most boards), sync line numbers, identify the board
        (refused with a HandshakeError that says why), set G90."""
        if self._closing:
            raise LinkError("the link was closed", port=self.port)
        session = self._session
        self._open_port(fresh=session.halted or session.dead)
        hello: Future = Future()
        with self._lock:
            now = time.monotonic()
            if session.outstanding:
                session.fail(LinkError("a new session replaced the one this was sent in", port=self.port), dead=True)
            session.reset(now)
            self._rx = bytearray()
            session.hello = hello
        self._run_after()
        self._await_hello(hello)
        report = self._identified()
        self._set_steps(report)
        self._ask([Line("M203"), Line("M201"), Line("M204")], "M203, M201 and M204")  # speed limits: reports
        with self._lock:
            warnings = [warning for warning in [self._plan_feed()] if warning]
            session.queue(Line("G90"))
            session.queue(Line(KEEP_DRIVERS_ON))
            self._follow(session.position or {})
            session.pump(time.monotonic())
            self._info = {
                "port": self.port,
                "protocol": 1,
                "dialect": "marlin",
                **identify(report),
                "motors": list(self.axes),
                "axes": dict(self._board_axes),
                "window": 1,
                "units_per_quarter": self.units_per_quarter,
                "steps_per_quarter": axis_steps.quarter_steps(
                    report.steps_per_unit, self._board_axes, self.units_per_quarter
                ),
                "feed": self.feed,
                "move_feed": self._move_feed,
                "warnings": warnings,
                "boot_id": None,
            }
            info = dict(self._info)
        self._run_after()
        for warning in warnings:
            log.warning("%s: %s", self.port, warning)
        return info

    def _await_hello(self, hello: Future) -> None:
        try:
            hello.result(timeout=self.timing.boot_timeout)
        except TimeoutError:
            with self._lock:
                self._session.hello = None
            raise HandshakeError(
                f"no ok to M110 and its marker within {self.timing.boot_timeout} s (not Marlin, wrong baud "
                f"rate, or halted: press reset)",
                port=self.port,
            ) from None
        except LinkError as err:
            raise HandshakeError(f"handshake failed: {err}", port=self.port) from None

    def _identify(self):
        """M115, M114 and M92, answered: what the board said of itself."""
        self._ask([Line("M115", IDENT), Line("M114", POSITION), Line("M92", STEPS)], "M115, M114 and M92")
        with self._lock:
            return self._session.report

    def _set_steps(self, report, tries: int = 3) -> None:
        """Each face's steps per quarter turn on the board made the rig's (``steps_per_quarter``), or checked
        alike (axis_steps.py); asked again up to ``tries`` times (a garbled report), then a HandshakeError that
        says what to do."""
        axes, upq = self._board_axes, self.units_per_quarter
        why: str | None = None
        how = lambda values: f"{steps_command(values)}, then M500 to keep them"  # noqa: E731
        for attempt in range(tries):
            if attempt:
                self._ask([Line("M92", STEPS)], "M92")
            want = axis_steps.wanted(report.steps_per_unit, axes, upq, self.steps_per_quarter)
            if want:
                log.info("%s: setting steps per unit: %s", self.port, steps_command(want))
                self._ask([Line(steps_command(want))], steps_command(want))
                continue
            why = axis_steps.refusal(report.steps_per_unit, axes, upq, self.steps_per_quarter, how, "controller.marlin")
            if not why:
                return
        with self._lock:
            self._session.connected = False
        raise HandshakeError(why or "the board's steps per unit did not take the values robotd set", port=self.port)

    def _ask(self, lines: list[Line], what: str) -> None:
        """Send ``lines`` and wait for each one's answer; a HandshakeError if one does not come."""
        futures: list[Future] = []
        with self._lock:
            self._session.connected = True
            for line in lines:
                line.future = Future()
                futures.append(line.future)
                self._session.queue(line)
            self._session.pump(time.monotonic())
        self._run_after()
        try:
            for future in futures:
                result_within(future, self.timing.boot_timeout, f"no answer to {what}")
        except LinkError as err:
            with self._lock:
                self._session.connected = False
            raise HandshakeError(f"could not identify the board: {err}", port=self.port) from None

    def _identified(self):
        """M115 and M114 until the board fits the config, twice at most (a reply garbled on the way must not
        refuse a good board): what it said; else a HandshakeError that says why it does not fit."""
        why = ""
        for _ in range(2):
            report = self._identify()
            why = refusal(report) or ""
            try:
                if not why:
                    axes = board_axes(self.axes, report)
                    with self._lock:
                        self._board_axes = axes
                    return report
            except ValueError as err:
                why = str(err)
        with self._lock:
            self._session.connected = False
        raise HandshakeError(why, port=self.port)

    @property
    def info(self) -> dict | None:
        with self._lock:
            return dict(self._info) if self._info else None

    # ------------------------------------------------------------ commands

    def _submit(self, verb: str, text: str) -> Motion:
        with self._lock:
            self._check_usable()
            motion = Motion(Step(verb, self._next_mid))
            self._next_mid += 1
            self._session.queue(Line(text, motion=motion, role="completed"))
            self._session.pump(time.monotonic())
        self._run_after()
        return motion

    def _check_usable(self) -> None:
        if not self._session.connected:
            raise LinkError("not connected: call connect() first", port=self.port)
        if self._session.fault is not None:
            raise self._session.fault

    def enable(self, motors=()) -> Motion:
        return self._submit("ENABLE", "M17")

    def disable(self, motors=()) -> Motion:
        return self._submit("DISABLE", "M18")

    def home(self, motors=()) -> Motion:
        """No switches on a cube rig: the current position becomes zero (G92); square the faces first."""
        with self._lock:
            self._follow({})
        return self._submit("HOME", "G92 " + " ".join(f"{a}0" for a in self._board_axes.values()))

    def _follow(self, position: dict[str, float]) -> None:
        """Where Marlin is (its M114; {}: all zero): the start of the next absolute move."""
        self._target = {axis: position.get(axis, 0.0) for axis in self._board_axes.values()}

    def set_speed(self, quarter_ms: int) -> Motion:
        """Feed rate so a quarter turn takes ``quarter_ms`` (acceleration counted where the board reported it),
        for moves queued after."""
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

    def _turns(self, entry) -> list[tuple[str, int]]:
        pair = isinstance(entry, (tuple, list)) and len(entry) == 2 and isinstance(entry[0], (tuple, list))
        turns = [tuple(t) for t in entry] if pair else [tuple(entry)]
        for turn in turns:
            if (
                len(turn) != 2
                or turn[0] not in self.axes
                or isinstance(turn[1], bool)
                or not isinstance(turn[1], int)
                or not turn[1]
                or abs(turn[1]) > 2
            ):
                raise ConfigError(
                    f"plan entry {entry!r}: give (face, quarter turns ±1/±2) or a pair of them", port=self.port
                )
        if pair and OPPOSITE.get(turns[0][0]) != turns[1][0]:
            raise ConfigError(f"{turns[0][0]} and {turns[1][0]} are not opposite faces", port=self.port)
        return turns

    def plan(self, entries) -> list[Motion]:
        """Queue turns ``(face, q)`` or pairs ``((f1, q1), (f2, q2))``: one Motion each, done once its marker,
        after its M400, is printed."""
        checked = [self._turns(entry) for entry in entries]
        with self._lock:
            self._check_usable()
            motions = [self._queue_move(turns) for turns in checked]
            self._session.pump(time.monotonic())
        self._run_after()
        return motions

    def off_square(self) -> dict[str, float]:
        """Face -> the fraction of a quarter turn (signed) that brings it back to square, for each face a stop
        left between two quarter turns (from where the moves queued so far end, counted from ``home``)."""
        with self._lock:
            positions = {face: self._target.get(axis, 0.0) for face, axis in self._board_axes.items()}
        return squaring_turns(positions, self.units_per_quarter)

    def _queue_turns(self, turns: list) -> Motion:
        motion = self._queue_move(turns)
        self._session.pump(time.monotonic())
        return motion

    def _queue_move(self, turns: list) -> Motion:
        """One move's lines: its G1 parts, M400 and the marker that completes its Motion."""
        motion = Motion(Step("TURN" if len(turns) == 1 else "PAIR", self._next_mid, tuple(turns)))
        self._next_mid += 1
        session = self._session
        *parts, last = self._move([(self._board_axes[face], q) for face, q in turns])
        for part in parts:
            session.queue(Line(part))
        session.queue(Line(last, motion=motion, role="received"))
        session.queue(Line("M400", expect_s=self._move_s(turns)))
        session.queue(Line("", MARKER, motion=motion, role="completed"))
        return motion

    def _plan_feed(self) -> str | None:
        """The G1 feed for the planned quarter-turn time on this board; a warning when it cannot be met."""
        axes = list(self._board_axes.values())
        limits = self._session.report.limits  # M203, M201, M204 as the board reported them at connect
        self._move_feed, warning = move_feed(limits, axes, self.units_per_quarter, self.feed)
        return warning

    def _move(self, turns: list[tuple[str, int]]) -> list[str]:
        """The absolute G1 lines of a move, from the targets of the moves before it: MOVE_PARTS in a line."""
        commands = [
            move_command(turns, self.units_per_quarter, self._move_feed, self._target, share=k / MOVE_PARTS)
            for k in range(1, MOVE_PARTS + 1)
        ]
        for axis, q in turns:
            self._target[axis] += q * self.units_per_quarter
        return commands

    def _move_s(self, turns: list[tuple[str, int]]) -> float:
        """How long a move should take at the feed rate (acceleration and Marlin's speed limits not counted)."""
        return max(abs(q) for _, q in turns) * self.units_per_quarter / self.feed * 60.0

    def turn(self, face: str, quarter_turns: int) -> Motion:
        return self.plan([(face, quarter_turns)])[0]

    def wait(self, motions=None, timeout: float | None = None) -> list[dict]:
        if motions is None:
            with self._lock:
                lines = self._session.outstanding
                motions = list({id(line.motion): line.motion for line in lines if line.motion}.values())
        return [m.wait(timeout) for m in motions]

    def estop(self, wait: bool = True) -> dict | Future:
        """M410 now, ahead of the queue; every motion not done fails (ESTOP). Marlin keeps running; the faces
        stopped wherever they were."""
        future: Future = Future()
        with self._lock:
            if self._ser is None:
                raise PortError("emergency stop impossible: the port is not open", port=self.port)
            self._session.begin_estop(future, time.monotonic())
        self._run_after()
        return future.result() if wait else future

    def query(self, timeout: float | None = None) -> dict:
        """M114 through the queue: the position Marlin has planned to, per face, and the link's state."""
        future: Future = Future()
        with self._lock:
            self._check_usable()
            self._session.queue(Line("M114", POSITION, future=future))
            self._session.pump(time.monotonic())
        self._run_after()
        position = result_within(future, timeout or self.timing.query_timeout, "no answer to M114")
        faces = {face: position.get(axis) for face, axis in self._board_axes.items()}
        session = self._session
        return {
            "position": faces,
            "done_through": session.done_mid,
            "halted": session.halted,
            "position_known": session.position_known,
        }

    def clear(self, timeout: float | None = None) -> dict:
        """After a fault or a stop: a marker first (Marlin answers once it has run what it still held; after a
        stop that takes 1-2 s), then the position. A halted Marlin refuses: it needs a reset."""
        with self._lock:
            session = self._session
            if session.halted:
                raise DeviceFault(
                    "Marlin is halted (kill(): M112 or a thermal error) and ignores everything until it is reset: "
                    "press reset or power-cycle the board, then connect() (reopening the port resets most "
                    "boards); square the faces and home afterwards",
                    code="HALTED",
                    port=self.port,
                )
            if session.dead or not session.connected:
                raise session.fault or LinkError("not connected: call connect() first", port=self.port)
            session.fault = None
            session.resync()
        position = self.query(timeout or self.timing.query_timeout + self.timing.stop_recovery)
        with self._lock:
            self._follow(self._session.position or {})
        return position

    def status(self) -> dict:
        with self._lock:
            session = self._session
            fault = session.fault
            return {
                "port": self.port,
                "connected": session.connected and not session.dead,
                "healthy": session.connected and fault is None,
                "halted": session.halted,
                "position_known": session.position_known,
                "fault": None
                if fault is None
                else {
                    "type": type(fault).__name__,
                    "code": getattr(fault, "code", None),
                    "message": str(fault),
                    "done_through": fault.done_through,
                },
                "handshake": dict(self._info) if self._info else None,
                "last_heard_s": round(time.monotonic() - session.last_rx, 4) if session.connected else None,
                "in_flight": len(session.flying) + len(session.held),
                "backlog": len(session.unsent),
                "done_through": session.done_mid,
                "next_line": session.book.next_n,
                "advanced_ok": session.advanced,
                "counters": dict(session.counters),
            }
