"""``[controller.gpio]``: the two servos of a flip/spin rig on the Pi's GPIO pins, through gpiozero."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .pwm_servo import PwmServo, PwmServoTable
from .servo import CoverPoints, SpinPoints


def _pin(default: int) -> Any:
    return Field(default=default, ge=0, le=27, description="BCM number (GPIO12 is header pin 32)")


class GpioSpin(SpinPoints, PwmServo):
    pin: int = _pin(13)


class GpioCover(CoverPoints, PwmServo):
    pin: int = _pin(12)


class GpioTable(PwmServoTable):
    factory: Literal["lgpio", "pigpio", "rpigpio", "mock"] = "lgpio"
    spin: GpioSpin = Field(default_factory=GpioSpin)
    cover: GpioCover = Field(default_factory=GpioCover)
