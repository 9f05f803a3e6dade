"""``[controller]`` with its ``[controller.KIND]`` tables, and ``[serial]`` (the port; robotd's own link).

The timing tables take their keys from the link's own timing class (``firmware_interface``), so a
key the link gains is a key of the config at once; only the keys given reach the link, whose defaults
(for a serial port or the simulator's pty) fill in the rest.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, create_model, model_validator

from firmware_interface import ConfigError as LinkConfigError
from firmware_interface import LinkTiming, LogLimits
from firmware_interface.grbl.session import GrblTiming
from firmware_interface.maestro.timing import MaestroTiming
from firmware_interface.marlin.link import MarlinTiming

from ..controllers.gcode import DIALECTS
from .base import SIX_FACES, Table, distinct, must, raise_problems

MIB = 1024 * 1024


def timing_table(
    name: str, timing: type, skip: tuple[str, ...] = ("baudrate",), base: type[Table] = Table, zero: bool = False
) -> Any:
    """A table of ``timing``'s fields but ``skip``: times above 0 (``zero``: at least 0), counts (ints) at
    least 1; each optional, as the link's defaults fill in what is not given."""

    def key(field: Any) -> tuple[Any, Any]:
        if field.type in (int, "int"):
            return int | None, Field(default=None, ge=1)
        return float | None, Field(default=None, ge=0) if zero else Field(default=None, gt=0)

    return create_model(
        name,
        __base__=base,  # type: ignore[call-overload]
        __doc__=f"``{timing.__name__}``: seconds unless named otherwise",
        **{f.name: key(f) for f in fields(timing) if f.name not in skip},
    )


class _LinkTimingBase(Table):
    @model_validator(mode="after")
    def _detects_silence(self) -> Any:
        try:
            LinkTiming.from_config(self.given())
        except LinkConfigError as error:
            raise ValueError(str(error).removeprefix("link timing: ")) from None
        return self


SerialTiming = timing_table("SerialTiming", LinkTiming, skip=(), base=_LinkTimingBase)


class SerialTable(Table):
    """The rig's serial port; for robotd's own firmware also the link's timing, its trace and fault dumps."""

    port: str | None = Field(default=None, description="a device path (/dev/serial/by-id/...) or a pyserial URL")
    trace: str | None = None
    trace_max_mb: float = Field(default=LogLimits.trace_max_bytes / MIB, ge=0.01, le=1024)
    trace_backups: int = Field(default=LogLimits.trace_backups, ge=1, le=100)
    keep_fault_logs: int = Field(default=LogLimits.fault_logs, ge=0, le=10_000)
    timing: SerialTiming = Field(default_factory=SerialTiming)  # type: ignore[valid-type]


def _axis_letter(dialect: str) -> BeforeValidator:
    letters = DIALECTS[dialect].letters
    return must(
        lambda v: isinstance(v, str) and len(v) == 1 and v in letters, f"one axis letter of {', '.join(letters)}"
    )


class _GcodeTable(Table):
    units_per_quarter: float = Field(default=90.0, gt=0, le=100_000, description="axis units per quarter turn")
    feed: float | None = Field(
        default=None, gt=0, le=1e8, description="units/min; default: a quarter turn in [rig] quarter_turn_s"
    )
    baudrate: int = Field(default=115200, ge=300, le=4_000_000)


MarlinTimingTable = timing_table("MarlinTimingTable", MarlinTiming)
GrblTimingTable = timing_table("GrblTimingTable", GrblTiming)
MaestroTimingTable = timing_table("MaestroTimingTable", MaestroTiming, skip=("baudrate", "servo_us_per_ms"))


class MarlinTable(_GcodeTable):
    axes: Annotated[dict[str, Annotated[str, _axis_letter("marlin")]], SIX_FACES, distinct("an axis")] | None = None
    buffer: int = Field(default=3, ge=1, le=64, description="lines in flight (at most Marlin's BUFSIZE - 1)")
    timing: MarlinTimingTable = Field(default_factory=MarlinTimingTable)  # type: ignore[valid-type]


class GrblTable(_GcodeTable):
    axes: Annotated[dict[str, Annotated[str, _axis_letter("grblhal")]], SIX_FACES, distinct("an axis")] | None = None
    timing: GrblTimingTable = Field(default_factory=GrblTimingTable)  # type: ignore[valid-type]


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


class ControllerTable(Table):
    """Which motor controller the rig is wired to; the table of that kind (only that one) configures it."""

    kind: Literal["robotd", "marlin", "grblhal", "maestro"] = "robotd"
    marlin: MarlinTable = Field(default_factory=MarlinTable)
    grblhal: GrblTable = Field(default_factory=GrblTable)
    maestro: MaestroTable = Field(default_factory=MaestroTable)
