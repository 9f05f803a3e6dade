"""``kind = "gpio"``: the two servos of a flip/spin rig on the Raspberry Pi's GPIO pins, as CUBOTino wires them.

``[controller.gpio]``::

    factory = "lgpio"            # gpiozero's pin factory: lgpio (Pi 5, Bookworm), pigpio (pigpiod running),
                                 # rpigpio, or mock (no hardware: dry runs)
    servo_us_per_ms = 2.0        # how fast the servos turn; the plan's op times and every move follow it
    [controller.gpio.spin]       # the base: its BCM pin and its pulse width (µs) at each end-point
    pin = 13
    ccw_us = 1000
    home_us = 1500
    cw_us = 2000
    speed = 0                    # µs of pulse per second (the host ramps the pulse); 0: as fast as the servo
    [controller.gpio.cover]      # the holder and flipper lever
    pin = 12
    open_us = 1500
    hold_us = 1200
    flip_us = 1900
    speed = 0
    [controller.gpio.timing]     # settle, off_travel_us, frame: see firmware_interface.pwm_servo.PwmServoTiming

No pulse outside a servo's end-points is ever sent. See docs/hardware.md (GPIO and PCA9685 servos).
"""

from __future__ import annotations

from pathlib import Path

from firmware_interface.pwm_servo.gpio import GpioServos, pin_factory
from firmware_interface.pwm_servo.link import PwmServoLink
from firmware_interface.pwm_servo.simulator import SimulatedGpio

from ..config import Config
from . import pwm_servo
from .maestro import mechanism
from .pwm_servo import PwmServoSettings, motion

__all__ = ["motion", "open_link", "own_port", "settings", "simulator"]


def settings(config: Config, kind: str, rig) -> PwmServoSettings:
    return pwm_servo.servo_settings(config, kind, rig, ("factory",))


def own_port(controller) -> str:
    """What a real rig's link opens instead of a serial port: the Pi's GPIO pins."""
    return f"GPIO ({controller.settings.hardware['factory']})"


def open_link(controller, port: str | None, config: Config, data_dir: Path) -> PwmServoLink:
    options: PwmServoSettings = controller.settings
    factory = options.hardware["factory"]
    opener = lambda: GpioServos(options.ranges, pin_factory(factory), factory, own=True)  # noqa: E731
    return pwm_servo.open_link(controller, port, config, opener, own_port(controller))


def simulator(controller, sim, rig) -> SimulatedGpio:
    """gpiozero's mock pins, whose servos move a simulated flip/spin mechanism and its cube."""
    options: PwmServoSettings = controller.settings
    return SimulatedGpio(
        options.ranges,
        options.homes,
        mechanism=mechanism(controller, sim.puzzle),
        slew_us_per_ms=options.timing.servo_us_per_ms,
    )
