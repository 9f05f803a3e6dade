"""``[controller.maestro]``: a Pololu Maestro driving the two servos of a flip/spin rig, and the link's timing."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from firmware_interface.maestro.timing import MaestroTiming

from ..base import Table, raise_problems
from ..timing import timing_table

MaestroTimingTable = timing_table("MaestroTimingTable", MaestroTiming, skip=("baudrate", "servo_us_per_ms"))


MIN_APART_US = 20.0


class _Servo(Table):
    """One servo of the Maestro: its channel, its pulse width (µs) at each end-point, its speed and accel."""

    speed: int = Field(default=0, ge=0, le=10000, description="Maestro units; 0: as fast as the servo goes")
    accel: int = Field(default=0, ge=0, le=255, description="Maestro units; 0: no ramp")

    @model_validator(mode="after")
    def _apart(self) -> Any:
        pulses = {key: value for key, value in self if key.endswith("_us")}
        ordered = sorted(pulses.values())
        if any(b - a < MIN_APART_US for a, b in zip(ordered, ordered[1:])):
            name = type(self).__name__.removesuffix("Servo").lower()
            raise_problems(
                [
                    (
                        next(iter(pulses)),
                        f"the {name} end-points must be at least {MIN_APART_US:g} µs "
                        f"apart; got {', '.join(f'{v:g}' for v in pulses.values())}",
                    )
                ]
            )
        return self


def _channel(default: int) -> Any:
    return Field(default=default, ge=0, le=23)


def _pulse(default: float) -> Any:
    return Field(default=default, ge=400, le=2600, description="µs; within the channel's limits")


class SpinServo(_Servo):
    channel: int = _channel(0)
    ccw_us: float = _pulse(1000.0)  # spinner at -1
    home_us: float = _pulse(1500.0)
    cw_us: float = _pulse(2000.0)


class CoverServo(_Servo):
    channel: int = _channel(1)
    open_us: float = _pulse(1500.0)
    hold_us: float = _pulse(1200.0)
    flip_us: float = _pulse(1900.0)


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
