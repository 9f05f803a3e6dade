"""A simulated Pololu Maestro on a pseudo-terminal, for ``MaestroLink`` tests and dry runs.

``SimulatedMaestro(...).start()`` returns a pty path. A thread speaks the compact protocol
(maestro.py) as a Maestro does: commands are parsed byte by byte, malformed input sets error bits
(a data byte where a command byte belonged, an unknown command or a channel it lacks: protocol error;
a wrong CRC byte when ``crc``: CRC error), get position / moving state / errors / script status are
answered with exactly their bytes, and get errors clears the register. Each channel's pulse moves
under its speed and acceleration limits and the servo's horn follows it (servo.py); targets
are clamped into the channel's ``limits``. A ``mechanism`` (e.g. ``FlipSpinMechanism``) is told of
the horns as they move: ``mechanism.servo_moved({channel: µs or None}, now)``.

Faults (``faults.FaultConfig``): frame faults per direction, a frame being one command to the device
or one reply to the host; ``reset_after`` / ``silent_after`` / ``close_after`` count finished servo
moves (a horn reaching its target). ``reset()`` starts the Maestro afresh: every channel goes back to
its home target with no speed or acceleration limit, which moves the mechanism.
"""

from __future__ import annotations

import random
import threading
import time

from ..errors import ConfigError
from ..faults import Channel, FaultConfig
from ..flipspin_mechanism import MechanismBoard
from ..pty_device import PtyBoard, read_into, write_from
from . import dialect as mp
from .servo import ServoChannel

DEFAULT_HOME = 6000  # 1500 µs
DEFAULT_LIMITS = (3968, 8000)  # 992..2000 µs, the Maestro's factory range


