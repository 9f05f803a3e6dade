"""Servos on the Raspberry Pi's GPIO pins through gpiozero: ``GpioServos`` and ``pin_factory``.

Each servo is a ``gpiozero.Servo`` whose minimum and maximum pulse widths are the servo's outer
end-points, so no value the link can give it moves the horn past them; ``detach()`` stops its pulses.
The pin factory makes the pulses: ``lgpio`` (a Pi 5, or any Pi on Bookworm), ``pigpio`` (its daemon,
``pigpiod``, must run; hardware-timed pulses on every pin), ``rpigpio`` (RPi.GPIO), or ``mock``
(gpiozero's mock pins, which record every pulse width: tests and dry runs).
"""

from __future__ import annotations

import importlib
from typing import Any

from ..errors import ConfigError, PortError

FACTORIES = {
    "lgpio": ("gpiozero.pins.lgpio", "LGPIOFactory", "python3-lgpio (apt) or lgpio (pip)"),
    "pigpio": ("gpiozero.pins.pigpio", "PiGPIOFactory", "pigpio, with its daemon running (sudo pigpiod)"),
    "rpigpio": ("gpiozero.pins.rpigpio", "RPiGPIOFactory", "python3-rpi.gpio (apt)"),
    "mock": ("gpiozero.pins.mock", "MockFactory", "gpiozero"),
}


def pin_factory(name: str) -> Any:
    """The gpiozero pin factory called ``name``; a machine without it gets a ``PortError`` saying what it needs."""
    if name not in FACTORIES:
        raise ConfigError(f"GPIO pin factory must be one of {', '.join(FACTORIES)}, got {name!r}")
    module_name, class_name, needs = FACTORIES[name]
    try:
        module = importlib.import_module(module_name)
        if name == "mock":
            return module.MockFactory(pin_class=module.MockPWMPin)
        return getattr(module, class_name)()
    except Exception as error:  # noqa: BLE001 - each library fails in its own way off a Pi: say what is missing
        raise PortError(
            f"GPIO pin factory {name!r} is not available here ({type(error).__name__}: {error}): it needs {needs} "
            "on a Raspberry Pi",
            port=f"GPIO ({name})",
        ) from None


class GpioServos:
    """One ``gpiozero.Servo`` per pin; ``ranges``: each pin's lowest and highest pulse width in µs. ``own``: the
    pin factory is this object's, closed with it (a simulator's stays open for the next session)."""

    def __init__(self, ranges: dict[int, tuple[float, float]], factory: Any, factory_name: str, own: bool = False):
        self._factory = factory if own else None
        gpiozero = importlib.import_module("gpiozero")  # only once configured: a [pi] extra

        self.where = f"GPIO ({factory_name})"
        self._servos: dict[int, Any] = {}
        for pin, (low, high) in ranges.items():
            try:
                self._servos[pin] = gpiozero.Servo(
                    pin, initial_value=None, min_pulse_width=low / 1e6, max_pulse_width=high / 1e6, pin_factory=factory
                )
            except (gpiozero.GPIOZeroError, OSError, ValueError) as error:
                self.close()
                raise PortError(
                    f"GPIO{pin}: cannot drive a servo on it ({type(error).__name__}: {error}); is it a free BCM "
                    "pin number (0-27), not used by another program?",
                    port=self.where,
                ) from None
        self._ranges = dict(ranges)

    def pulse(self, channel: int, us: float) -> None:
        low, high = self._ranges[channel]
        middle, half = (low + high) / 2, (high - low) / 2
        self._servos[channel].value = max(-1.0, min(1.0, (us - middle) / half))

    def off(self, channel: int) -> None:
        self._servos[channel].detach()

    def close(self) -> None:
        for servo in self._servos.values():
            try:
                servo.detach()
            finally:
                servo.close()
        self._servos.clear()
        if self._factory is not None:
            self._factory.close()
            self._factory = None
