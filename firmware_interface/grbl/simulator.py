"""A simulated grblHAL board on a pseudo-terminal, for ``GrblLink`` tests and dry runs.

``SimulatedGrbl(...).start()`` returns a pty path. A thread runs a
``GrblMachine`` (machine.py: what the board does) behind a simulated
wire; ``classic=True`` makes it the stock grbl-Mega-5X 1.1q build of
shared/stock-firmware/ instead of grblHAL (builds.py: its banner, boot text,
``$I`` and slow resets). The ``VirtualCube``'s faces turn as their axes
move (``FaceMotors``): a face turns when its motor reaches another multiple
of a quarter turn, so a stop that leaves a motor between two holds the
face at the last one it reached, and a face taken away and back ends where
it was.

The wire: lines each way are frames for ``faults.Channel`` (drop, corrupt,
duplicate, delay, noise, per direction, as SimulatedMarlin takes them).
Real-time bytes from the host are no frames: they take no faults,
but keep their place in the stream and act on arrival, as in grbl's
receive interrupt. Bytes that faults put into a line act as
grbl would act on them (a ``!`` holds the feed, a byte from 0x80 up
vanishes), except 0x18: the simulated wire never resets the board, since
a reset by line noise is a board reset, which ``reset()`` and
``reset_after`` test. Device faults ``reset_after``, ``silent_after`` and
``close_after`` count finished moves.

A board that resets on open boots for ``boot_ms``, deaf; with
``hears_while_booting`` the real-time bytes that reach it meanwhile act
once its banner is out (as stock grbl under simavr, whose receive
interrupt runs before it prints the banner): a 0x18 sent while it boots
brings a second banner.
"""

from __future__ import annotations

import random
import threading
import time
from collections import deque

from ..axis_steps import motor_steps
from ..faults import Channel, DeviceTriggers, FaultConfig
from ..pty_device import PtyBoard, read_into, write_from
from ..virtual_cube import FaceMotors, VirtualCube
from .builds import GRBLHAL, MEGA_5X
from .dialect import AXIS_LETTERS, DEFAULT_AXES, REALTIME, STEPS_SETTING, axis_letters
from .machine import GrblMachine

_MAX_LINE = 256  # junk this long with no line end is passed on as it is


