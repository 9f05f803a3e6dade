"""A simulated Marlin 2.1 board on a pseudo-terminal, for ``MarlinLink`` tests.

``SimulatedMarlin(...).start()`` returns a pty path. A thread speaks
Marlin's serial dialect: the boot banner (``start``, ``echo:Marlin 2.1.2``,
...), line numbers and checksums checked as Marlin does (``Error:...``,
``Resend: <last+1>``, ``ok``, and the rest of the receive buffer dropped),
one ``ok`` per executed line, a planner of ``planner`` moves that take time
(path length / F), ``M400`` answered only when the planner is empty (with
``busy: processing`` every ``busy_ms`` meanwhile), and ``M112`` caught on
receipt (emergency parser): the board halts and ignores everything until
``reset()``. Commands are read and executed one at a time: while a command
waits (M400, or a G1 with the planner full) nothing else is read.

Each finished move turns a ``VirtualCube`` face by the axis's motion in
quarter turns. Frame faults (``faults.Channel``, one per direction, a line
being a frame) come from a dict like ``{"drop": 0.05, "to_host": {...}}``.
"""

from __future__ import annotations

import math
import random
import select
import threading
import time
from collections import deque

from ..faults import Channel, DeviceTriggers, FaultConfig
from ..pty_device import PtyBoard, lines_from, read_into, write_from
from ..virtual_cube import VirtualCube
from .dialect import AXIS_LETTERS, DEFAULT_AXES, checksum, split_numbered

_MAX_LINE = 256  # junk this long with no line end is passed on for the parser to refuse

BANNER = (
    "start",
    "echo:Marlin 2.1.2",
    "echo: Last Updated: 2023-09-23 | Author: (robotd simulator)",
    "echo: Free Memory: 4096  PlannerBufferBytes: 1408",
)


