"""``[rig]``: its ``kind`` picks the table: a six-motor rig (one motor per face) or a two-servo flip/spin rig."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, Union

from pydantic import Discriminator, Field, Tag, model_validator

from firmware_interface.virtual_cube import CORNER_CUTTING_DEG
from solver.puzzles.cube.geometry import FACES

from ..flipspin.timing import FlipSpinTiming
from .base import PER_FACE, SIX_FACES, Table, distinct, must, number, raise_problems
from .errors import KIND

MotorName = Annotated[
    str,
    must(
        lambda v: isinstance(v, str) and v.isalnum() and 0 < len(v) <= 24,
        "a motor name (letters and digits, as the firmware names it)",
    ),
]
Direction = Annotated[int, must(lambda v: v in (1, -1), "1 or -1")]


def _whole(low: int, high: int) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, int) and low <= v <= high


Steps = Annotated[int, must(_whole(1, 20000), "a whole number of steps 1..20000")]
Rate = Annotated[int, must(_whole(1, 65535), "a whole number of steps/s 1..65535")]
Accel = Annotated[
    float, must(lambda v: number(0, 6553500)(v) and v > 0, "a number of steps/s² above 0, at most 6553500")
]


class StepperTable(Table):
    """Sent to a protocol-2 firmware at connect (MOTOR): each key one number for all motors or one per face."""

    steps_per_quarter: Annotated[dict[str, Steps], SIX_FACES, PER_FACE]
    max_rate: Annotated[dict[str, Rate], SIX_FACES, PER_FACE]
    accel: Annotated[dict[str, Accel], SIX_FACES, PER_FACE]


class SixAxisTable(Table):
    """One motor per face, named as the firmware names it; ``direction`` -1 for a motor mounted the other way."""

    kind: Literal["six-axis"] = "six-axis"
    motors: Annotated[dict[str, MotorName], SIX_FACES, distinct("a motor")] = {face: face for face in FACES}
    direction: Annotated[dict[str, Direction], SIX_FACES] = {face: 1 for face in FACES}
    quarter_turn_s: float = Field(default=0.15, gt=0, le=10)
    half_turn_s: float = Field(default=0.25, gt=0, le=10)
    settle_s: float = Field(default=0.02, ge=0, le=10)
    simultaneous_opposite: bool = True
    # a turn of an adjacent face may start this close to aligned (degrees; docs/hardware.md, "Overlapping turns")
    overlap_deg: float = Field(default=CORNER_CUTTING_DEG, ge=0, le=45)
    stepper: StepperTable | None = None


def _seconds(default: float, ge: float | None = None) -> Any:
    return Field(default=default, ge=ge, le=10) if ge is not None else Field(default=default, gt=0, le=10)


class FlipSpinTable(Table):
    """Two servos: a base that spins the cube and a cover that holds its upper layers and flips it
    (docs/hardware.md); the times are seconds per op (``robot.flipspin.timing``)."""

    kind: Literal["flip-spin"]
    planner: Literal["optimal", "naive"] = "optimal"
    flip_s: float = _seconds(FlipSpinTiming.flip_s)
    spin_quarter_s: float = _seconds(FlipSpinTiming.spin_quarter_s)
    spin_half_s: float = _seconds(FlipSpinTiming.spin_half_s)
    turn_quarter_s: float = _seconds(FlipSpinTiming.turn_quarter_s)
    turn_half_s: float = _seconds(FlipSpinTiming.turn_half_s)
    hold_s: float = _seconds(FlipSpinTiming.hold_s, ge=0)
    release_s: float = _seconds(FlipSpinTiming.release_s, ge=0)
    settle_s: float = _seconds(FlipSpinTiming.settle_s, ge=0)
    half_spins: bool = FlipSpinTiming.half_spins

    @model_validator(mode="after")
    def _halves_not_quicker(self) -> FlipSpinTable:
        # a half quicker than a quarter is a swapped pair of values, not a servo
        raise_problems(
            [
                (half, f"must be at least {quarter} ({getattr(self, quarter)}); got {getattr(self, half)}")
                for half, quarter in (("spin_half_s", "spin_quarter_s"), ("turn_half_s", "turn_quarter_s"))
                if getattr(self, half) < getattr(self, quarter)
            ]
        )
        return self


def _rig_kind(table: Any) -> Any:
    if isinstance(table, dict):
        return table.get(KIND, "six-axis")
    return getattr(table, KIND, None)


RigTable = Annotated[
    Union[  # noqa: UP007 (a discriminated union needs the Union[...] form)
        Annotated[SixAxisTable, Tag("six-axis")],
        Annotated[FlipSpinTable, Tag("flip-spin")],
    ],
    Discriminator(_rig_kind),
]
RIG_KINDS = ("six-axis", "flip-spin")
