"""Host side of a rig run by stock Marlin 2.1 on a 3D-printer board: ``MarlinLink``.

It offers what ``robot.motion.LinkMotion`` uses of ``RigLink`` (connect,
enable, home, set_speed, plan, estop, status, clear, query, info, close,
port) and returns the same ``Motion`` objects, so the daemon can drive it
unchanged. One stepper per face, on a Marlin axis each (default U:X R:Y F:Z
D:I L:J B:K); a face turn of q quarter turns is a relative ``G1`` of
``q * units_per_quarter``, two opposite faces one ``G1`` with both axes.

Protocol (gcode.py has the line format and the replies):

* connect: the board usually resets when the port opens; ``N0 M110 N0`` is
  repeated until an ``ok`` comes (sooner after the ``start`` banner), then
  ``G91``. ``info["protocol"]`` is 1 (no MOTOR/SPEED frames), ``dialect``
  is ``marlin``.
* Every line is numbered and checksummed; at most ``buffer`` lines await
  their ``ok``. ``Resend: n`` sends again from line n (Marlin has already
  dropped the lines after the bad one, and refuses any line number it has
  seen: nothing runs twice).
* Truthful completion: each move is ``G1`` then ``M400``; Marlin answers
  M400 only once the planner is empty, and that ``ok`` completes the
  motion. Cost: the planner drains between moves (no look-ahead blending,
  one round trip per move; about 1-3 ms on USB), which a cube rig, whose
  faces must stop square before the next turn anyway, hardly notices.
* Plain ``ok`` carries no line number, so oks are counted (the ``ok`` that
  follows a ``Resend`` belongs to the refused line). With ADVANCED_OK
  (``ok N<n> ...``) the number is used instead and counting is not needed.
  When nothing is heard for ``probe_after`` while lines await an ok (a
  lost line or a lost ok), the oldest such line is sent again: Marlin runs
  it if it never got it, or answers ``Resend: last+1``, which tells what it
  has done.
* ``Error:`` other than a bad line number or checksum is a ``DeviceFault``
  (code ERROR, or HALTED for kill()); ``start`` while connected is a
  ``DeviceReset``; nothing heard for ``silence`` s while a line awaits its
  ok (``busy: processing`` counts as heard; ``busy_silence`` while an M400
  waits, since a lost keepalive is no sign of a dead board) is ``DeviceSilent``.
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
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass

from solver.puzzles.cube.geometry import OPPOSITE

from ..errors import (
    AckTimeout,
    ConfigError,
    DeviceFault,
    DeviceReset,
    DeviceSilent,
    HandshakeError,
    LinkError,
    PortError,
)
from ..line_port import LinePort
from ..motion import Motion, result_within
from ..steps import Step
from .dialect import DEFAULT_AXES, move_command, numbered, parse_position, parse_reply, reset_line_numbers

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MarlinTiming:
    """Everything MarlinLink waits for, in seconds."""

    baudrate: int = 115200
    boot_timeout: float = 5.0  # connect(): the board's bootloader and banner take up to ~2 s
    sync_interval: float = 0.5  # repeat M110 this often during connect
    settle: float = 0.1  # after the handshake ok: late oks of repeated M110s are ignored
    probe_after: float = 0.4  # nothing heard with lines awaiting ok: send the oldest again
    silence: float = 2.0  # DeviceSilent after this long without a reply
    busy_silence: float = 5.0  # ... or this long after ``busy: processing``
    reopen_pause: float = 0.1  # between closing and reopening the port (a reset by DTR needs it)
    estop_retry: float = 0.05
    estop_timeout: float = 0.5
    query_timeout: float = 2.0
    write_timeout: float = 0.5
    poll: float = 0.005


@dataclass
class _Line:
    n: int
    text: str
    motion: Motion | None = None
    role: str = ""  # "received" (the G1 of a move) or "completed"
    future: Future | None = None  # query(): M114's position


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
        self.timing, self.buffer, self._history_size = timing or MarlinTiming(), buffer, history
        self._lock = threading.Lock()
        self._after: list = []
        self._ser = None
        self._thread: threading.Thread | None = None
        self._closing = False
        self._info: dict | None = None
        self._banner: str | None = None
        self._next_mid, self._done_mid = 1, 0
        self.counters = {
            "lines_sent": 0,
            "lines_confirmed": 0,
            "resends": 0,
            "line_errors": 0,
            "probes": 0,
            "busy": 0,
            "stray_oks": 0,
            "motions_done": 0,
        }
        self._reset_session(0.0)

    def _reset_session(self, now: float) -> None:
        self._connected = self._dead = self._halted = self._advanced = self._busy = self._probing = False
        self._fault: LinkError | None = None
        self._hello: Future | None = None
        self._hello_due = self._hold_until = self._last_probe = 0.0
        self._last_rx = self._waiting_since = now
        self._next_n, self._swallow, self._received_n = 1, 0, 0
        self._unsent: deque[_Line] = deque()
        self._unconf: deque[_Line] = deque()
        self._history: dict[int, _Line] = {}
        self._estop: list | None = None  # [future, sent at, next retry]
        self._position: dict | None = None
        self._rx = bytearray()

    # ------------------------------------------------------------ lock, port, I/O thread

    def _resolve(self, future: Future | None, value=None, error: BaseException | None = None) -> None:
        def settle():
            if future is not None and not future.done():
                future.set_exception(error) if error is not None else future.set_result(value)

        self._after.append(settle)

    def _on_raw_line(self, raw: bytes, now: float) -> None:
        self._on_line(raw.decode("ascii", "replace").strip(), now)

    def _port_lost(self, why: str) -> None:
        self._fail(PortError(why, port=self.port), dead=True)

    # ------------------------------------------------------------ replies

    def _on_line(self, text: str, now: float) -> None:
        if not text:
            return
        reply = parse_reply(text)
        self._last_rx, self._busy = now, reply.kind == "busy"
        log.debug("%s < %s", self.port, text)
        if reply.kind == "banner":
            self._banner = f"Marlin {reply.text}"
        if self._hello is not None:
            return self._handshake_reply(reply, now)
        if reply.kind == "ok":
            self._on_ok(reply)
        elif reply.kind == "resend":
            self._on_resend(reply.n)
        elif reply.kind == "busy":
            self.counters["busy"] += 1
        elif reply.kind == "position":
            self._position = parse_position(reply.text)
        elif reply.kind == "error":
            self._on_error(reply, now)
        elif reply.kind == "start" and self._connected:
            self._fail(
                DeviceReset("the board reset (start banner): queued moves are lost, connect() again", port=self.port),
                dead=True,
            )
        self._pump(now)

    def _handshake_reply(self, reply, now: float) -> None:
        if reply.kind == "ok":
            self._resolve(self._hello, True)
            self._hello = None
            self._hold_until = now + self.timing.settle
        elif reply.kind in ("start", "banner"):
            self._hello_due = now + 0.05  # it just booted: greet it once the banner is out

    def _on_ok(self, reply) -> None:
        if reply.n is not None:
            self._advanced, self._received_n = True, max(self._received_n, reply.n)
            while self._unconf and self._unconf[0].n <= reply.n:
                self._confirm(self._unconf.popleft())
            while self._unsent and self._unsent[0].n <= reply.n:
                self._confirm(self._unsent.popleft())
        elif self._advanced:
            pass  # the ok after a Resend: no line of ours
        elif self._swallow:
            self._swallow -= 1
        elif self._unconf and time.monotonic() >= self._hold_until:
            self._confirm(self._unconf.popleft())
        else:
            self.counters["stray_oks"] += 1

    def _on_resend(self, n: int | None) -> None:
        self.counters["resends"] += 1
        if n is None or not 1 <= n <= self._next_n:
            return  # misread: the next Resend will say it again
        if n <= self._received_n:
            return  # an old Resend doubled by the line: "ok N" said n arrived
        if self._probing:  # answering our probe: Marlin was idle, all before n ran
            while self._unconf and self._unconf[0].n < n:
                self._confirm(self._unconf.popleft())
            self._probing, self._swallow = False, 0
        if not self._advanced:
            self._swallow += 1
        again = [line for line in self._unconf if line.n >= n]
        first = again[0].n if again else (self._unsent[0].n if self._unsent else self._next_n)
        older = [self._history[k] for k in range(n, first) if k in self._history]
        if len(older) != first - n:
            return self._fail(
                LinkError(f"Marlin asks for line {n} again, which is no longer kept", port=self.port), dead=True
            )
        self._unconf = deque(line for line in self._unconf if line.n < n)
        self._unsent.extendleft(reversed([_Line(o.n, o.text) for o in older] + again))

    def _on_error(self, reply, now: float) -> None:
        if reply.line_error:
            self.counters["line_errors"] += 1
            return
        if reply.halted:
            self._halted = True
            if self._estop is not None:
                future, sent, _ = self._estop
                self._resolve(future, {"acknowledged_s": round(now - sent, 4), "done_through": self._done_mid})
                self._estop = None
                return
            return self._fail(
                DeviceFault(
                    f"Marlin halted: {reply.text} (reset the board, then connect())", code="HALTED", port=self.port
                ),
                dead=False,
            )
        self._fail(DeviceFault(f"Marlin reported: Error:{reply.text}", code="ERROR", port=self.port), dead=False)

    def _confirm(self, line: _Line) -> None:
        self.counters["lines_confirmed"] += 1
        motion = line.motion
        if line.future is not None:
            self._resolve(line.future, dict(self._position or {}))
        if motion is None:
            return
        self._resolve(motion.received, True)
        if line.role == "completed" and not motion.completed.done():
            self._resolve(motion.completed, {"mid": motion.mid, "command": motion.command, "line": line.n})
            self._done_mid = max(self._done_mid, motion.mid)
            self.counters["motions_done"] += 1

    # ------------------------------------------------------------ sending, timers, faults

    def _pump(self, now: float) -> None:
        while (
            self._unsent
            and len(self._unconf) < self.buffer
            and now >= self._hold_until
            and self._fault is None
            and self._connected
        ):
            line = self._unsent.popleft()
            if not self._unconf:
                self._waiting_since = now
            self._unconf.append(line)
            self.counters["lines_sent"] += 1
            self._write(numbered(line.n, line.text))

    def _tick(self, now: float) -> None:
        if self._hello is not None and now >= self._hello_due:
            self._hello_due = now + self.timing.sync_interval
            self._write(reset_line_numbers())
        if self._estop is not None:
            self._estop_tick(now)
        self._pump(now)
        if not self._unconf or self._fault is not None:
            return
        quiet = now - max(self._last_rx, self._waiting_since)
        if quiet > self._silence_limit():
            self._fail(
                DeviceSilent(
                    f"no reply for {quiet:.1f} s with line {self._unconf[0].n} ({self._unconf[0].text}) unanswered",
                    port=self.port,
                ),
                dead=True,
            )
        elif not self._busy and quiet > self.timing.probe_after and now - self._last_probe > self.timing.probe_after:
            line, self._last_probe, self._probing, self._swallow = self._unconf[0], now, True, 0
            self.counters["probes"] += 1
            self._write(numbered(line.n, line.text))

    def _silence_limit(self) -> float:
        """How long a quiet board is waited for: longer while it is busy or may be.

        An M400 is answered only once the planner is empty; meanwhile Marlin
        says ``busy: processing`` every M113 interval, and one of those lost
        on a noisy line must not end the session.
        """
        if self._busy or self._unconf[0].text.startswith("M400"):
            return self.timing.busy_silence
        return self.timing.silence

    def _estop_tick(self, now: float) -> None:
        if self._estop is None:
            return
        future, sent, retry = self._estop
        if now - sent > self.timing.estop_timeout:
            self._estop = None
            self._resolve(
                future, error=AckTimeout(f"M112 not confirmed within {self.timing.estop_timeout} s", port=self.port)
            )
        elif now >= retry:
            self._estop[2] = now + self.timing.estop_retry
            self._write(b"M112\n")

    def _fail(self, err: LinkError, dead: bool) -> None:
        err.done_through = self._done_mid
        if self._fault is None or (dead and not self._dead):
            self._fault = err
            if not self._closing:
                log.error("%s", err)
        self._dead |= dead
        for line in (*self._unconf, *self._unsent):
            for future in (line.future,) if line.motion is None else (line.motion.received, line.motion.completed):
                if future is not None:
                    self._resolve(future, error=self._fault)
        self._unconf.clear()
        self._unsent.clear()
        if dead and self._hello is not None:
            self._resolve(self._hello, error=err)

    def _queue(
        self, text: str, motion: Motion | None = None, role: str = "completed", future: Future | None = None
    ) -> None:
        line = _Line(self._next_n, text, motion, role, future)
        self._next_n += 1
        self._history[line.n] = line
        self._history.pop(line.n - self._history_size, None)
        self._unsent.append(line)

    # ------------------------------------------------------------ connect

    def connect(self) -> dict:
        """Open the port (again after a halt: that resets most boards), sync line numbers, set G91."""
        if self._closing:
            raise LinkError("the link was closed", port=self.port)
        self._open_port(fresh=self._halted or self._dead)
        hello: Future = Future()
        with self._lock:
            now = time.monotonic()
            if self._unconf or self._unsent:
                self._fail(LinkError("a new session replaced the one this was sent in", port=self.port), dead=True)
            self._reset_session(now)
            self._hello = hello
        self._run_after()
        try:
            hello.result(timeout=self.timing.boot_timeout)
        except TimeoutError:
            with self._lock:
                self._hello = None
            raise HandshakeError(
                f"no ok to M110 within {self.timing.boot_timeout} s (not Marlin, wrong baud "
                f"rate, or halted: press reset)",
                port=self.port,
            ) from None
        with self._lock:
            self._connected = True
            self._queue("G91")
            self._info = {
                "port": self.port,
                "protocol": 1,
                "dialect": "marlin",
                "firmware": self._banner,
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
                self._queue(text, motion, "completed" if i == len(texts) - 1 else "received")
            self._pump(time.monotonic())
        self._run_after()
        return motion

    def _check_usable(self) -> None:
        if not self._connected:
            raise LinkError("not connected: call connect() first", port=self.port)
        if self._fault is not None:
            raise self._fault

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
                self._queue(move_command(axes, self.units_per_quarter, self.feed), motion, "received")
                self._queue("M400", motion, "completed")
                motions.append(motion)
            self._pump(time.monotonic())
        self._run_after()
        return motions

    def turn(self, face: str, quarter_turns: int) -> Motion:
        return self.plan([(face, quarter_turns)])[0]

    def wait(self, motions=None, timeout: float | None = None) -> list[dict]:
        if motions is None:
            with self._lock:
                lines = (*self._unconf, *self._unsent)
                motions = list({id(line.motion): line.motion for line in lines if line.motion}.values())
        return [m.wait(timeout) for m in motions]

    def estop(self, wait: bool = True) -> dict | Future:
        """M112 now, ahead of the queue; every motion not done fails (ESTOP). Marlin then needs a reset."""
        future: Future = Future()
        with self._lock:
            if self._ser is None:
                raise PortError("emergency stop impossible: the port is not open", port=self.port)
            now = time.monotonic()
            self._write(b"M112\n")
            self._estop = [future, now, now + self.timing.estop_retry]
            self._halted = True
            self._fail(
                DeviceFault("emergency stop (M112): Marlin is halted until reset", code="ESTOP", port=self.port),
                dead=False,
            )
        self._run_after()
        return future.result() if wait else future

    def query(self, timeout: float | None = None) -> dict:
        """M114 through the queue: the position Marlin has planned to, per face, and the link's state."""
        future: Future = Future()
        with self._lock:
            self._check_usable()
            self._queue("M114", future=future)
            self._pump(time.monotonic())
        self._run_after()
        position = result_within(future, timeout or self.timing.query_timeout, "no answer to M114")
        faces = {face: position.get(axis) for face, axis in self.axes.items()}
        return {"position": faces, "done_through": self._done_mid, "halted": self._halted}

    def clear(self, timeout: float | None = None) -> dict:
        with self._lock:
            if self._halted:
                raise DeviceFault(
                    "Marlin is halted (M112 or kill()) and ignores everything until it is reset: "
                    "press reset or power-cycle the board, then connect() (reopening the port "
                    "resets most boards); home afterwards",
                    code="HALTED",
                    port=self.port,
                )
            if self._dead or not self._connected:
                raise self._fault or LinkError("not connected: call connect() first", port=self.port)
            self._fault = None
        return self.query(timeout)

    def status(self) -> dict:
        with self._lock:
            fault = self._fault
            return {
                "port": self.port,
                "connected": self._connected and not self._dead,
                "healthy": self._connected and fault is None,
                "halted": self._halted,
                "fault": None
                if fault is None
                else {
                    "type": type(fault).__name__,
                    "code": getattr(fault, "code", None),
                    "message": str(fault),
                    "done_through": fault.done_through,
                },
                "handshake": dict(self._info) if self._info else None,
                "last_heard_s": round(time.monotonic() - self._last_rx, 4) if self._connected else None,
                "in_flight": len(self._unconf),
                "backlog": len(self._unsent),
                "done_through": self._done_mid,
                "next_line": self._next_n,
                "advanced_ok": self._advanced,
                "counters": dict(self.counters),
            }

    def close(self) -> None:
        with self._lock:
            if self._closing:
                return
            self._closing = True
            self._fail(LinkError("the link was closed before this was done", port=self.port), dead=True)
        self._run_after()
        self._close_port()

    def __enter__(self) -> MarlinLink:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
