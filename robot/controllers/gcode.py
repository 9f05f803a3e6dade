"""What the stock G-code controllers share (``marlin``, ``grbl``): one stepper axis per face.

``[controller.marlin]`` / ``[controller.grblhal]``::

    axes = { U = "X", R = "Y", F = "Z", D = "I", L = "J", B = "K" }   # the firmware's axis per face
    units_per_quarter = 90.0     # axis units per quarter turn (degrees on a rotary axis)
    steps_per_quarter = 800      # the motors' steps per quarter turn (200-step motor, 1/16): the board is set to it
    feed = 54000.0               # units/min; default: a quarter turn in [rig] quarter_turn_s
    baudrate = 115200
    [controller.marlin.timing]   # the link's waits, see MarlinTiming / GrblTiming

Motor names are the faces; ``[rig] direction`` flips a motor wired the
other way round. Marlin 2.1 names axes 4..9 ``I J K`` by default (``A B C U
V W`` when configured so); grblHAL uses ``X Y Z A B C`` (``U V`` on 7 or 8
axes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from firmware_interface import ConfigError as LinkConfigError
from firmware_interface.avr_board import AvrBoard
from firmware_interface.stock_firmware import STEPS_PER_QUARTER, UNITS_PER_QUARTER, stock_board
from solver.puzzles.cube.geometry import FACES

from ..config import Config
from ..errors import ConfigError

Link = TypeVar("Link")
Simulator = TypeVar("Simulator")

NO_HOME = "a {name} rig has no home switches (robotd never sends {command}): {instead}"


@dataclass(frozen=True)
class GcodeSettings:
    dialect: str
    axes: dict[str, str]
    units_per_quarter: float
    steps_per_quarter: dict[str, float] | None
    feed: float
    baudrate: int
    buffer: int  # lines in flight (Marlin's; grblHAL has 1)
    timing: dict


def read_settings(config: Config, kind: str, rig, default_axes: dict[str, str]) -> GcodeSettings:
    """``[controller.marlin]`` or ``[controller.grblhal]`` (``robot.schema.controllers``); ``default_axes``
    the firmware's axis of each face when ``axes`` is not given."""
    table = config.section(f"controller.{kind}").model
    if dict(rig.motors) != {face: face for face in FACES}:
        config.report(
            "rig.motors",
            f"with a {kind} controller the motors are the faces; map faces to axes in [controller.{kind}] axes instead",
        )
    return GcodeSettings(
        dialect=kind,
        axes=dict(table.axes or default_axes),
        units_per_quarter=table.units_per_quarter,
        steps_per_quarter=table.steps_per_quarter,
        feed=table.feed if table.feed is not None else table.units_per_quarter * 60.0 / rig.quarter_turn_s,
        baudrate=table.baudrate,
        buffer=1,
        timing=table.timing.given(),
    )


def open_gcode_link(link: Callable[..., Link], options: GcodeSettings, port: str, config: Config, **extra) -> Link:
    """``link`` (``MarlinLink``, ``GrblLink``) on ``port``, moving the faces' axes at the feed rate; what the
    link refuses is a ``ConfigError`` of ``[controller.KIND]``."""
    try:
        return link(
            port,
            axes=options.axes,
            units_per_quarter=options.units_per_quarter,
            steps_per_quarter=options.steps_per_quarter,
            feed=options.feed,
            **extra,
        )
    except LinkConfigError as error:
        raise ConfigError(f"{config.source}: [controller.{options.dialect}] {error}") from None


def stock_simulated(firmware: str, variant: str, options: GcodeSettings, sim, rig, axes: dict[str, str]) -> AvrBoard:
    """``[sim] firmware = "avr"``: the stock build of shared/stock-firmware on the simulated board
    (``firmware_interface.stock_firmware``), each face on the axis of its pin map ``axes`` names."""
    motors = options.steps_per_quarter
    if motors is None and options.units_per_quarter != UNITS_PER_QUARTER:
        raise LinkConfigError(
            f'firmware = "avr" runs the stock {firmware} build, which turns a face a quarter turn per '
            f"{UNITS_PER_QUARTER} units: set [controller.{options.dialect}] units_per_quarter = {UNITS_PER_QUARTER}, "
            "or steps_per_quarter (robotd then sets the build's steps per unit)"
        )
    reversed_motors = "".join(face for face, sign in rig.direction.items() if sign < 0)
    return stock_board(
        firmware,
        variant,
        axes=axes,
        faults=sim.faults,
        reset_on_open=sim.reset_on_open,
        reversed_motors=reversed_motors,
        steps_per_quarter={face: round(n) for face, n in motors.items()} if motors else STEPS_PER_QUARTER,
    )


def simulated(simulator: Callable[..., Simulator], options: GcodeSettings, sim) -> Simulator:
    """The same firmware simulated on a pty (``SimulatedMarlin``, ``SimulatedGrbl``); its moves take the time
    the feed rate gives them. Its motors take ``steps_per_quarter`` (400 when not given) and it is built with the
    steps per unit that turn them right at ``units_per_quarter`` (robotd's check passes; setting is not needed)."""
    return simulator(
        faults=sim.faults,
        axes=options.axes,
        units_per_quarter=options.units_per_quarter,
        steps_per_quarter=options.steps_per_quarter or 400.0,
        reset_on_open=sim.reset_on_open,
        boot_ms=50 if sim.reset_on_open else 0,
    )
