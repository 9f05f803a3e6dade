"""What ``[controller.gpio]`` and ``[controller.pca9685]`` share: servos the host pulses itself, their speed
limits, how fast the servos turn, and the link's timing (``firmware_interface.pwm_servo.PwmServoTiming``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from firmware_interface.pwm_servo.timing import PwmServoTiming

from ..base import Table, raise_problems
from ..timing import timing_table
from .servo import EndPoints

PwmServoTimingTable = timing_table("PwmServoTimingTable", PwmServoTiming, skip=("servo_us_per_ms",))


class PwmServo(EndPoints):
    speed: float = Field(default=0, ge=0, le=100_000, description="µs of pulse per second; 0: as fast as the servo")


class PwmServoTable(Table):
    spin: PwmServo  # each kind gives its servos with their pin or channel
    cover: PwmServo
    servo_us_per_ms: float = Field(
        default=2.0, gt=0, le=1000, description="how fast the servos turn: the plan's times and the moves' follow it"
    )
    timing: PwmServoTimingTable = Field(default_factory=PwmServoTimingTable)  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _own_outputs(self) -> Any:
        spin, cover = self.spin, self.cover
        key = "pin" if "pin" in type(spin).model_fields else "channel"
        if getattr(spin, key) == getattr(cover, key):
            raise_problems(
                [(f"cover.{key}", f"the spin and cover servos need their own {key}s; both are {getattr(spin, key)}")]
            )
        return self
