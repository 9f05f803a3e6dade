"""``[controller.grblhal]``: stock grblHAL, one axis per face."""

from __future__ import annotations

from pydantic import Field

from firmware_interface.grbl.dialect import AXIS_LETTERS
from firmware_interface.grbl.session import GrblTiming

from ..timing import timing_table
from .gcode import GcodeTable, face_axes

GrblTimingTable = timing_table("GrblTimingTable", GrblTiming)


class GrblTable(GcodeTable):
    axes: face_axes(AXIS_LETTERS) = None  # type: ignore[valid-type]
    timing: GrblTimingTable = Field(default_factory=GrblTimingTable)  # type: ignore[valid-type]
