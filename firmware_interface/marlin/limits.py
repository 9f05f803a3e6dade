"""How quickly a Marlin board can turn a face, from its own limits: top speed (``M203``) and acceleration
(``M201`` per axis, ``M204 T`` for moves without extrusion), read at connect.

A turn of ``d`` units from rest to rest, at top speed ``v`` and acceleration
``a``, takes ``d / v + v / a`` when it reaches ``v`` (``v * v / a <= d``),
else ``2 * sqrt(d / a)``. robotd plans a quarter turn at ``units_per_quarter
/ feed``, so the link moves at the top speed that makes a quarter turn take
that long, acceleration counted; when the board cannot turn that fast the
plans' motor times run short, and connect() says so. The stock 2.1 build
(500 units/s, 5000 units/s², 90 units a quarter) needs 0.28 s; under simavr
a quarter turn at 500 units/s went from its first step to its last in
0.25 s (bench/stock_links.py).
"""

from __future__ import annotations

import math
import re

_FIELD = re.compile(r"\b([A-Z])(-?\d+(?:\.\d+)?)")
SLOWER_BY = 1.1  # a board this much slower than planned is worth a warning (and at least SLOWER_S)
SLOWER_S = 0.02


def parse_limit(text: str) -> tuple[str, dict[str, float]]:
    """``M203 X500.00 Y500.00`` (or M503's ``echo:  M203 ...``) -> ("M203", {"X": 500.0, "Y": 500.0})."""
    words = text.replace("echo:", "").split(None, 1)
    fields = words[1] if len(words) > 1 else ""
    return words[0], {key: float(value) for key, value in _FIELD.findall(fields)}


def least_turn_s(distance: float, speed: float, acceleration: float) -> float:
    """The least time for ``distance`` from rest to rest at this top speed and acceleration."""
    if speed * speed / acceleration >= distance:
        return 2.0 * math.sqrt(distance / acceleration)
    return distance / speed + speed / acceleration


def cruise_speed(distance: float, seconds: float, acceleration: float) -> float | None:
    """The top speed at which ``distance`` takes ``seconds`` from rest to rest, accelerating and braking at
    ``acceleration``; None when no speed is enough (``seconds`` under ``2 * sqrt(distance / acceleration)``)."""
    squared = (acceleration * seconds) ** 2 - 4.0 * acceleration * distance
    if squared < 0:
        return None
    return (acceleration * seconds - math.sqrt(squared)) / 2.0  # the root that brakes before the end


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
    planned = units_per_quarter / feed * 60.0
    speed = cruise_speed(units_per_quarter, planned, acceleration)
    if speed is not None and speed <= top:
        return speed * 60.0, None
    least = least_turn_s(units_per_quarter, top, acceleration)
    if least < max(planned * SLOWER_BY, planned + SLOWER_S):
        return top * 60.0, None
    return top * 60.0, (
        f"this Marlin cannot turn a quarter turn in the {planned:.2f} s robotd plans ([rig] quarter_turn_s, or "
        f"[controller.marlin] feed): at its top speed of {top:g} units/s (M203) and acceleration of "
        f"{acceleration:,.0f} units/s² (M201, M204 T) it takes {least:.2f} s, so the motor times of plans and of "
        f"the dashboard run short. Raise those limits (then M500), or set [rig] quarter_turn_s to "
        f"{math.ceil(least * 100 - 1e-6) / 100:.2f} or more"
    )
