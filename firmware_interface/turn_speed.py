"""How long a turn takes on a board that accelerates, and the top speed that makes it take the planned time.

A move of ``d`` units from rest to rest, at top speed ``v`` and acceleration
``a``, takes ``d / v + v / a`` when it reaches ``v`` (``v * v / a <= d``),
else ``2 * sqrt(d / a)``. robotd plans a quarter turn at ``units_per_quarter
/ feed``; MarlinLink (its M203, M201 and M204 T: marlin/limits.py) moves at
the top speed that makes it take that long, and warns when the board's
limits do not allow it; GrblLink likewise with grbl's ``$110``-``$115``
and ``$120``-``$125`` (grbl/limits.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

SLOWER_BY = 1.1  # a board this much slower than planned is worth a warning (and at least SLOWER_S)
SLOWER_S = 0.02
SAME_BY = 1.001  # a cruise speed this close to the plain feed's is that feed (no float noise in the G-code)


@dataclass(frozen=True)
class Trapezoid:
    """A move of ``length`` units that enters at ``entry``, speeds up at ``acceleration`` to at most ``speed``
    and brakes to ``exit`` (units/s; a planner makes both reachable within the length)."""

    length: float
    speed: float
    acceleration: float
    entry: float = 0.0
    exit: float = 0.0

    @property
    def peak(self) -> float:
        """The top speed it reaches: ``speed``, or less where it must brake before getting there."""
        reach = math.sqrt(self.acceleration * self.length + (self.entry**2 + self.exit**2) / 2)
        return max(self.entry, self.exit, min(self.speed, reach))

    def phases(self) -> tuple[float, float, float]:
        """Seconds speeding up, cruising and braking."""
        peak, twice = self.peak, 2.0 * self.acceleration
        cruise = self.length - (2 * peak**2 - self.entry**2 - self.exit**2) / twice
        return (peak - self.entry) / self.acceleration, max(cruise, 0.0) / peak, (peak - self.exit) / self.acceleration

    @property
    def duration(self) -> float:
        return sum(self.phases()) if self.length > 0 else 0.0

    def speed_at(self, t: float) -> float:
        """Its speed ``t`` seconds after it began (0 once it is over)."""
        if t < 0 or t >= self.duration:
            return 0.0
        up, cruise, _ = self.phases()
        if t <= up:
            return self.entry + self.acceleration * t
        if t <= up + cruise:
            return self.peak
        return max(self.peak - self.acceleration * (t - up - cruise), self.exit)

    def distance_at(self, t: float) -> float:
        """Units covered ``t`` seconds after it began."""
        if t <= 0 or self.length <= 0:
            return 0.0
        up, cruise, down = self.phases()
        if t <= up:
            return self.entry * t + self.acceleration * t * t / 2
        if t <= up + cruise:
            peak = self.peak
            return (peak**2 - self.entry**2) / (2 * self.acceleration) + peak * (t - up)
        left = max(up + cruise + down - t, 0.0)  # braking: what is left to cover, backwards from the end
        return max(self.length - self.exit * left - self.acceleration * left * left / 2, 0.0)


def least_turn_s(distance: float, speed: float, acceleration: float) -> float:
    """The least time for ``distance`` from rest to rest at this top speed and acceleration."""
    return Trapezoid(distance, speed, acceleration).duration


def cruise_speed(distance: float, seconds: float, acceleration: float) -> float | None:
    """The top speed at which ``distance`` takes ``seconds`` from rest to rest, accelerating and braking at
    ``acceleration``; None when no speed is enough (``seconds`` under ``2 * sqrt(distance / acceleration)``)."""
    squared = (acceleration * seconds) ** 2 - 4.0 * acceleration * distance
    if squared < 0:
        return None
    return (acceleration * seconds - math.sqrt(squared)) / 2.0  # the root that brakes before the end


def turn_feed(
    units_per_quarter: float, feed: float, top: float, acceleration: float, limits: str, fix: str
) -> tuple[float, str | None]:
    """The ``F`` (units/min) that turns a quarter in the time ``feed`` (units/min) plans, at most ``top``
    (units/s), and None; or, when the board cannot turn that fast, its fastest ``F`` and a warning that names its
    ``limits`` and says how to ``fix`` them."""
    planned = units_per_quarter / feed * 60.0
    speed = cruise_speed(units_per_quarter, planned, acceleration)
    if speed is not None and speed <= top:
        return (feed if speed <= feed / 60.0 * SAME_BY else speed * 60.0), None
    least = least_turn_s(units_per_quarter, top, acceleration)
    if least < max(planned * SLOWER_BY, planned + SLOWER_S):
        return top * 60.0, None
    return top * 60.0, (
        f"this board cannot turn a quarter turn in the {planned:.2f} s robotd plans ([rig] quarter_turn_s, or the "
        f"controller's feed): at {limits} it takes {least:.2f} s, so the motor times of plans and of the dashboard "
        f"run short. {fix}, or set [rig] quarter_turn_s to {math.ceil(least * 100 - 1e-6) / 100:.2f} or more"
    )
