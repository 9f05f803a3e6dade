"""``kind = "marlin"``: stock Marlin 2.1 on a 3D-printer board, one axis per face (``robot.controllers.gcode``).

``[controller.marlin]`` takes the G-code keys and::

    buffer = 3                   # most lines of robotd's in Marlin's 4-line command queue at once (1 to 3)

Dry runs use our simulator of Marlin, or with ``[sim] firmware = "avr"``
the stock Marlin build under simavr (``[sim] emergency_parser = true``: the
one with EMERGENCY_PARSER).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from firmware_interface.avr_board import AvrBoard
from firmware_interface.marlin.dialect import DEFAULT_AXES, named_as
from firmware_interface.marlin.link import MarlinLink, MarlinTiming
from firmware_interface.marlin.simulator import SimulatedMarlin

from ..config import Config
from ..motion import LinkMotion
from .gcode import NO_HOME, GcodeSettings, open_gcode_link, read_settings, simulated, stock_simulated

CANNOT = {
    "home": NO_HOME.format(
        name="Marlin",
        command="G28",
        instead="switch the motors off, square the faces by hand, switch them on again",
    )
}


def settings(config: Config, kind: str, rig) -> GcodeSettings:
    """``[controller.marlin]`` (``robot.schema.controllers.marlin.MarlinTable``)."""
    options = read_settings(config, kind, rig, DEFAULT_AXES)
    return replace(options, buffer=config.section(f"controller.{kind}").model.buffer)


def open_link(controller, port: str, config: Config, data_dir: Path) -> MarlinLink:
    options: GcodeSettings = controller.settings
    timing = MarlinTiming(baudrate=options.baudrate, **options.timing)
    return open_gcode_link(MarlinLink, options, port, config, timing=timing, buffer=options.buffer)


def simulator(controller, sim, rig) -> SimulatedMarlin | AvrBoard:
    """Our simulator of Marlin, or (``[sim] firmware = "avr"``) the stock build, with EMERGENCY_PARSER when
    ``[sim] emergency_parser``; the stock build names axes 4-6 A B C."""
    options = controller.settings
    if sim.firmware == "avr":
        axes = {face: named_as(axis, "XYZABC") for face, axis in options.axes.items()}
        return stock_simulated("marlin", "ep" if sim.emergency_parser else "", options, sim, rig, axes)
    return simulated(SimulatedMarlin, options, sim)


def motion(controller, link, rig) -> LinkMotion:
    return LinkMotion(link, rig.motors, rig=rig, cannot=CANNOT)
