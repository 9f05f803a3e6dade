"""``[controller.pca9685]``: the two servos of a flip/spin rig on a PCA9685 PWM board on I²C."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from .pwm_servo import PwmServo, PwmServoTable
from .servo import CoverPoints, SpinPoints


def _channel(default: int) -> Any:
    return Field(default=default, ge=0, le=15)


class PcaSpin(SpinPoints, PwmServo):
    channel: int = _channel(0)


class PcaCover(CoverPoints, PwmServo):
    channel: int = _channel(1)


class Pca9685Table(PwmServoTable):
    bus: int = Field(default=1, ge=0, le=99, description="/dev/i2c-N; 1 on a Pi's header")
    address: int = Field(default=0x40, ge=0x40, le=0x7F, description="0x40 with no address jumper closed")
    frequency_hz: float = Field(default=50.0, ge=24, le=1526, description="the servo frame rate")
    oscillator_hz: float = Field(default=25_000_000.0, ge=20_000_000, le=30_000_000, description="the chip's clock")
    spin: PcaSpin = Field(default_factory=PcaSpin)
    cover: PcaCover = Field(default_factory=PcaCover)