class SimulatedMarlin(PtyBoard):
    """Marlin 2.1 on a pty. Public methods are thread-safe."""

    board_name = "simulated-marlin"

    def __init__(
        self,
        *,
        faults: dict | FaultConfig | None = None,
        axes: dict[str, str] | None = None,
        units_per_quarter: float = 90.0,
        planner: int = 16,
        busy_ms: float = 1000.0,
        advanced_ok: bool = False,
        reset_on_open: bool = True,
        boot_ms: float = 0.0,
        state: str | None = None,
        seed: int | None = None,
    ):
        self.faults = FaultConfig.from_config(faults)
        self._rng = random.Random(seed if seed is not None else self.faults.seed)
        self._face = {axis: face for face, axis in (axes or DEFAULT_AXES).items()}
        self.units_per_quarter, self.planner_size = units_per_quarter, planner
        self.busy_s, self.advanced_ok = busy_ms / 1000, advanced_ok
        self.reset_on_open, self.boot_s = reset_on_open, boot_ms / 1000
        self._cube = VirtualCube(state)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._to_device = Channel(self.faults.to_device, self._rng)
        self._to_host = Channel(self.faults.to_host, self._rng)
        self._master: int | None = None
        self.path: str | None = None
        self._thread: threading.Thread | None = None
        self._attached = self._silent = self._closed = False
        self._inbuf, self._outbuf = bytearray(), bytearray()
        self.accepted: list[tuple[int | None, str]] = []  # every executed line (number, command)
        self.moves_done: list[dict[str, float]] = []  # every finished move (axis -> delta)
        self.kill_times: list[float] = []
        self.line_errors = 0
        self._triggers = DeviceTriggers(self.faults)
        self._boot(time.monotonic())

    # ------------------------------------------------------------ public API

    @property
    def cube(self) -> str:
        with self._lock:
            return self._cube.facelets

    def set_state(self, facelets: str) -> None:
        """Load a cube state (e.g. a scramble); refused with ConfigError if impossible."""
        with self._lock:
            self._cube.set_state(facelets)

    def estop_times(self) -> list[float]:
        """``time.monotonic()`` of each M112 the board acted on."""
        with self._lock:
            return list(self.kill_times)

    def info(self) -> dict:
        with self._lock:
            return {
                "path": self.path,
                "last_line": self._last_n,
                "halted": self._halted,
                "relative": self._relative,
                "enabled": self._enabled,
                "planned": len(self._planner),
                "lines": len(self.accepted),
                "moves": len(self.moves_done),
                "line_errors": self.line_errors,
                "position": dict(self._pos),
                "to_device": dict(self._to_device.counts),
                "to_host": dict(self._to_host.counts),
            }

    def reset(self) -> None:
        """Reboot now (reset button, watchdog): moves in the planner are lost, line numbers forgotten."""
        with self._lock:
            self._boot(time.monotonic())

    def send(self, line: str) -> None:
        """Make the board print a line (e.g. an ``Error:`` of its own)."""
        with self._lock:
            self._say(line)

    # ------------------------------------------------------------ board state

    def _boot(self, now: float) -> None:
        self._to_device.clear()
        self._to_host.clear()
        self._rx: deque[bytes] = deque()
        self._planner: deque[tuple[float, dict[str, float]]] = deque()
        self._pos = {axis: 0.0 for axis in self._face}
        self._last_n, self._halted, self._relative, self._enabled = 0, False, False, False
        self._waiting: tuple | None = None  # ("M400", n) or ("G1", n, deltas, feed)
        self._feed, self._next_busy = 1000.0, 0.0
        self._booting_until = now + self.boot_s
        self._pending_banner = True  # printed once booted and someone listens

    def _say(self, line: str) -> None:
        self._to_host.push(line.encode("ascii") + b"\n", time.monotonic())

    def _ok(self, n: int | None) -> None:
        if self.advanced_ok and n is not None:
            self._say(f"ok N{n} P{self.planner_size - len(self._planner)} B4")
        else:
            self._say("ok")

    def _kill(self, now: float) -> None:
        self._halted, self._waiting = True, None
        self._planner.clear()  # steppers stop at once; unfinished moves never finish
        self._rx.clear()
        self.kill_times.append(now)
        self._say("echo:M112 Shutdown")
        self._say("Error:Printer halted. kill() called!")

    # ------------------------------------------------------------ command processing

    def _receive(self, data: bytes, now: float) -> None:
        for line in data.split(b"\n"):
            if b"M112" in line:  # EMERGENCY_PARSER: acted on as it arrives
                if not self._halted:
                    self._kill(now)
                continue
            if line.strip() and not self._halted:
                self._rx.append(line)

    def _process(self, now: float) -> None:
        self._advance(now)
        while not self._halted and (self._waiting is None or self._retry_wait(now)) and self._rx:
            self._line(self._rx.popleft().decode("latin-1"), now)

    def _advance(self, now: float) -> None:
        while self._planner and self._planner[0][0] <= now:
            _, deltas = self._planner.popleft()
            self.moves_done.append(deltas)
            for axis, delta in deltas.items():
                before = self._pos[axis]
                self._pos[axis] = before + delta
                q = round(self._pos[axis] / self.units_per_quarter) - round(before / self.units_per_quarter)
                self._cube.turn(self._face[axis], q)
            self._fire_triggers(now)

    def _fire_triggers(self, now: float) -> None:
        for name in self._triggers.due(len(self.moves_done)):
            if name == "reset":
                self._boot(now)
            elif name == "silent":
                self._silent = True
            else:
                self._close_master()

    def _retry_wait(self, now: float) -> bool:
        """Go on with the command that waits; True when it is done."""
        if self._waiting is None:
            return True
        kind, n = self._waiting[0], self._waiting[1]
        if kind == "M400" and self._planner:
            if now >= self._next_busy:
                self._say("busy: processing")
                self._next_busy = now + self.busy_s
            return False
        if kind == "G1":
            if len(self._planner) >= self.planner_size:
                return False
            self._plan(self._waiting[2], self._waiting[3], now)
        self._waiting = None
        self._ok(n)
        return True

    def _line_error(self, message: str) -> None:
        self.line_errors += 1
        self._say(f"Error:{message}, Last Line: {self._last_n}")
        self._rx.clear()  # Marlin empties its receive buffer
        self._say(f"Resend: {self._last_n + 1}")
        self._say("ok")

    def _line(self, raw: str, now: float) -> None:
        raw = raw.split(";", 1)[0].strip()
        n, command, given = split_numbered(raw)
        if n is not None:
            if "M110" in command:
                pass
            elif n != self._last_n + 1:
                return self._line_error("Line Number is not Last Line Number+1")
            if given is None:
                return self._line_error("No Checksum with line number")
            if checksum(raw[: raw.rfind("*")]) != given:
                return self._line_error("checksum mismatch")
            self._last_n = n
        elif given is not None:
            return self._line_error("No Line Number with checksum")
        if command:
            self.accepted.append((n, command))
            self._execute(n, command, now)

    def _execute(self, n: int | None, command: str, now: float) -> None:
        words = command.split()
        code, params = words[0].upper(), _params(words[1:])
        if code == "M110":
            self._last_n = int(params.get("N", 0))
        elif code in ("G90", "G91"):
            self._relative = code == "G91"
        elif code == "G92":
            for axis in params.keys() & self._pos.keys() or self._pos.keys():
                self._pos[axis] = params.get(axis, 0.0)
        elif code in ("M17", "M18", "M84"):
            self._enabled = code == "M17"
        elif code == "M114":
            self._say(" ".join(f"{a}:{self._pos[a]:.2f}" for a in AXIS_LETTERS if a in self._pos) + " E:0.00")
        elif code == "M400":
            self._waiting, self._next_busy = ("M400", n), now + self.busy_s
            return
        elif code in ("G0", "G1"):
            self._feed = params.get("F", self._feed)
            deltas = {a: (v if self._relative else v - self._pos[a]) for a, v in params.items() if a in self._pos}
            self._waiting = ("G1", n, deltas, self._feed)
            return
        elif code == "M115":
            self._say(
                "FIRMWARE_NAME:Marlin 2.1.2 (robotd simulator) SOURCE_CODE_URL:github.com/MarlinFirmware/Marlin "
                f"PROTOCOL_VERSION:1.0 MACHINE_TYPE:cube-rig AXIS_COUNT:{len(self._pos)}"
            )
        else:
            self._say(f'echo:Unknown command: "{command}"')
        self._ok(n)

    def _plan(self, deltas: dict[str, float], feed: float, now: float) -> None:
        if not deltas:
            return
        start = self._planner[-1][0] if self._planner else now
        length = math.hypot(*deltas.values())
        self._planner.append((max(start, now) + length / max(feed, 1e-6) * 60.0, deltas))

    # ------------------------------------------------------------ the thread and the pty

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                if self._closed:
                    return
                self._cycle(time.monotonic())
            time.sleep(0.001)

    def _cycle(self, now: float) -> None:
        if self._master is None:  # closed; the loop sees _closed next
            return
        events = select.poll()
        events.register(self._master, select.POLLIN)
        attached = not any(ev & select.POLLHUP for _, ev in events.poll(0))
        if attached and not self._attached and self.reset_on_open:
            self._boot(now)
        self._attached = attached
        if not attached:
            return
        self._read(now)
        booting = now < self._booting_until
        delivered = self._to_device.take(now)
        if not self._silent and not booting:
            if self._pending_banner:
                self._pending_banner = False
                for line in BANNER:
                    self._say(line)
            if delivered:
                self._receive(delivered, now)
            self._process(now)
        out = self._to_host.take(now)
        if not self._silent:
            self._outbuf += out
            self._write()

    def _read(self, now: float) -> None:
        while self._master is not None and read_into(self._master, self._inbuf):
            for line in lines_from(self._inbuf, _MAX_LINE):
                self._to_device.push(line, now)

    def _write(self) -> None:
        write_from(self._master, self._outbuf)


def _params(words: list[str]) -> dict[str, float]:
    out = {}
    for word in words:
        try:
            out[word[0].upper()] = float(word[1:]) if len(word) > 1 else 0.0
        except ValueError:
            continue
    return out


if __name__ == "__main__":  # pragma: no cover - manual use: print the path, run until Ctrl-C
    sim = SimulatedMarlin()
    print(sim.start(), flush=True)
    try:
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        sim.stop()
