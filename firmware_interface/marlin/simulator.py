"""A simulated Marlin 2.1 board on a pseudo-terminal, for ``MarlinLink`` tests and dry runs.

``SimulatedMarlin(...).start()`` returns a pty path. A thread runs a
``MarlinMachine`` (machine.py: what the stock binaries of
shared/stock-firmware do on the wire, from the receive buffer and the
4-line command queue to M410 and M112), prints its boot text once a host
listens, and turns a ``VirtualCube`` as its axes move: a face turns when its
motor reaches another multiple of ``steps_per_quarter`` steps (units times
the axis's M92 steps per unit), as the simavr harness counts the steps of
the real binary (a move a stop cut short turns the face only if it got that
far). The board is built with ``steps_per_quarter / units_per_quarter``
steps per unit on every axis unless ``steps_per_unit`` (axis -> value)
says otherwise, and no axis moves faster than ``max_feed`` units/s (its
M203) nor speeds up faster than ``acceleration`` units/s² (M201, M204;
``machine.STOCK_LIMITS`` are the stock builds').

Axes are named as the stock build names them (``letters``, default ``X Y
Z A B C``); ``axes`` maps faces to them, ``I J K`` standing for axes 4-6
whatever they are called. Frame faults (``faults.Channel``, one per
direction, a line being a frame) come from a dict like ``{"drop": 0.05,
"to_host": {...}}``, and ``reset_after``, ``silent_after`` and
``close_after`` count finished moves.
"""

from __future__ import annotations

import random
import threading
import time

from ..axis_steps import motor_steps
from ..faults import Channel, DeviceTriggers, FaultConfig
from ..pty_device import PtyBoard, lines_from, read_into, write_from
from ..virtual_cube import FaceMotors, VirtualCube
from .dialect import DEFAULT_AXES, named_as
from .machine import Build, MarlinMachine

_MAX_LINE = 256  # junk this long with no line end is passed on for the board to refuse


class SimulatedMarlin(PtyBoard):
    """Marlin 2.1 on a pty. Public methods are thread-safe."""

    board_name = "simulated-marlin"
    cycle_s = 0.001

    def __init__(
        self,
        *,
        faults: dict | FaultConfig | None = None,
        axes: dict[str, str] | None = None,
        letters: str = "XYZABC",
        units_per_quarter: float = 90.0,
        steps_per_quarter: float | dict[str, float] = 400.0,
        steps_per_unit: dict[str, float] | None = None,
        planner: int = 16,
        busy_ms: float = 2000.0,
        emergency_parser: bool = False,
        advanced_ok: bool = False,
        max_feed: float = 10000.0,
        acceleration: float = 1e9,
        reset_on_open: bool = True,
        boot_ms: float = 0.0,
        state: str | None = None,
        seed: int | None = None,
    ):
        self.faults = FaultConfig.from_config(faults)
        self._rng = random.Random(seed if seed is not None else self.faults.seed)
        self._face = {named_as(axis, letters): face for face, axis in (axes or DEFAULT_AXES).items()}
        self.units_per_quarter = units_per_quarter
        self._quarter_steps = motor_steps(steps_per_quarter, self._face)
        self.reset_on_open, self.boot_s = reset_on_open, boot_ms / 1000
        self._cube = VirtualCube(state)
        self._motors = FaceMotors(self._cube, self._face, self._quarter_steps)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._to_device = Channel(self.faults.to_device, self._rng)
        self._to_host = Channel(self.faults.to_host, self._rng)
        self._master: int | None = None
        self.path: str | None = None
        self._thread: threading.Thread | None = None
        self._attached = self._silent = self._closed = False
        self._inbuf, self._outbuf = bytearray(), bytearray()
        built = {axis: self._quarter_steps.get(axis, 400.0) / units_per_quarter for axis in letters}
        built |= steps_per_unit or {}
        build = Build(
            letters,
            planner,
            busy_ms / 1000,
            emergency_parser,
            advanced_ok,
            steps_per_unit=tuple(built.values()),
            max_feed=max_feed,
            acceleration=acceleration,
        )
        self._machine = MarlinMachine(build, self._say, self._moved)
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
        """``time.monotonic()`` of each stop (M410, M112) the board acted on: when its motors stopped."""
        with self._lock:
            return list(self._machine.stop_times)

    @property
    def accepted(self) -> list[tuple[int | None, str]]:
        """Every line the board ran: (number or None, command)."""
        with self._lock:
            return list(self._machine.accepted)

    @property
    def moves_done(self) -> list[dict[str, float]]:
        """Every move that ran to its end (axis -> delta)."""
        with self._lock:
            return list(self._machine.moves_done)

    @property
    def move_times(self) -> list[tuple[float, float]]:
        """When each of ``moves_done`` started and ended (``time.monotonic()``)."""
        with self._lock:
            return list(self._machine.move_times)

    def info(self) -> dict:
        with self._lock:
            machine = self._machine
            return {
                "path": self.path,
                "last_line": machine.last_n,
                "halted": machine.halted,
                "relative": machine.relative,
                "enabled": machine.enabled,
                "planned": len(machine.planner),
                "lines": len(machine.accepted),
                "moves": len(machine.moves_done),
                "line_errors": machine.line_errors,
                "position": dict(machine.pos),
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
        self._machine.boot(now)
        self._motors.power_on()
        self._booting_until = now + self.boot_s
        self._pending_banner = True  # printed once booted and someone listens

    def _say(self, line: str) -> None:
        self._to_host.push(line.encode("latin-1", "replace") + b"\n", time.monotonic())

    def _moved(self, axis: str, delta: float, finished: bool) -> None:
        self._motors.move(axis, delta * self._machine.steps_per_unit.get(axis, 0.0))

    def _fire_triggers(self, now: float) -> None:
        for name in self._triggers.due(len(self._machine.moves_done)):
            if name == "reset":
                self._boot(now)
            elif name == "silent":
                self._silent = True
            else:
                self._close_master()

    # ------------------------------------------------------------ the thread and the pty

    def _cycle(self, now: float) -> None:
        if not self._host_attached(now, self._boot if self.reset_on_open else None):
            return
        self._read(now)
        delivered = self._to_device.take(now)
        if not self._silent and now >= self._booting_until:
            if self._pending_banner:
                self._pending_banner = False
                for line in self._machine.banner():
                    self._say(line)
            if delivered:
                self._machine.receive(delivered, now)
            self._machine.advance(now)
            self._fire_triggers(now)
        out = self._to_host.take(now)
        if not self._silent:
            self._outbuf += out
            write_from(self._master, self._outbuf)

    def _read(self, now: float) -> None:
        while self._master is not None and read_into(self._master, self._inbuf):
            for line in lines_from(self._inbuf, _MAX_LINE):
                self._to_device.push(line, now)


if __name__ == "__main__":  # pragma: no cover - manual use: print the path, run until Ctrl-C
    sim = SimulatedMarlin()
    print(sim.start(), flush=True)
    try:
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        sim.stop()
