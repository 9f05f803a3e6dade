"""``kind = "grblhal"``: stock grblHAL, one axis per face (``robot.controllers.gcode``)."""

from __future__ import annotations

from pathlib import Path

from firmware_interface.avr_board import AvrBoard
from firmware_interface.grbl.dialect import DEFAULT_AXES
from firmware_interface.grbl.link import GrblLink, GrblTiming
from firmware_interface.grbl.simulator import SimulatedGrbl

from ..config import Config
from ..motion import LinkMotion
from .gcode import NO_HOME, GcodeSettings, open_gcode_link, read_settings, simulated, stock_simulated

CANNOT = {
    "home": NO_HOME.format(
        name="grblHAL", command="$H", instead="square the faces by hand with the board switched off, then reconnect"
    ),
    "motors": "grblHAL switches its drivers itself ($1 = 255 keeps them on, see docs/hardware.md) "
    "and takes no command to switch them off",
}


def settings(config: Config, kind: str, rig) -> GcodeSettings:
    """``[controller.grblhal]`` (``robot.schema.controllers.grbl.GrblTable``)."""
    return read_settings(config, kind, rig, DEFAULT_AXES)


def open_link(controller, port: str, config: Config, data_dir: Path) -> GrblLink:
    options: GcodeSettings = controller.settings
    timing = GrblTiming(baudrate=options.baudrate, **options.timing)
    return open_gcode_link(GrblLink, options, port, config, timing=timing)


def simulator(controller, sim, rig) -> SimulatedGrbl | AvrBoard:
    """Our simulator of grblHAL, or (``[sim] firmware = "avr"``) the stock grbl build."""
    if sim.firmware == "avr":
        return stock_simulated("grbl", "", controller.settings, sim, rig, controller.settings.axes)
    return simulated(SimulatedGrbl, controller.settings, sim)


def motion(controller, link, rig) -> LinkMotion:
    return LinkMotion(link, rig.motors, rig=rig, cannot=CANNOT)
