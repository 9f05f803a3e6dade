"""The ``$`` settings a simulated grbl board keeps in EEPROM, and the soft limits they switch on.

``$N=value`` sets one (``error:3`` for a number the build lacks,
``error:2`` for a value that is no number, ``error:10`` for soft limits
while homing is off), ``$$`` lists them. Soft limits (``$20=1``) hold
every axis in grbl's machine space, ``-$13N`` to 0, as the stock grbl
build does (a positive target alarms there whatever ``$23`` says).
"""

from __future__ import annotations

import math

from .dialect import ACCELERATION_SETTING, MAX_RATE_SETTING, STEPS_SETTING
from .words import LineError

IDLE_LOCK, SOFT_LIMITS, HOMING, TRAVEL = 1, 20, 22, 130
PER_AXIS = (STEPS_SETTING, MAX_RATE_SETTING, ACCELERATION_SETTING, TRAVEL)  # each + the axis's index


class Eeprom:
    def __init__(self, defaults: dict[int, str], letters: str):
        self.values = dict(defaults)
        self.letters = letters
        for base in PER_AXIS:  # a build with more axes has their settings too (as the first axis's)
            for index in range(len(letters)):
                self.values.setdefault(base + index, defaults.get(base, "0"))
        self.decimal = {number for number, value in self.values.items() if "." in value}  # listed as 4.444

    def steps_per_unit(self, axis: str) -> float:
        return float(self.values[STEPS_SETTING + self.letters.index(axis)])

    def write(self, line: str) -> None:
        """``$N=value``, cleaned (no blanks, upper case)."""
        number, _, value = line[1:].partition("=")
        if not number.isdigit() or int(number) not in self.values:
            raise LineError(3)
        try:
            if not math.isfinite(float(value)):
                raise ValueError(value)
        except ValueError:
            raise LineError(2) from None
        if int(number) == SOFT_LIMITS and float(value) and not self.on(HOMING):
            raise LineError(10)
        self.values[int(number)] = value

    def lines(self) -> list[str]:
        """``$$``: each as grbl prints it, a decimal setting with 3 decimals whatever precision it holds."""
        return [
            f"${number}={float(value):.3f}" if number in self.decimal else f"${number}={value}"
            for number, value in sorted(self.values.items())
        ]

    def idle_lock_s(self) -> float:
        """``$1``: how long grbl holds the drivers after a move before it reports Idle (255: always on, no wait)."""
        value = float(self.values.get(IDLE_LOCK, "255"))
        return 0.0 if value == 255 else value / 1000

    def limit(self, number: int) -> float:
        """A rate or acceleration setting; a value that is not a positive number limits nothing."""
        try:
            value = float(self.values.get(number, "inf"))
        except ValueError:
            return math.inf
        return value if value > 0 else math.inf

    def on(self, number: int) -> bool:
        return float(self.values.get(number, "0")) != 0

    def beyond_travel(self, target: dict[str, float]) -> bool:
        """Is a move's end outside the soft limits (when they are on)?"""
        if not self.on(SOFT_LIMITS):
            return False
        for index, axis in enumerate(self.letters):
            travel = float(self.values.get(TRAVEL + index, "inf"))
            if target[axis] > 0 or target[axis] < -travel:
                return True
        return False
