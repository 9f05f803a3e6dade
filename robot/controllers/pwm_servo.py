"""What ``kind = "gpio"`` and ``kind = "pca9685"`` share: two servos of a flip/spin rig that the host pulses itself.

A hobby servo reports nothing, so the host times every move (``firmware_interface.pwm_servo``) by
one setting, ``servo_us_per_ms`` (and each servo's ``speed`` limit, where slower): the rig's op
times come from the same formula and the servos' end-points (``robot.flipspin.servo_timing``),
and the simulated servos turn at that speed, so a dry run's motor time is the plan's estimate.
``[rig]``'s op-time keys do not apply and are refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields

from firmware_interface import ConfigError as LinkConfigError
from firmware_interface.pwm_servo.link import PwmServoLink
from firmware_interface.pwm_servo.outputs import PulseOutputs
from firmware_interface.pwm_servo.simulator import attached
from firmware_interface.pwm_servo.timing import PwmServoTiming

from ..config import Config
from ..errors import ConfigError
from ..flipspin.timing import FlipSpinTiming, servo_timing
from ..servo_motion import ServoMotion
from .maestro import SERVOS, Servo

OP_TIME_KEYS = tuple(f.name for f in fields(FlipSpinTiming) if f.name != "half_spins")


@dataclass(frozen=True)
class PwmServoSettings:
    kind: str
    servos: dict[str, Servo]  # channel: the GPIO pin or the PCA9685 channel; speed: µs of pulse per second
    timing: PwmServoTiming
    hardware: dict  # the kind's own keys (gpio: factory; pca9685: bus, address, frequency_hz, oscillator_hz)

    @property
    def ranges(self) -> dict[int, tuple[float, float]]:
        """Each servo's channel and the outermost pulses it may get: its end-points."""
        return {s.channel: (min(s.end_points.values()), max(s.end_points.values())) for s in self.servos.values()}

    @property
    def homes(self) -> dict[int, float]:
        """Where the simulated horns start: spinner home, cover open (µs)."""
        return {
            self.servos["spin"].channel: self.servos["spin"].end_points[0],
            self.servos["cover"].channel: self.servos["cover"].end_points["open"],
        }


def servo_settings(config: Config, kind: str, rig, hardware: tuple[str, ...]) -> PwmServoSettings:
    """``[controller.KIND]`` (``robot.schema.controllers.pwm_servo``); sets ``rig``'s op times from the servos."""
    section = config.section(f"controller.{kind}")
    table = section.model
    key = "pin" if kind == "gpio" else "channel"
    servos = {
        name: Servo(
            channel=getattr(servo, key),
            speed=servo.speed,
            accel=0,
            end_points={point: getattr(servo, field) for field, point in SERVOS[name]},
        )
        for name, servo in (("spin", table.spin), ("cover", table.cover))
    }
    try:
        timing = PwmServoTiming(**{**table.timing.given(), "servo_us_per_ms": table.servo_us_per_ms})
    except LinkConfigError as error:
        raise section.error("timing", str(error)) from None
    settings = PwmServoSettings(kind, servos, timing, {name: getattr(table, name) for name in hardware})
    _rig_times(config, rig, settings)
    return settings


def _rig_times(config: Config, rig, settings: PwmServoSettings) -> None:
    """The rig's op times from the servos; ``[rig]``'s own would be a second setting the servos ignore."""
    section = config.section("rig")
    for key in OP_TIME_KEYS:
        if section.given(key):
            section.report(
                key,
                f"with a {settings.kind} controller the op times follow from [controller.{settings.kind}] "
                "servo_us_per_ms and the servos' speed and end-points: leave this out",
            )
    spin, cover = settings.servos["spin"], settings.servos["cover"]
    rig.timing = servo_timing(
        spin.end_points,
        cover.end_points,
        lambda servo, travel: settings.timing.travel_s(travel, settings.servos[servo].speed),
        settings.timing.settle,
        rig.timing.half_spins,
    )


def open_link(
    controller, port: str | None, config: Config, opener: Callable[[], PulseOutputs], where: str
) -> PwmServoLink:
    """The link to the servos: those of the simulated board called ``port`` in a dry run, else the hardware's."""
    options: PwmServoSettings = controller.settings
    board = attached(port) if port else None
    if board is not None:
        opener, where = board.outputs, f"simulated {options.kind} ({port})"
    try:
        return PwmServoLink(opener, options.ranges, where=where, timing=options.timing)
    except LinkConfigError as error:
        raise ConfigError(f"{config.source}: [controller.{options.kind}] {error}") from None


def motion(controller, link, rig) -> ServoMotion:
    return ServoMotion(link, controller.settings.servos, rig)
