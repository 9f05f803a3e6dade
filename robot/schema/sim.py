"""``[sim]``: the virtual cube, camera and lighting of dry runs, the simulated motors and the faults to inject."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from firmware_interface.robotd.avr import BOARDS
from firmware_interface.robotd.device import MotorTiming

from .base import Light, Puzzle, ScrambleMoves, Table, choice
from .rig import MotorName
from .timing import timing_table

Probability = Annotated[float, Field(ge=0, le=1, description="per frame, 0..1")]
Steps = Annotated[int, Field(ge=0, description="finished steps since the simulator started")]


class FrameFaultsTable(Table):
    """Per-frame fault rates of one direction (``to_device``, ``to_host``)."""

    drop: Probability | None = None
    corrupt: Probability | None = None
    duplicate: Probability | None = None
    delay: Probability | None = None
    noise: Probability | None = None
    delay_ms: float | None = Field(default=None, ge=0, description="how long a delayed frame is held, ms")


class FaultsTable(FrameFaultsTable):
    """Faults to inject: frame rates for both directions (or per direction), and device faults."""

    to_device: FrameFaultsTable | None = None
    to_host: FrameFaultsTable | None = None
    stall: list[MotorName] = Field(default=[], description="motors that stall part-way through their next move")
    limit: list[MotorName] = Field(default=[], description="motors whose home switch is never found")
    reset_after: Steps | None = None
    silent_after: Steps | None = None
    close_after: Steps | None = None
    seed: int | None = None


FIRMWARES = ("python", "avr")
SimMotorsTable = timing_table("SimMotorsTable", MotorTiming, skip=(), zero=True)


class SimTable(Table):
    puzzle: Puzzle = 3
    light: Light = "daylight"
    cameras: Literal["corners", "flip"] = Field(default="corners", description="a six-axis rig's simulated cameras")
    scramble_moves: ScrambleMoves = Field(default=0, description="0: a random state (2x2x2), 25 moves (3x3x3)")
    blur: float = Field(default=0.0, ge=0, le=10)
    jpeg: int = Field(default=0, ge=0, le=100, description="JPEG quality of the rendered frames, 0: none")
    motors: SimMotorsTable | None = None  # type: ignore[valid-type]
    faults: FaultsTable = Field(default_factory=FaultsTable)
    reset_on_open: bool = True
    firmware: choice(FIRMWARES) = Field(  # type: ignore[valid-type]
        default="python",
        description="python: the reference firmware (or our simulator of a marlin or grblhal controller); avr: "
        "the firmware binary under simavr (robotd's own, or the stock Marlin / grbl build of shared/stock-firmware)",
    )
    emergency_parser: bool = Field(
        default=False, description="avr with a marlin controller: run the stock build with EMERGENCY_PARSER on"
    )
    board: choice(BOARDS) = Field(  # type: ignore[valid-type]
        default="ramps",
        description="avr: the pin map it is built for",
    )
