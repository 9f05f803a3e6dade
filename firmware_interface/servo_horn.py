"""A hobby servo's horn chasing its pulse: the model every simulated servo controller shares.

A servo turns its output shaft (the horn) towards the position its pulse
width asks for at its own top speed, ``slew`` µs of pulse per ms (0: at
once); with no pulses it stays where it is. The host, which cannot see the
horn, waits ``follow_s`` for it. ``check_times`` checks a servo controller's timing settings.
"""

from __future__ import annotations

import math
from dataclasses import fields

from .errors import ConfigError


def follow(horn: float, goal: float, slew: float, dt: float) -> float:
    """Where the horn stands ``dt`` seconds later, chasing ``goal`` (µs of pulse) at ``slew`` µs per ms."""
    step = slew * dt * 1000 if slew > 0 else math.inf
    if abs(goal - horn) <= step:
        return goal
    return horn + math.copysign(step, goal - horn)


def follow_s(travel_us: float, slew: float) -> float:
    """Seconds the horn needs for ``travel_us`` µs of pulse at ``slew`` µs per ms (0: no time)."""
    return travel_us / slew / 1000 if slew > 0 else 0.0


def check_times(timing: object, what: str, zero_ok: tuple[str, ...]) -> None:
    """Every field of the dataclass ``timing`` a number above 0 (``zero_ok``: at least 0), else ``ConfigError``."""
    for f in fields(timing):  # type: ignore[arg-type]
        value = getattr(timing, f.name)
        zero = f.name in zero_ok
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or (value == 0 and not zero):
            raise ConfigError(f"{what}: {f.name} must be a {'' if zero else 'positive '}number, got {value!r}")
