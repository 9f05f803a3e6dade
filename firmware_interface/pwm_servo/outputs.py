"""What ``PwmServoLink`` drives: a set of servo outputs that each send a pulse width or nothing."""

from __future__ import annotations

from typing import Protocol


class PulseOutputs(Protocol):
    """Servo outputs by channel (a GPIO pin's number, a PCA9685 channel); ``where`` names the hardware."""

    where: str

    def pulse(self, channel: int, us: float) -> None:
        """Send pulses of ``us`` microseconds, one per frame, from now on."""

    def off(self, channel: int) -> None:
        """No more pulses (the servo goes limp where it is)."""

    def close(self) -> None:
        """Every output off, the hardware released."""
