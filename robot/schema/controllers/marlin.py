"""``[controller.marlin]``: stock Marlin 2.1, one axis per face."""

from __future__ import annotations

from pydantic import Field

from firmware_interface.marlin.link import MarlinTiming

from ..timing import timing_table
from .gcode import GcodeTable, face_axes

# X Y Z, and for axes 4..9 the names Marlin 2.1 may give them: I J K by default, A B C U V W when configured so
AXIS_LETTERS = "XYZIJKABCUVW"

MarlinTimingTable = timing_table("MarlinTimingTable", MarlinTiming)


class MarlinTable(GcodeTable):
    axes: face_axes(AXIS_LETTERS) = None  # type: ignore[valid-type]
    buffer: int = Field(default=3, ge=1, le=3, description="robotd's lines in Marlin's 4-line queue")
    timing: MarlinTimingTable = Field(default_factory=MarlinTimingTable)  # type: ignore[valid-type]
