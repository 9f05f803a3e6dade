"""``[controller.maestro]``: a Pololu Maestro driving the two servos of a flip/spin rig, and the link's timing."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from firmware_interface.maestro.timing import MaestroTiming

from ..base import Table, raise_problems
from ..timing import timing_table
from .servo import CoverPoints, EndPoints, SpinPoints

MaestroTimingTable = timing_table("MaestroTimingTable", MaestroTiming, skip=("baudrate", "servo_us_per_ms"))


class _Servo(EndPoints):
    """One servo of the Maestro: its channel, its pulse width (µs) at each end-point, its speed and accel."""

    speed: int = Field(default=0, ge=0, le=10000, description="Maestro units; 0: as fast as the servo goes")
    accel: int = Field(default=0, ge=0, le=255, description="Maestro units; 0: no ramp")


def _channel(default: int) -> Any:
    return Field(default=default, ge=0, le=23)


class SpinServo(SpinPoints, _Servo):
    channel: int = _channel(0)


class CoverServo(CoverPoints, _Servo):
    channel: int = _channel(1)


class MaestroTable(Table):
    channels: int = Field(default=6, ge=1, le=24, description="Micro 6, Mini 12/18/24")
    crc: bool = False
    baudrate: int = Field(default=115200, ge=300, le=4_000_000)
    servo_us_per_ms: float = Field(default=2.0, gt=0, le=1000, description="how fast the servos really travel")
    spin: SpinServo = Field(default_factory=SpinServo)
    cover: CoverServo = Field(default_factory=CoverServo)
    timing: MaestroTimingTable = Field(default_factory=MaestroTimingTable)  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _channels(self) -> Any:
        top = self.channels - 1
        problems = [
            (f"{name}.channel", f"must be at most {top}; got {servo.channel}")
            for name, servo in (("spin", self.spin), ("cover", self.cover))
            if servo.channel > top
        ]
        if self.spin.channel == self.cover.channel:
            problems.append(
                ("cover.channel", f"the spin and cover servos need their own channels; both are {self.spin.channel}")
            )
        raise_problems(problems)
        return self
