"""Simulated servos pulsed by the host, for tests and dry runs: ``SimulatedServoBoard`` and ``SimulatedGpio``.

A board reads the pulse each output sends now (``pulses()``: µs, or None for no pulses) every
``tick``; each servo's horn chases its pulse at the servos' own speed (``servo_horn``) and a
``mechanism`` (``FlipSpinMechanism``) is told of the horns as they move. Every change of an
output's pulse is kept in ``trains`` as (time.monotonic(), channel, µs or None), so tests can check
the widths and the time each move took. ``start()`` returns a name (``sim-gpio-1``) under which
``attached`` finds the board: ``outputs()`` then gives the link the very outputs the board watches.

``SimulatedGpio`` is gpiozero's ``MockFactory`` with ``MockPWMPin`` pins (each pin records its
duty-cycle history in ``pin.states``); the PCA9685's register file is in ``pca9685_bus``.
"""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any

from ..flipspin_mechanism import MechanismBoard
from ..servo_horn import follow
from .gpio import GpioServos, pin_factory
from .outputs import PulseOutputs

_BOARDS: dict[str, SimulatedServoBoard] = {}
_NUMBERS = itertools.count(1)


def attached(name: str) -> SimulatedServoBoard | None:
    """The started simulated board called ``name``, if any."""
    return _BOARDS.get(name)


class SimulatedServoBoard(MechanismBoard):
    """Servos on ``channels`` (channel -> µs the horn starts at) moving ``mechanism``; subclasses say where the
    pulses come from (``pulses``) and what the link drives (``outputs``)."""

    kind = "servo"

    def __init__(self, channels: dict[int, float], *, mechanism=None, slew_us_per_ms: float = 2.0, tick: float = 0.002):
        self.mechanism, self.slew, self.tick = mechanism, slew_us_per_ms, tick
        self.horns: dict[int, float] = dict(channels)
        self.trains: list[tuple[float, int, float | None]] = []
        self.path: str | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sent: dict[int, float | None] = dict.fromkeys(channels)
        self._told: dict[int, float | None] = {}
        self._last = time.monotonic()

    # ------------------------------------------------------------ what subclasses give

    def pulses(self) -> dict[int, float | None]:
        raise NotImplementedError

    def outputs(self) -> PulseOutputs:
        """What the link drives. Each change first lets the time before it pass under the pulses it replaces:
        a simulator thread starved by a busy machine must not move the horns under a pulse sent since (a spin
        begun before the cover had opened is a layer turn)."""
        return CaughtUp(self.raw_outputs(), self)

    def raw_outputs(self) -> PulseOutputs:
        raise NotImplementedError

    # ------------------------------------------------------------ the board's life

    def start(self) -> str:
        self.path = f"sim-{self.kind}-{next(_NUMBERS)}"
        _BOARDS[self.path] = self
        self._last = time.monotonic()
        self._thread = threading.Thread(target=self._run, name=self.path, daemon=True)
        self._thread.start()
        return self.path

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        _BOARDS.pop(self.path or "", None)

    def _run(self) -> None:
        while not self._stop.wait(self.tick):
            self.advance(time.monotonic())

    def advance(self, now: float) -> None:
        """Let the time up to ``now`` pass: read the pulses, move the horns, tell the mechanism."""
        with self._lock:
            self._advance(now)

    def _advance(self, now: float) -> None:
        dt, self._last = max(0.0, now - self._last), now
        pulses = self.pulses()
        for channel, pulse in pulses.items():
            if pulse != self._sent.get(channel):
                self.trains.append((now, channel, pulse))
                self._sent[channel] = pulse
            if pulse is not None:
                self.horns[channel] = follow(self.horns[channel], pulse, self.slew, dt)
        horns = {ch: (self.horns[ch] if pulses.get(ch) is not None else None) for ch in self.horns}
        changed = {ch: h for ch, h in horns.items() if ch not in self._told or self._told[ch] != h}
        if changed and self.mechanism is not None:
            self.mechanism.servo_moved(changed, now)
        self._told = horns

    def train(self, channel: int) -> list[tuple[float, float | None]]:
        """(time, µs or None) of each change of one output's pulse."""
        with self._lock:
            return [(at, pulse) for at, ch, pulse in self.trains if ch == channel]

    def info(self) -> dict:
        with self._lock:
            return {"path": self.path, "horns": dict(self.horns), "pulses": dict(self._sent)}


class CaughtUp:
    """A board's outputs that bring the board up to now before each change."""

    def __init__(self, outputs: PulseOutputs, board: SimulatedServoBoard):
        self._outputs, self._board, self.where = outputs, board, outputs.where

    def pulse(self, channel: int, us: float) -> None:
        self._board.advance(time.monotonic())
        self._outputs.pulse(channel, us)

    def off(self, channel: int) -> None:
        self._board.advance(time.monotonic())
        self._outputs.off(channel)

    def close(self) -> None:
        self._outputs.close()


class SimulatedGpio(SimulatedServoBoard):
    """Servos on GPIO pins of gpiozero's mock pin factory; ``ranges``: each pin's lowest and highest µs."""

    kind = "gpio"

    def __init__(self, ranges: dict[int, tuple[float, float]], homes: dict[int, float], **options: Any):
        super().__init__(homes, **options)
        self.ranges = dict(ranges)
        self.factory = pin_factory("mock")

    def raw_outputs(self) -> PulseOutputs:
        return GpioServos(self.ranges, self.factory, "mock")

    def pulses(self) -> dict[int, float | None]:
        found: dict[int, float | None] = {}
        for pin in self.ranges:
            state = self.factory.pin(pin).state
            frequency = self.factory.pin(pin).frequency
            found[pin] = state / frequency * 1e6 if state and frequency else None
        return found
