"""What ``[controller.marlin]`` and ``[controller.grblhal]`` share: stock G-code firmware, one axis per face."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from ..base import PER_FACE, SIX_FACES, Table, distinct, must, number


def face_axes(letters: str) -> Any:
    """The ``axes`` key's type: the firmware's axis (one of ``letters``) for each face, no two faces sharing
    one; None gives the link's default axes."""
    axis = must(
        lambda v: isinstance(v, str) and len(v) == 1 and v in letters, f"one axis letter of {', '.join(letters)}"
    )
    return Annotated[dict[str, Annotated[str, axis]], SIX_FACES, distinct("an axis")] | None


QuarterSteps = Annotated[float, must(number(1, 100_000), "a number of motor steps per quarter turn, 1..100000")]


class GcodeTable(Table):
    units_per_quarter: float = Field(default=90.0, gt=0, le=100_000, description="axis units per quarter turn")
    # the motors' steps per quarter turn (full steps x microsteps x gearing / 4): robotd sets the board's steps
    # per unit to match at connect; None: it checks that every face turns by the same number of steps
    steps_per_quarter: Annotated[dict[str, QuarterSteps], SIX_FACES, PER_FACE] | None = None
    feed: float | None = Field(
        default=None, gt=0, le=1e8, description="units/min; default: a quarter turn in [rig] quarter_turn_s"
    )
    baudrate: int = Field(default=115200, ge=300, le=4_000_000)
