"""``kind = "pca9685"``: the two servos of a flip/spin rig on a PCA9685 16-channel PWM board on I²C.

``[controller.pca9685]``::

    bus = 1                      # /dev/i2c-1: the Pi's header pins 3 (SDA) and 5 (SCL)
    address = 0x40               # 0x40 with no address jumper closed
    frequency_hz = 50            # the servo frame rate
    oscillator_hz = 25000000     # the chip's clock; boards differ by a few per cent: measure the pulse to set it
    servo_us_per_ms = 2.0        # how fast the servos turn; the plan's op times and every move follow it
    [controller.pca9685.spin]    # the base: its channel (0-15) and its pulse width (µs) at each end-point
    channel = 0
    ccw_us = 1000
    home_us = 1500
    cw_us = 2000
    speed = 0                    # µs of pulse per second (the host ramps the pulse); 0: as fast as the servo
    [controller.pca9685.cover]
    channel = 1
    open_us = 1500
    hold_us = 1200
    flip_us = 1900
    speed = 0
    [controller.pca9685.timing]  # settle, off_travel_us, frame: see firmware_interface.pwm_servo.PwmServoTiming

The registers are written with smbus2 by our own code (``firmware_interface.pwm_servo.pca9685``): see
docs/hardware.md for why.
"""

from __future__ import annotations

from pathlib import Path

from firmware_interface.pwm_servo.link import PwmServoLink
from firmware_interface.pwm_servo.pca9685 import Pca9685, open_bus
from firmware_interface.pwm_servo.pca9685_bus import SimulatedPca9685

from ..config import Config
from . import pwm_servo
from .maestro import mechanism
from .pwm_servo import PwmServoSettings, motion

__all__ = ["motion", "open_link", "own_port", "settings", "simulator"]

HARDWARE = ("bus", "address", "frequency_hz", "oscillator_hz")


def settings(config: Config, kind: str, rig) -> PwmServoSettings:
    return pwm_servo.servo_settings(config, kind, rig, HARDWARE)


def _board(hardware: dict) -> Pca9685:
    board = Pca9685(
        open_bus(hardware["bus"]),
        hardware["address"],
        hardware["frequency_hz"],
        where=f"/dev/i2c-{hardware['bus']}",
        oscillator_hz=hardware["oscillator_hz"],
    )
    board.start()
    return board


def own_port(controller) -> str:
    """What a real rig's link opens instead of a serial port: the board on its I²C bus."""
    hardware = controller.settings.hardware
    return f"PCA9685 on /dev/i2c-{hardware['bus']} at 0x{hardware['address']:02x}"


def open_link(controller, port: str | None, config: Config, data_dir: Path) -> PwmServoLink:
    hardware = controller.settings.hardware
    return pwm_servo.open_link(controller, port, config, lambda: _board(hardware), own_port(controller))


def simulator(controller, sim, rig) -> SimulatedPca9685:
    """A simulated PCA9685 register file whose servos move a simulated flip/spin mechanism and its cube."""
    options: PwmServoSettings = controller.settings
    return SimulatedPca9685(
        options.homes,
        address=options.hardware["address"],
        frequency_hz=options.hardware["frequency_hz"],
        mechanism=mechanism(controller, sim.puzzle),
        slew_us_per_ms=options.timing.servo_us_per_ms,
    )
