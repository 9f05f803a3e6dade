"""An NXP PCA9685 16-channel PWM controller on I²C, through its registers: ``Pca9685`` and ``open_bus``.

Register map and figures from the NXP PCA9685 datasheet (Rev. 4, 2015): MODE1 (0x00), MODE2 (0x01),
LEDn_ON_L/H and LEDn_OFF_L/H (0x06 + 4n .. 0x09 + 4n), ALL_LED_* (0xFA-0xFD), PRE_SCALE (0xFE).
The PWM period has 4096 steps; PRE_SCALE = round(osc / (4096 x rate)) - 1, 3..255 (section 7.3.5),
and can only be written while MODE1's SLEEP bit is set; the oscillator needs 500 µs after SLEEP is
cleared (7.3.1.1). Bit 4 of LEDn_OFF_H is "full off" (7.3.3): the output sends no pulses at all.
Each channel's pulse starts at count 0 (LEDn_ON = 0) and ends at the pulse's width in counts.
"""

from __future__ import annotations

import os
import time
from typing import Any

from ..errors import ConfigError, PortError

MODE1, MODE2, LED0, ALL_LED, PRE_SCALE = 0x00, 0x01, 0x06, 0xFA, 0xFE
RESTART, AUTO_INCREMENT, SLEEP, ALLCALL = 0x80, 0x20, 0x10, 0x01
OUTDRV = 0x04  # MODE2: totem-pole outputs, as servo signal lines want
FULL = 0x10  # bit 4 of LEDn_ON_H / LEDn_OFF_H: full on / full off
STEPS = 4096
OSCILLATOR_HZ = 25_000_000.0  # the internal oscillator (datasheet typical; boards vary by a few per cent)
PRESCALE_RANGE = (3, 255)
CHANNELS = 16
WAKE_S = 0.0005


def prescale(rate_hz: float, oscillator_hz: float = OSCILLATOR_HZ) -> int:
    """PRE_SCALE for a PWM rate (datasheet equation 1)."""
    value = round(oscillator_hz / (STEPS * rate_hz)) - 1
    low, high = PRESCALE_RANGE
    if not low <= value <= high:
        lowest, highest = oscillator_hz / (STEPS * (high + 1)), oscillator_hz / (STEPS * (low + 1))
        raise ConfigError(f"PCA9685 PWM frequency must be {lowest:.0f}..{highest:.0f} Hz, got {rate_hz:g}")
    return value


def rate_hz(pre_scale: int, oscillator_hz: float = OSCILLATOR_HZ) -> float:
    """The PWM rate a PRE_SCALE value gives."""
    return oscillator_hz / (STEPS * (pre_scale + 1))


def counts(us: float, rate: float) -> int:
    """A pulse of ``us`` microseconds in steps of the PWM period."""
    return max(1, min(STEPS - 1, round(us * 1e-6 * rate * STEPS)))


def open_bus(number: int) -> Any:
    """``smbus2.SMBus`` on /dev/i2c-``number``; a machine without it gets a ``PortError`` naming the bus."""
    path = f"/dev/i2c-{number}"
    if not os.path.exists(path):
        raise PortError(
            f"no {path}: I²C is off or there is no such bus; on a Pi enable it (raspi-config, Interface Options, "
            "I2C, or dtparam=i2c_arm=on in config.txt) and reboot",
            port=path,
        )
    try:
        from smbus2 import SMBus

        return SMBus(number)
    except PermissionError:
        raise PortError(f"no permission to open {path}: add the user to the i2c group", port=path) from None
    except OSError as error:
        raise PortError(f"cannot open {path}: {error.strerror or error}", port=path) from None


class Pca9685:
    """The board at ``address`` on ``bus`` (an ``smbus2.SMBus`` or anything with its byte and block calls)."""

    def __init__(
        self, bus: Any, address: int, frequency_hz: float, *, where: str, oscillator_hz: float = OSCILLATOR_HZ
    ):
        self.bus, self.address = bus, address
        self.where = f"{where}, address 0x{address:02x}"
        self.pre_scale = prescale(frequency_hz, oscillator_hz)
        self.rate = rate_hz(self.pre_scale, oscillator_hz)

    def start(self) -> None:
        """All outputs off, totem-pole outputs, the PWM rate set (asleep), then awake with auto-increment."""
        try:
            mode1 = self.bus.read_byte_data(self.address, MODE1)
            self.bus.write_byte_data(self.address, ALL_LED + 3, FULL)  # ALL_LED_OFF_H: full off
            self.bus.write_byte_data(self.address, MODE2, OUTDRV)
            self.bus.write_byte_data(self.address, MODE1, (mode1 & ~RESTART & 0xFF) | SLEEP)
            self.bus.write_byte_data(self.address, PRE_SCALE, self.pre_scale)
            self.bus.write_byte_data(self.address, MODE1, AUTO_INCREMENT | ALLCALL)
            time.sleep(WAKE_S)
        except OSError as error:
            raise PortError(
                f"no PCA9685 answers ({error.strerror or error}): check its wiring, its power (VCC) and its "
                "address jumpers (i2cdetect -y 1 lists the addresses on the bus)",
                port=self.where,
            ) from None

    def _write(self, channel: int, values: list[int]) -> None:
        try:
            self.bus.write_i2c_block_data(self.address, LED0 + 4 * channel, values)
        except OSError as error:
            raise PortError(f"channel {channel}: write failed ({error.strerror or error})", port=self.where) from None

    def pulse(self, channel: int, us: float) -> None:
        off = counts(us, self.rate)
        self._write(channel, [0, 0, off & 0xFF, off >> 8])

    def off(self, channel: int) -> None:
        self._write(channel, [0, 0, 0, FULL])

    def close(self) -> None:
        try:
            self.bus.write_byte_data(self.address, ALL_LED + 3, FULL)
            self.bus.write_byte_data(self.address, MODE1, SLEEP | ALLCALL)
        except OSError:
            pass  # the board is gone: it sends nothing either
        finally:
            close = getattr(self.bus, "close", None)
            if close is not None:
                close()