class SimulatedGrbl(PtyBoard):
    """grblHAL on a pty. Public methods are thread-safe."""

    board_name = "simulated-grbl"

    def __init__(
        self,
        *,
        faults: dict | FaultConfig | None = None,
        axes: dict[str, str] | None = None,
        units_per_quarter: float = 90.0,
        steps_per_quarter: float | dict[str, float] = 400.0,
        steps_per_unit: dict[str, float] | None = None,
        axis_count: int = 6,
        planner: int | None = None,
        hold_ms: float | None = None,
        reset_on_open: bool = True,
        boot_ms: float = 0.0,
        hears_while_booting: bool = False,
        start_locked: bool = False,
        report_wpos: bool = False,
        classic: bool = False,
        offsets: dict[str, float] | None = None,
        state: str | None = None,
        seed: int | None = None,
    ):
        self.faults = FaultConfig.from_config(faults)
        seed = seed if seed is not None else self.faults.seed
        self._face = {axis: face for face, axis in (axes or DEFAULT_AXES).items()}
        letters = axis_letters(axis_count)
        if not 3 <= axis_count <= len(AXIS_LETTERS):
            raise ValueError(f"grblHAL has 3 to {len(AXIS_LETTERS)} axes, not {axis_count}")
        self.units_per_quarter = units_per_quarter
        self._quarter_steps = motor_steps(steps_per_quarter, self._face)
        self.reset_on_open, self.boot_s = reset_on_open, boot_ms / 1000
        self.hears_while_booting = hears_while_booting
        self._heard_booting: list[bytes] = []  # real-time bytes that act once the banner is out
        self._cube = VirtualCube(state)
        self._motors = FaceMotors(self._cube, self._face, self._quarter_steps)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        # one generator per direction: what the host sends does not shift the faults of the replies
        self._to_device = Channel(self.faults.to_device, random.Random(seed))
        self._to_host = Channel(self.faults.to_host, random.Random(None if seed is None else seed + 1))
        self._triggers = DeviceTriggers(self.faults)
        self._master: int | None = None
        self.path: str | None = None
        self._thread: threading.Thread | None = None
        self._attached = self._silent = self._closed = False
        self._inbuf, self._framing, self._outbuf = bytearray(), bytearray(), bytearray()
        self._wire: deque[tuple[float, bytes, bool]] = deque()  # (due, bytes, real-time byte from the host)
        self.moves_done: list[dict[str, float]] = []  # every finished move (axis -> motion)
        self.machine = GrblMachine(
            letters=letters,
            planner=planner,
            hold_s=None if hold_ms is None else hold_ms / 1000,
            start_locked=start_locked,
            report_wpos=report_wpos,
            build=MEGA_5X if classic else GRBLHAL,
            offsets=offsets,
            say=self._say,
            finished=self._finished,
        )
        built = {axis: self._quarter_steps.get(axis, 400.0) / units_per_quarter for axis in letters}
        built |= steps_per_unit or {}
        for index, axis in enumerate(letters):  # $100...: the board built to turn each face right, unless told
            self.machine.eeprom.values[STEPS_SETTING + index] = f"{built[axis]:.6f}"
        self._mangles: dict[str, list[list]] = {"to_device": [], "to_host": []}  # [find, replace, times left]
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

    @property
    def accepted(self) -> list[str]:
        """Every line the board executed (cleaned as grbl cleans it), in order."""
        with self._lock:
            return list(self.machine.accepted)

    @property
    def move_times(self) -> list[tuple[float, float]]:
        """When each finished segment started and ended (``time.monotonic()``; a feed hold's pause aside)."""
        with self._lock:
            return list(self.machine.move_times)

    @property
    def kill_times(self) -> list[float]:
        return self.estop_times()

    def estop_times(self) -> list[float]:
        """``time.monotonic()`` of each soft reset (0x18) the board acted on."""
        with self._lock:
            return list(self.machine.resets)

    def info(self) -> dict:
        with self._lock:
            now, m = time.monotonic(), self.machine
            return {
                "path": self.path,
                "state": m.state(now),
                "locked": m.locked,
                "planned": len(m.planner),
                "position": dict(m.mpos),
                "offsets": dict(m.g92),
                "lines": len(m.accepted),
                "moves": len(self.moves_done),
                "line_errors": len(m.errors),
                "errors": list(m.errors),
                "to_device": dict(self._to_device.counts),
                "to_host": dict(self._to_host.counts),
            }

    def reset(self) -> None:
        """Reboot now (reset button, watchdog): the planner is lost and the position is zero again."""
        with self._lock:
            self._boot(time.monotonic())

    def send(self, line: str) -> None:
        """Make the board print a line (e.g. an ``ALARM:1`` of its own)."""
        with self._lock:
            self._say(line)

    def alarm(self, code: int) -> None:
        """Raise an alarm as the board would (1: a limit switch hit): motion stops, the board locks (after a limit
        alarm it reads nothing until a soft reset)."""
        with self._lock:
            self.machine.alarm(code, time.monotonic())

    def mangle_next(self, find: str, replace: str, times: int = 1, direction: str = "to_device") -> None:
        """The next ``times`` lines that contain ``find`` travel with it replaced (a garbled line on cue, on
        top of any random faults): lines from the host, or with ``direction="to_host"`` the board's replies."""
        with self._lock:
            self._mangles[direction].append([find.encode("latin-1"), replace.encode("latin-1"), times])

    def feed_hold(self) -> None:
        """The feed-hold button (or a ``!`` the wire made): motion pauses until ``~``."""
        with self._lock:
            self.machine.receive(b"!", time.monotonic())

    # ------------------------------------------------------------ board

    def _boot(self, now: float) -> None:
        self._to_device.clear()
        self._to_host.clear()
        self._framing.clear()
        self._wire.clear()
        self.machine.power_on()
        self._motors.power_on()
        self._heard_booting.clear()
        self._booting_until = now + self.boot_s
        self._pending_banner = True  # printed once booted and someone listens

    def _say(self, line: str) -> None:
        self._to_host.push(self._mangled(line.encode("ascii") + b"\r\n", "to_host"), time.monotonic())

    def _finished(self, segment) -> None:
        start, end = segment.start, segment.end
        deltas = {axis: end[axis] - start[axis] for axis in end if end[axis] != start[axis]}
        if not deltas:
            return  # a dwell
        for axis in deltas:  # grbl keeps positions in whole steps
            per_unit = self.machine.eeprom.steps_per_unit(axis)
            self._motors.move(axis, round(end[axis] * per_unit) - round(start[axis] * per_unit))
        if not segment.whole:
            return  # a part of a move: the move is done when its last part is
        self.moves_done.append(deltas)
        for name in self._triggers.due(len(self.moves_done)):
            if name == "reset":
                self._boot(time.monotonic())
            elif name == "silent":
                self._silent = True
            else:
                self._close_master()

    # ------------------------------------------------------------ the thread and the pty

    def _cycle(self, now: float) -> None:
        if not self._host_attached(now, self._boot if self.reset_on_open else None):
            return
        awake = not self._silent and now >= self._booting_until
        self._read(now)
        if awake and self._pending_banner:
            self._pending_banner = False
            self.machine.welcome()
            for data in self._heard_booting:
                self.machine.receive(data, now)
            self._heard_booting.clear()
        while self._wire and self._wire[0][0] <= now:
            _, data, from_host = self._wire.popleft()
            if awake:  # a booting or hung board hears nothing
                self.machine.receive(data, now, resets=from_host)
            elif from_host and self.hears_while_booting and not self._silent:
                self._heard_booting.append(data)
        if awake:
            self.machine.advance(now)
        out = self._to_host.take(now)
        if not self._silent:
            self._outbuf += out
            write_from(self._master, self._outbuf)

    def _read(self, now: float) -> None:
        """Real-time bytes from the host travel alone; the rest is framed into lines for the faulty wire."""
        while self._master is not None and read_into(self._master, self._inbuf):
            for byte in bytes(self._inbuf):
                if byte in REALTIME or byte >= 0x80:
                    self._on_wire(bytes((byte,)), now, True)
                    continue
                self._framing.append(byte)
                if byte == 0x0A or len(self._framing) > _MAX_LINE:
                    self._line_to_wire(self._mangled(bytes(self._framing), "to_device"), now)
                    self._framing.clear()
            self._inbuf.clear()

    def _line_to_wire(self, frame: bytes, now: float) -> None:
        self._to_device.push(frame, now)  # drop, corrupt, duplicate, delay, noise
        due = self._to_device.next_due()
        if due is not None:
            self._on_wire(self._to_device.take(due), due, False)

    def _on_wire(self, data: bytes, due: float, from_host: bool) -> None:
        """Bytes arrive in the order they were sent: nothing overtakes a line the wire holds back."""
        if self._wire:
            due = max(due, self._wire[-1][0])
        self._wire.append((due, data, from_host))

    def _mangled(self, line: bytes, direction: str) -> bytes:
        for mangle in self._mangles[direction]:
            find, replace, times = mangle
            if times and find in line:
                mangle[2] -= 1
                return line.replace(find, replace, 1)
        return line


if __name__ == "__main__":  # pragma: no cover - manual use: print the path, run until Ctrl-C
    sim = SimulatedGrbl()
    print(sim.start(), flush=True)
    try:
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        sim.stop()
