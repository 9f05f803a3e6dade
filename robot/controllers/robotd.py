"""``kind = "robotd"``: a board running robotd's own firmware (docs/protocol.md), or its simulation.

Its link options stay where they always were: ``[serial] timing`` (the
link's timeouts, see ``firmware_interface.LinkTiming``) and ``[serial]
trace`` (a file that records every frame), rotated at ``trace_max_mb``
with ``trace_backups`` older files; the newest ``keep_fault_logs`` fault
dumps stay in ``<data_dir>/faults``. Dry runs use the Python
reference firmware, or the AVR firmware binary under simavr
(``[sim] firmware = "avr"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from firmware_interface import ConfigError as LinkConfigError
from firmware_interface import LinkTiming, LogLimits, RigLink, SimulatedFirmware
from firmware_interface.robotd.avr import AvrFirmware

from ..config import Config
from ..errors import ConfigError
from ..motion import LinkMotion


@dataclass(frozen=True)
class RobotdSettings:
    timing: dict
    trace: str | None
    logs: LogLimits = LogLimits()


LOG_KEYS = ("trace", "trace_max_mb", "trace_backups", "keep_fault_logs")
MIB = 1024 * 1024


def settings(config: Config, kind: str, rig) -> RobotdSettings:
    """``[serial]`` (``robot.schema.controllers.robotd.SerialTable``): the link's timing (the keys given; the link's
    defaults for its port fill in the rest when it opens), its trace and fault dumps."""
    serial = config.table("serial")
    logs = LogLimits(
        trace_max_bytes=round(serial.trace_max_mb * MIB),
        trace_backups=serial.trace_backups,
        fault_logs=serial.keep_fault_logs,
    )
    return RobotdSettings(timing=serial.timing.given(), trace=serial.trace, logs=logs)


def open_link(controller, port: str, config: Config, data_dir: Path) -> RigLink:
    options = controller.settings
    try:
        timing = LinkTiming.from_config(options.timing or None, port)
        return RigLink(
            port, timing=timing, trace=options.trace, fault_log_dir=Path(data_dir) / "faults", log_limits=options.logs
        )
    except LinkConfigError as error:
        raise ConfigError(f"{config.source}: [serial] {error}") from None


def simulator(controller, sim, rig):
    """The board of a dry run: the Python reference firmware, or the AVR firmware binary under simavr."""
    if sim.firmware == "avr":
        reversed_motors = "".join(face for face, sign in rig.direction.items() if sign < 0)
        return AvrFirmware(
            board=sim.board,
            steps_per_quarter=simulated_steps(rig),
            reversed_motors=reversed_motors,
            faults=sim.faults,
            reset_on_open=sim.reset_on_open,
        )
    return SimulatedFirmware(
        "six-axis",
        timing=sim.motors,
        faults=sim.faults,
        reset_on_open=sim.reset_on_open,
        boot_ms=50 if sim.reset_on_open else 0,
    )


def simulated_steps(rig) -> int | dict:
    """Steps per quarter turn of the simulated AVR rig's motors: as ``[rig.stepper]`` says, else the
    firmware's default (200), which is what the firmware assumes when robotd sends no ``MOTOR``."""
    if rig.stepper is None:
        return 200
    return {face: steps for face, (steps, _rate, _accel) in rig.stepper.items()}


def motion(controller, link, rig) -> LinkMotion:
    return LinkMotion(link, rig.motors, rig=rig)