class SimulatedMaestro(MechanismBoard, PtyBoard):
    """A Maestro with ``channels`` servo channels on a pty. Public methods are thread-safe.
    ``homes`` and ``limits`` are per channel, in quarter-µs; ``slew_us_per_ms`` is the servos' own
    top speed; ``script``: whether a (harmless) script runs, which ``script_error`` stops."""

    board_name = "simulated-maestro"

    def __init__(
        self,
        *,
        channels: int = 6,
        mechanism=None,
        faults: dict | FaultConfig | None = None,
        crc: bool = False,
        homes: dict[int, int] | None = None,
        limits: dict[int, tuple[int, int]] | None = None,
        slew_us_per_ms: float = 4.0,
        script: bool = False,
        seed: int | None = None,
    ):
        self.faults = FaultConfig.from_config(faults)
        if self.faults.stall or self.faults.limit:
            raise ConfigError("simulator faults: a Maestro has no stall or limit switches (stall, limit)")
        if not 1 <= channels <= mp.MAX_CHANNEL + 1:
            raise ConfigError(f"channels must be 1..{mp.MAX_CHANNEL + 1}, got {channels}")
        self._rng = random.Random(seed if seed is not None else self.faults.seed)
        self.crc, self.script, self.mechanism = crc, script, mechanism
        homes, limits = homes or {}, limits or {}
        self._servos = [
            ServoChannel(
                homes.get(ch, DEFAULT_HOME),
                *limits.get(ch, DEFAULT_LIMITS),
                slew_us_per_ms,
                horn=(homes.get(ch) or DEFAULT_HOME) / 4,
            )
            for ch in range(channels)
        ]
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._to_device = Channel(self.faults.to_device, self._rng)
        self._to_host = Channel(self.faults.to_host, self._rng)
        self._parser = mp.CommandParser(crc)
        self._master: int | None = None
        self.path: str | None = None
        self._thread: threading.Thread | None = None
        self._silent = self._closed = False
        self._inbuf, self._outbuf = bytearray(), bytearray()
        self._told: dict[int, float | None] = {}
        self._tripped: set[str] = set()
        self.commands: list[tuple[float, mp.Command]] = []  # every command executed, with its time
        self.off_times: list[float] = []  # when a channel was switched off (target 0)
        self.moves_done = 0
        self.resets = 0
        self._boot()
        self._last = time.monotonic()

    # ------------------------------------------------------------ public API

    def estop_times(self) -> list[float]:
        """``time.monotonic()`` of each time a channel was switched off (target 0): the e-stop acting."""
        with self._lock:
            return list(self.off_times)

    def info(self) -> dict:
        with self._lock:
            return {
                "path": self.path,
                "targets": [s.target for s in self._servos],
                "positions": [s.reported for s in self._servos],
                "horns": [s.horn for s in self._servos],
                "speeds": [s.speed for s in self._servos],
                "accels": [s.accel for s in self._servos],
                "errors": self._errors(),
                "moves_done": self.moves_done,
                "resets": self.resets,
                "script_running": self._script_running,
                "commands": len(self.commands),
                "to_device": dict(self._to_device.counts),
                "to_host": dict(self._to_host.counts),
            }

    def reset(self) -> None:
        """Start afresh (power glitch, watchdog): every channel to its home, limits and errors cleared."""
        with self._lock:
            self._boot()
            self.resets += 1

    def raise_errors(self, bits: int) -> None:
        """Set bits of the error register as the device would; a script error also stops the script."""
        with self._lock:
            self._parser.errors |= bits & mp.ERROR_MASK
            if bits & mp.SCRIPT_ERRORS:
                self._script_running = False

    # ------------------------------------------------------------ the device

    def _boot(self) -> None:
        self._to_device.clear()
        self._to_host.clear()
        self._parser = mp.CommandParser(self.crc)
        self._inbuf.clear()
        self._script_running = self.script
        for servo in self._servos:
            servo.start()

    def _errors(self) -> int:
        return self._parser.errors

    def _reply(self, data: bytes, now: float) -> None:
        self._to_host.push(data, now)

    def _execute(self, command: mp.Command, now: float) -> None:
        self.commands.append((now, command))
        code = command.code
        if code in (mp.SET_TARGET, mp.SET_SPEED, mp.SET_ACCEL, mp.GET_POSITION) and command.channel >= len(
            self._servos
        ):
            self._parser.errors |= mp.PROTOCOL_ERROR
            return
        if code == mp.SET_TARGET:
            self._servos[command.channel].set_target(command.value)
            if command.value == 0:
                self.off_times.append(now)
        elif code == mp.SET_SPEED:
            self._servos[command.channel].speed = command.value
        elif code == mp.SET_ACCEL:
            self._servos[command.channel].accel = min(command.value, mp.MAX_ACCEL)
        elif code == mp.GET_POSITION:
            value = self._servos[command.channel].reported
            self._reply(bytes((value & 0xFF, value >> 8)), now)
        elif code == mp.GET_MOVING:
            self._reply(bytes((int(any(s.moving for s in self._servos)),)), now)
        elif code == mp.GET_ERRORS:
            bits, self._parser.errors = self._parser.errors, 0
            self._reply(bytes((bits & 0xFF, bits >> 8)), now)
        elif code == mp.GO_HOME:
            for servo in self._servos:
                servo.set_target(servo.home)
        elif code == mp.STOP_SCRIPT:
            self._script_running = False
        elif code == mp.GET_SCRIPT_STATUS:
            self._reply(bytes((0 if self._script_running else 1,)), now)

    def _advance(self, now: float) -> None:
        dt, self._last = max(0.0, now - self._last), now
        for servo in self._servos:
            if servo.advance(dt):
                self.moves_done += 1
                self._after_move()
        horns = {ch: (s.horn if s.powered else None) for ch, s in enumerate(self._servos)}
        changed = {ch: h for ch, h in horns.items() if ch not in self._told or self._told[ch] != h}
        if changed and self.mechanism is not None:
            self.mechanism.servo_moved(changed, now)
        self._told = horns

    def _after_move(self) -> None:
        for key, act in (
            ("reset_after", self._boot),
            ("silent_after", self._go_silent),
            ("close_after", self._close_master),
        ):
            limit = getattr(self.faults, key)
            if limit is not None and self.moves_done >= limit and key not in self._tripped:
                self._tripped.add(key)
                self.resets += key == "reset_after"
                act()

    def _go_silent(self) -> None:
        self._silent = True

    # ------------------------------------------------------------ the thread and the pty

    def _cycle(self, now: float) -> None:
        self._advance(now)
        if self._closed or self._master is None:
            return
        while read_into(self._master, self._inbuf):
            pass
        for frame in self._frames():
            self._to_device.push(frame, now)
        delivered = self._to_device.take(now)
        if not self._silent:
            for command in self._parser.feed(delivered):
                self._execute(command, now)
        out = self._to_host.take(now)
        if not self._silent:
            self._outbuf += out
            write_from(self._master, self._outbuf)

    def _frames(self) -> list[bytes]:
        """Cut whole commands out of the input (a frame ends where the next command byte begins, or
        when the packet is complete); stray data bytes go as frames of their own."""
        frames, buf = [], self._inbuf
        while buf:
            end = 1
            while end < len(buf) and not buf[end] & 0x80:
                end += 1
            size = mp.packet_size(buf[0], self.crc) if buf[0] & 0x80 else None
            if size is not None and end >= size:
                end = size
            elif end == len(buf) and size is not None:
                break  # the rest of this packet is still on its way
            frames.append(bytes(buf[:end]))
            del buf[:end]
        return frames


if __name__ == "__main__":  # pragma: no cover - manual use: print the path, run until Ctrl-C
    sim = SimulatedMaestro()
    print(sim.start(), flush=True)
    try:
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        sim.stop()
