"""A simulated PCA9685 on a simulated I²C bus: ``SimulatedI2cBus`` (the register file, with smbus2's calls) and
``SimulatedPca9685`` (its servo outputs moving a mechanism).

The register file follows the datasheet (pca9685.py): writes to PRE_SCALE are ignored unless MODE1's SLEEP
bit is set; a block write walks the registers only with MODE1's auto-increment bit (else it rewrites one);
writes to ALL_LED_* go to every channel; an output sends no pulses while its "full off" bit is set or
the chip sleeps. Another address than the board's is an ``OSError`` (errno 121, Remote I/O), as Linux
answers when no device acknowledges.
"""

from __future__ import annotations

import errno
import threading
from typing import Any

from .outputs import PulseOutputs
from .pca9685 import (
    ALL_LED,
    AUTO_INCREMENT,
    CHANNELS,
    FULL,
    LED0,
    MODE1,
    OSCILLATOR_HZ,
    PRE_SCALE,
    SLEEP,
    STEPS,
    Pca9685,
)
from .simulator import SimulatedServoBoard

POWER_ON_MODE1 = SLEEP | 0x01  # SLEEP and ALLCALL (datasheet 7.3.1)
POWER_ON_PRESCALE = 0x1E  # 200 Hz


class SimulatedI2cBus:
    """One PCA9685 at ``address``; its 256 registers in ``registers``; every write in ``writes``. A block write
    takes effect whole, as the chip changes its outputs on the transfer's STOP (MODE2 OCH = 0, the power-on
    value): the board's thread never reads a pulse half written (new OFF_L, old OFF_H: 2451 µs between 1500
    and 1200)."""

    def __init__(self, address: int = 0x40, oscillator_hz: float = OSCILLATOR_HZ):
        self.address, self.oscillator_hz = address, oscillator_hz
        self.registers = bytearray(256)
        self.registers[MODE1], self.registers[PRE_SCALE] = POWER_ON_MODE1, POWER_ON_PRESCALE
        for channel in range(CHANNELS):
            self.registers[LED0 + 4 * channel + 3] = FULL  # LEDn_OFF_H: full off at power-on
        self.writes: list[tuple[int, int]] = []
        self.closed = False
        self._lock = threading.Lock()

    def _check(self, address: int) -> None:
        if self.closed:
            raise OSError(errno.EBADF, "the bus is closed")
        if address != self.address:
            raise OSError(errno.EREMOTEIO, "Remote I/O error")

    def read_byte_data(self, address: int, register: int) -> int:
        self._check(address)
        return self.registers[register]

    def write_byte_data(self, address: int, register: int, value: int) -> None:
        self._check(address)
        with self._lock:
            self._store(register, value)

    def write_i2c_block_data(self, address: int, register: int, values: list[int]) -> None:
        self._check(address)
        with self._lock:
            walk = bool(self.registers[MODE1] & AUTO_INCREMENT)
            for offset, value in enumerate(values):
                self._store(register + offset if walk else register, value)

    def close(self) -> None:
        self.closed = True

    def _store(self, register: int, value: int) -> None:
        self.writes.append((register, value))
        if register == PRE_SCALE and not self.registers[MODE1] & SLEEP:
            return  # the datasheet: PRE_SCALE takes writes only while asleep
        if ALL_LED <= register < ALL_LED + 4:
            for channel in range(CHANNELS):
                self.registers[LED0 + 4 * channel + register - ALL_LED] = value
        self.registers[register] = value & 0xFF

    def pulse_us(self, channel: int) -> float | None:
        """What output ``channel`` sends now: its pulse width in µs, or None for no pulses."""
        with self._lock:
            r = bytes(self.registers)
        if r[MODE1] & SLEEP:
            return None
        base = LED0 + 4 * channel
        on_h, off_h = r[base + 1], r[base + 3]
        if off_h & FULL:
            return None
        period = (r[PRE_SCALE] + 1) * STEPS / self.oscillator_hz
        if on_h & FULL:
            return period * 1e6
        on, off = r[base] | (on_h & 0x0F) << 8, r[base + 2] | (off_h & 0x0F) << 8
        return ((off - on) % STEPS) * period / STEPS * 1e6


class SimulatedPca9685(SimulatedServoBoard):
    """A PCA9685 board whose servos on ``homes``' channels move a mechanism; ``frequency_hz`` is the link's."""

    kind = "pca9685"

    def __init__(self, homes: dict[int, float], *, address: int = 0x40, frequency_hz: float = 50.0, **options: Any):
        super().__init__(homes, **options)
        self.bus = SimulatedI2cBus(address)
        self.frequency_hz = frequency_hz

    def raw_outputs(self) -> PulseOutputs:
        self.bus.closed = False  # a new session opens the bus again
        board = Pca9685(self.bus, self.bus.address, self.frequency_hz, where=f"simulated I²C bus ({self.path})")
        board.start()
        return board

    def pulses(self) -> dict[int, float | None]:
        return {channel: self.bus.pulse_us(channel) for channel in self.horns}
