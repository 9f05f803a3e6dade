"""``kind = "maestro"``: a Pololu Maestro (or a clone) driving the two servos of a flip/spin rig.

``[controller.maestro]``::

    channels = 6                 # the board's channel count (Micro 6, Mini 12/18/24)
    crc = false                  # the Maestro's "Enable CRC" serial setting (recommended: see docs/hardware.md)
    baudrate = 115200            # UART mode only; the USB command port ignores it
    servo_us_per_ms = 2.0        # how fast the servos really travel (the Maestro cannot see them); an
                                 # MG996R-class servo: about 2 µs of pulse per ms (90° in ~0.25 s)
    [controller.maestro.spin]    # the base: its channel and its pulse width (µs) at each end-point
    channel = 0
    ccw_us = 1000                # spinner at -1 (a quarter turn counter-clockwise seen from below)
    home_us = 1500
    cw_us = 2000
    speed = 0                    # Maestro units (0.25 µs per 10 ms); 0: as fast as the servo goes
    accel = 0                    # Maestro units (0.25 µs per 10 ms per 80 ms), 0..255; 0: no ramp
    [controller.maestro.cover]   # the holder and flipper lever
    channel = 1
    open_us = 1500
    hold_us = 1200
    flip_us = 1900
    speed = 0
    accel = 0
    [controller.maestro.timing]  # the link's waits, see firmware_interface.MaestroTiming

Pulse widths must lie within the Maestro's channel limits (set in its
Control Center) and keep the servo off its mechanical stops.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from firmware_interface import ConfigError as LinkConfigError
from firmware_interface.flipspin_mechanism import FlipSpinMechanism
from firmware_interface.maestro.link import MaestroLink
from firmware_interface.maestro.simulator import SimulatedMaestro
from firmware_interface.maestro.timing import MaestroTiming

from ..config import Config
from ..errors import ConfigError
from ..servo_motion import ServoMotion

SERVOS = {
    "spin": (("ccw_us", -1), ("home_us", 0), ("cw_us", 1)),
    "cover": (("open_us", "open"), ("hold_us", "hold"), ("flip_us", "flip")),
}


@dataclass(frozen=True)
class Servo:
    channel: int
    end_points: dict  # end-point (-1/0/1, or open/hold/flip) -> pulse width in µs
    speed: int
    accel: int

    def target(self, point) -> int:
        """The Maestro target (quarter-µs) of an end-point."""
        return round(self.end_points[point] * 4)


@dataclass(frozen=True)
class MaestroSettings:
    channels: int
    crc: bool
    baudrate: int
    servos: dict[str, Servo]
    timing: dict


def settings(config: Config, kind: str, rig) -> MaestroSettings:
    """``[controller.maestro]`` (``robot.schema.controllers.maestro.MaestroTable``)."""
    table = config.section("controller.maestro").model
    servos = {
        name: Servo(
            channel=servo.channel,
            speed=servo.speed,
            accel=servo.accel,
            end_points={point: getattr(servo, key) for key, point in SERVOS[name]},
        )
        for name, servo in (("spin", table.spin), ("cover", table.cover))
    }
    return MaestroSettings(
        channels=table.channels,
        crc=table.crc,
        baudrate=table.baudrate,
        servos=servos,
        timing={**table.timing.given(), "servo_us_per_ms": table.servo_us_per_ms},
    )


def _timing(options: MaestroSettings, port: str) -> MaestroTiming:
    base = MaestroTiming.pty() if Path(port).resolve().as_posix().startswith("/dev/pts/") else MaestroTiming()
    return replace(base, baudrate=options.baudrate, **options.timing)


def open_link(controller, port: str, config: Config, data_dir: Path) -> MaestroLink:
    options: MaestroSettings = controller.settings
    try:
        return MaestroLink(port, channels=options.channels, crc=options.crc, timing=_timing(options, port))
    except LinkConfigError as error:
        raise ConfigError(f"{config.source}: [controller.maestro] {error}") from None


def mechanism(controller, size: int) -> FlipSpinMechanism:
    """The flip/spin mechanism these servo settings move, with a virtual cube in it."""
    options: MaestroSettings = controller.settings
    spin, cover = options.servos["spin"], options.servos["cover"]
    return FlipSpinMechanism(
        size=size,
        spin_channel=spin.channel,
        cover_channel=cover.channel,
        spin_ccw_us=spin.end_points[-1],
        spin_home_us=spin.end_points[0],
        spin_cw_us=spin.end_points[1],
        cover_open_us=cover.end_points["open"],
        cover_hold_us=cover.end_points["hold"],
        cover_flip_us=cover.end_points["flip"],
    )


def simulator(controller, sim, rig) -> SimulatedMaestro:
    """A simulated Maestro whose two servos move a simulated flip/spin mechanism and its cube."""
    options: MaestroSettings = controller.settings
    moved = mechanism(controller, sim.puzzle)
    slew = options.timing["servo_us_per_ms"]
    return SimulatedMaestro(
        channels=options.channels,
        mechanism=moved,
        faults=sim.faults,
        crc=options.crc,
        homes=moved.home_targets(),
        slew_us_per_ms=slew,
    )


def motion(controller, link, rig) -> ServoMotion:
    return ServoMotion(link, controller.settings.servos, rig)
