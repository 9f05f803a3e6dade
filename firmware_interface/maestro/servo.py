"""One simulated Maestro servo channel: the pulse the Maestro sends, and the horn of the servo that follows it.

The pulse is what the Maestro knows and reports (get position): it moves to a new target at once, or
ramps there under the channel's speed and acceleration limits (Maestro units, maestro.py). The horn is
the servo's output shaft, which the Maestro cannot see: it chases the pulse at the servo's own top
speed (``slew``, µs of pulse per ms) and stays where it is while no pulses come (target 0). A move is
finished when the horn reaches the pulse's target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..servo_horn import follow

SPEED_UNIT = 100.0  # quarter-µs per second for one unit of speed (0.25 µs per 10 ms)
ACCEL_UNIT = 1250.0  # quarter-µs per second² for one unit of acceleration (0.25 µs / 10 ms / 80 ms)


@dataclass
class ServoChannel:
    home: int  # quarter-µs sent at start-up, on reset and on go home (0: off)
    low: int  # the Maestro's min and max for the channel: targets are clamped into them
    high: int
    slew: float = 4.0  # how fast the servo itself turns, µs of pulse per ms (0: instantly)
    target: int = 0
    position: float = 0.0  # quarter-µs; 0 while off
    velocity: float = 0.0  # quarter-µs per second, unsigned
    speed: int = 0
    accel: int = 0
    horn: float = 1500.0  # µs of pulse the horn stands at
    travelling: bool = False

    def start(self) -> None:
        """Power-up or reset: limits back to none, the home target at once (the horn has to get there)."""
        self.speed = self.accel = 0
        self.velocity = 0.0
        self.target = 0
        self.position = 0.0
        if self.home:
            self.set_target(self.home)
            self.travelling = self.horn * 4 != self.target

    def set_target(self, value: int) -> None:
        if value == 0:
            self.target, self.position, self.velocity = 0, 0.0, 0.0
            return
        self.target = min(max(value, self.low), self.high)
        if self.position == 0 or not (self.speed or self.accel):
            self.position = float(self.target)  # after "off" the Maestro has no idea where the servo is
            self.velocity = 0.0
        self.travelling = True

    @property
    def reported(self) -> int:
        """What get position answers."""
        return self.target if self.position == self.target else int(round(self.position))

    @property
    def moving(self) -> bool:
        """The Maestro's moving state: still ramping the pulse under a speed or acceleration limit."""
        return self.target != 0 and self.position != self.target

    @property
    def powered(self) -> bool:
        return self.target != 0

    def advance(self, dt: float) -> bool:
        """Let ``dt`` seconds pass; True when this finished a move (the horn reached the target)."""
        if self.moving:
            self._ramp(dt)
        if not self.powered:
            return False
        self.horn = follow(self.horn, self.position / 4, self.slew, dt)
        if self.travelling and self.horn * 4 == self.target:
            self.travelling = False
            return True
        return False

    def _ramp(self, dt: float) -> None:
        remaining = self.target - self.position
        cap = self.speed * SPEED_UNIT if self.speed else math.inf
        if self.accel:
            accel = self.accel * ACCEL_UNIT
            cap = min(cap, self.velocity + accel * dt, math.sqrt(2 * accel * abs(remaining)))
        step = cap * dt
        if step >= abs(remaining) or abs(remaining) < 0.5:
            self.position, self.velocity = float(self.target), 0.0
        else:
            self.position += math.copysign(step, remaining)
            self.velocity = cap
