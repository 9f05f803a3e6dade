"""``kind = "marlin"`` and ``kind = "grblhal"``: stock G-code firmware, one stepper axis per face.

``[controller.marlin]`` / ``[controller.grblhal]``::

    axes = { U = "X", R = "Y", F = "Z", D = "I", L = "J", B = "K" }   # the firmware's axis per face
    units_per_quarter = 90.0     # axis units per quarter turn (degrees on a rotary axis)
    feed = 54000.0               # units/min; default: a quarter turn in [rig] quarter_turn_s
    baudrate = 115200
    buffer = 3                   # marlin only: lines in flight (at most BUFSIZE - 1; Marlin's default BUFSIZE is 4)
    [controller.marlin.timing]   # the link's waits, see MarlinTiming / GrblTiming

Motor names are the faces; ``[rig] direction`` flips a motor wired the
other way round. Marlin 2.1 names axes 4..9 ``I J K`` by default (``A B C U
V W`` when configured so); grblHAL uses ``X Y Z A B C`` (``U V`` on 7 or 8
axes).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from firmware_interface import ConfigError as LinkConfigError
from solver.puzzles.cube.geometry import FACES

from ..config import Config
from ..errors import ConfigError
from ..motion import LinkMotion


@dataclass(frozen=True)
class Dialect:
    letters: str  # axis letters the firmware accepts
    default_axes: str  # axis of U R F D L B
    link: str  # firmware_interface module and class of the host link
    timing: str
    simulator: str


DIALECTS = {
    "marlin": Dialect(
        "XYZIJKABCUVW",
        "XYZIJK",
        "marlin.link.MarlinLink",
        "marlin.link.MarlinTiming",
        "marlin.simulator.SimulatedMarlin",
    ),
    "grblhal": Dialect(
        "XYZABCUV", "XYZABC", "grbl.link.GrblLink", "grbl.link.GrblTiming", "grbl.simulator.SimulatedGrbl"
    ),
}


@dataclass(frozen=True)
class GcodeSettings:
    dialect: str
    axes: dict[str, str]
    units_per_quarter: float
    feed: float
    baudrate: int
    buffer: int
    timing: dict


def settings(config: Config, kind: str, rig) -> GcodeSettings:
    """``[controller.marlin]`` or ``[controller.grblhal]`` (``robot.schema.controllers``)."""
    table = config.section(f"controller.{kind}").model
    if dict(rig.motors) != {face: face for face in FACES}:
        config.report(
            "rig.motors",
            f"with a {kind} controller the motors are the faces; map faces to axes in [controller.{kind}] axes instead",
        )
    return GcodeSettings(
        dialect=kind,
        axes=dict(table.axes or zip(FACES, DIALECTS[kind].default_axes)),
        units_per_quarter=table.units_per_quarter,
        feed=table.feed if table.feed is not None else table.units_per_quarter * 60.0 / rig.quarter_turn_s,
        baudrate=table.baudrate,
        buffer=getattr(table, "buffer", 1),
        timing=table.timing.given(),
    )


def _load(path: str):
    import importlib

    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(f"firmware_interface.{module}"), name)


def open_link(controller, port: str, config: Config, data_dir: Path):
    options: GcodeSettings = controller.settings
    dialect = DIALECTS[options.dialect]
    timing = _load(dialect.timing)(baudrate=options.baudrate, **options.timing)
    extra = {"buffer": options.buffer} if options.dialect == "marlin" else {}
    try:
        return _load(dialect.link)(
            port,
            axes=options.axes,
            units_per_quarter=options.units_per_quarter,
            feed=options.feed,
            timing=timing,
            **extra,
        )
    except LinkConfigError as error:
        raise ConfigError(f"{config.source}: [controller.{options.dialect}] {error}") from None


def simulator(controller, sim, rig):
    """The same firmware simulated on a pty; its moves take the time the feed rate gives them."""
    options: GcodeSettings = controller.settings
    return _load(DIALECTS[options.dialect].simulator)(
        faults=sim.faults,
        axes=options.axes,
        units_per_quarter=options.units_per_quarter,
        reset_on_open=sim.reset_on_open,
        boot_ms=50 if sim.reset_on_open else 0,
    )


NO_HOME = "a {name} rig has no home switches (robotd never sends {command}): {instead}"
CANNOT = {
    "marlin": {
        "home": NO_HOME.format(
            name="Marlin",
            command="G28",
            instead="switch the motors off, square the faces by hand, switch them on again",
        )
    },
    "grblhal": {
        "home": NO_HOME.format(
            name="grblHAL", command="$H", instead="square the faces by hand with the board switched off, then reconnect"
        ),
        "motors": "grblHAL switches its drivers itself ($1 = 255 keeps them on, see docs/hardware.md) "
        "and takes no command to switch them off",
    },
}


def motion(controller, link, rig) -> LinkMotion:
    return LinkMotion(link, rig.motors, rig=rig, cannot=CANNOT[controller.settings.dialect])
