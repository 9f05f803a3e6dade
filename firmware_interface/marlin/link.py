"""Host side of a rig run by stock Marlin 2.1 on a 3D-printer board: ``MarlinLink``.

It offers what ``robot.motion.LinkMotion`` uses of ``RigLink`` (connect,
enable, home, set_speed, plan, estop, status, clear, query, info, close,
port) and returns the same ``Motion`` objects, so the daemon can drive it
unchanged. One stepper per face, on a Marlin axis each (default U:X R:Y F:Z
D:I L:J B:K); a face turn of q quarter turns is a relative ``G1`` of
``q * units_per_quarter``, two opposite faces one ``G1`` with both axes.

Protocol (dialect.py has the line format and the replies, session.py the
rules for the lines in flight: numbering, oks, resends, errors, silence):

* connect: the board usually resets when the port opens; ``N0 M110 N0`` is
  repeated until an ``ok`` comes (sooner after the ``start`` banner), then
  ``G91``. ``info["protocol"]`` is 1 (no MOTOR/SPEED frames), ``dialect``
  is ``marlin``.
* Truthful completion: each move is ``G1`` then ``M400``, done on the
  ``ok`` to its M400 (Marlin answers it only once the planner is empty).
* ``estop()`` writes ``M112`` at once, ahead of the queue (Marlin's
  EMERGENCY_PARSER acts on it on receipt) and repeats it until Marlin says
  it halted. A halted Marlin ignores everything until reset: ``clear()``
  refuses and says so; ``connect()`` reopens the port (which resets most
  boards).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future

from solver.puzzles.cube.geometry import OPPOSITE

from ..errors import ConfigError, DeviceFault, HandshakeError, LinkError, PortError
from ..line_port import LinePort
from ..motion import Motion, result_within
from ..steps import Step
from .dialect import DEFAULT_AXES, move_command, parse_reply
from .session import MarlinSession
from .timing import MarlinTiming

log = logging.getLogger(__name__)

__all__ = ["MarlinLink", "MarlinTiming"]


class MarlinLink(LinePort):
    """A rig on Marlin over pyserial. Thread-safe; one I/O thread per link."""

    thread_name = "marlin"
    timing: MarlinTiming

    def __init__(
        self,
        port: str,
        *,
        axes: dict[str, str] | None = None,
        units_per_quarter: float = 90.0,
        feed: float = 27000.0,
        timing: MarlinTiming | None = None,
        buffer: int = 4,
        history: int = 512,
    ):
        if not isinstance(port, str) or not port:
            raise ConfigError(f"port must be a device path or pyserial URL, got {port!r}")
        self.axes = dict(axes or DEFAULT_AXES)
        if len(set(self.axes.values())) != len(self.axes) or not all(a.isalpha() for a in self.axes.values()):
            raise ConfigError(f"axes must map faces to distinct axis letters, got {self.axes!r}")
        if units_per_quarter <= 0 or feed <= 0 or buffer < 1:
            raise ConfigError("units_per_quarter, feed and buffer must be positive")
        self.port, self.units_per_quarter, self.feed = port, float(units_per_quarter), float(feed)
        self.timing, self.buffer = timing or MarlinTiming(), buffer
        self._lock = threading.Lock()
        self._after: list[Callable[[], None]] = []
        self._ser = None
        self._thread: threading.Thread | None = None
        self._closing = False
        self._info: dict | None = None
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
        if not self._closing:
            log.error("%s", err)

    # ------------------------------------------------------------ connect

    def connect(self) -> dict:
        """Open the port (again after a halt: that resets most boards), sync line numbers, set G91."""
        if self._closing:
            raise LinkError("the link was closed", port=self.port)
        session = self._session
        self._open_port(fresh=session.halted or session.dead)
        hello: Future = Future()
        with self._lock:
            now = time.monotonic()
            if session.unconf or session.unsent:
                session.fail(LinkError("a new session replaced the one this was sent in", port=self.port), dead=True)
            session.reset(now)
            self._rx = bytearray()
            session.hello = hello
        self._run_after()
        try:
            hello.result(timeout=self.timing.boot_timeout)
        except TimeoutError:
            with self._lock:
                session.hello = None
            raise HandshakeError(
                f"no ok to M110 within {self.timing.boot_timeout} s (not Marlin, wrong baud "
                f"rate, or halted: press reset)",
                port=self.port,
            ) from None
        with self._lock:
            session.connected = True
            session.queue("G91")
            self._info = {
                "port": self.port,
                "protocol": 1,
                "dialect": "marlin",
                "firmware": session.banner,
                "motors": list(self.axes),
                "axes": dict(self.axes),
                "window": self.buffer,
                "units_per_quarter": self.units_per_quarter,
                "feed": self.feed,
                "boot_id": None,
            }
            return dict(self._info)

    @property
    def info(self) -> dict | None:
        with self._lock:
            return dict(self._info) if self._info else None

    # ------------------------------------------------------------ commands

    def _submit(self, verb: str, texts: list[str], turns=()) -> Motion:
        with self._lock:
            self._check_usable()
            motion = Motion(Step(verb, self._next_mid, tuple(turns)))
            self._next_mid += 1
            for i, text in enumerate(texts):
                self._session.queue(text, motion, "completed" if i == len(texts) - 1 else "received")
            self._session.pump(time.monotonic())
        self._run_after()
        return motion

    def _check_usable(self) -> None:
        if not self._session.connected:
            raise LinkError("not connected: call connect() first", port=self.port)
        if self._session.fault is not None:
            raise self._session.fault

    def enable(self, motors=()) -> Motion:
        return self._submit("ENABLE", ["M17"])

    def disable(self, motors=()) -> Motion:
        return self._submit("DISABLE", ["M18"])

    def home(self, motors=()) -> Motion:
        """No switches on a cube rig: the current position becomes zero (G92)."""
        return self._submit("HOME", ["G92 " + " ".join(f"{a}0" for a in self.axes.values())])

    def set_speed(self, quarter_ms: int) -> Motion:
        """Feed rate so a quarter turn takes ``quarter_ms`` (plus acceleration), for moves queued after."""
        if isinstance(quarter_ms, bool) or not isinstance(quarter_ms, int) or quarter_ms <= 0:
            raise ConfigError(f"quarter-turn time must be a positive whole number of ms, got {quarter_ms!r}")
        with self._lock:
            self._check_usable()
            self.feed = self.units_per_quarter / (quarter_ms / 60000.0)
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
        """Queue turns ``(face, q)`` or pairs ``((f1, q1), (f2, q2))``: one Motion each, done after its M400."""
        checked = [self._turns(entry) for entry in entries]
        with self._lock:
            self._check_usable()
            motions = []
            for turns in checked:
                motion = Motion(Step("TURN" if len(turns) == 1 else "PAIR", self._next_mid, tuple(turns)))
                self._next_mid += 1
                axes = [(self.axes[face], q) for face, q in turns]
                self._session.queue(move_command(axes, self.units_per_quarter, self.feed), motion, "received")
                self._session.queue("M400", motion, "completed")
                motions.append(motion)
            self._session.pump(time.monotonic())
        self._run_after()
        return motions

    def turn(self, face: str, quarter_turns: int) -> Motion:
        return self.plan([(face, quarter_turns)])[0]

    def wait(self, motions=None, timeout: float | None = None) -> list[dict]:
        if motions is None:
            with self._lock:
                lines = (*self._session.unconf, *self._session.unsent)
                motions = list({id(line.motion): line.motion for line in lines if line.motion}.values())
        return [m.wait(timeout) for m in motions]

    def estop(self, wait: bool = True) -> dict | Future:
        """M112 now, ahead of the queue; every motion not done fails (ESTOP). Marlin then needs a reset."""
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
            self._session.queue("M114", future=future)
            self._session.pump(time.monotonic())
        self._run_after()
        position = result_within(future, timeout or self.timing.query_timeout, "no answer to M114")
        faces = {face: position.get(axis) for face, axis in self.axes.items()}
        return {"position": faces, "done_through": self._session.done_mid, "halted": self._session.halted}

    def clear(self, timeout: float | None = None) -> dict:
        with self._lock:
            session = self._session
            if session.halted:
                raise DeviceFault(
                    "Marlin is halted (M112 or kill()) and ignores everything until it is reset: "
                    "press reset or power-cycle the board, then connect() (reopening the port "
                    "resets most boards); home afterwards",
                    code="HALTED",
                    port=self.port,
                )
            if session.dead or not session.connected:
                raise session.fault or LinkError("not connected: call connect() first", port=self.port)
            session.fault = None
        return self.query(timeout)

    def status(self) -> dict:
        with self._lock:
            session = self._session
            fault = session.fault
            return {
                "port": self.port,
                "connected": session.connected and not session.dead,
                "healthy": session.connected and fault is None,
                "halted": session.halted,
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
                "in_flight": len(session.unconf),
                "backlog": len(session.unsent),
                "done_through": session.done_mid,
                "next_line": session.next_n,
                "advanced_ok": session.advanced,
                "counters": dict(session.counters),
            }

    def close(self) -> None:
        with self._lock:
            if self._closing:
                return
            self._closing = True
            self._session.fail(LinkError("the link was closed before this was done", port=self.port), dead=True)
        self._run_after()
        self._close_port()

    def __enter__(self) -> MarlinLink:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
