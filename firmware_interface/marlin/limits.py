"""A Marlin board's speed limits, read at connect (``dialect.parse_setting``): top speed (``M203``) and
acceleration (``M201`` per axis, ``M204 T`` for moves without extrusion); the feed that turns a quarter in the
planned time with them (turn_speed.py). The stock 2.1 build (500 units/s, 5000 units/s², 90 units a quarter)
needs 0.28 s; under simavr a quarter turn at 500 units/s went from its first step to its last in 0.25 s
(bench/stock_links.py).
"""

from __future__ import annotations

import math

from ..turn_speed import turn_feed


def move_feed(limits: dict[str, dict[str, float]], axes: list[str], units_per_quarter: float, feed: float):
    """The ``F`` (units/min) that turns a quarter in the time ``feed`` plans (``units_per_quarter / feed``),
    Marlin's acceleration counted, and None; or, when the board cannot turn that fast, its fastest ``F`` and a
    warning that says why. ``feed`` itself where the board reported no limits."""
    speeds, accelerations = limits.get("M203", {}), limits.get("M201", {})
    if not axes or not all(axis in speeds and axis in accelerations for axis in axes):
        return feed, None
    top = min(speeds[axis] for axis in axes)
    acceleration = min(min(accelerations[axis] for axis in axes), limits.get("M204", {}).get("T", math.inf))
    if top <= 0 or acceleration <= 0:
        return feed, None
    where = f"Marlin's top speed of {top:g} units/s (M203) and acceleration of {acceleration:,.0f} units/s²"
    where += " (M201, M204 T)"
    return turn_feed(units_per_quarter, feed, top, acceleration, where, "Raise those limits (then M500)")
