"""A grbl board's speed limits from its ``$$`` settings: maximum rate (``$110``-``$115``, units/min) and
acceleration (``$120``-``$125``, units/s²) per axis; the feed that turns a quarter in the planned time with
them (turn_speed.py). The stock grbl-Mega-5X build: 30000 units/min and 5000 units/s².
"""

from __future__ import annotations

from ..turn_speed import turn_feed
from .dialect import ACCELERATION_SETTING, MAX_RATE_SETTING


def move_feed(settings: dict[int, str], letters: str, axes: list[str], units_per_quarter: float, feed: float):
    """The ``F`` (units/min) that turns a quarter in the time ``feed`` plans, grbl's acceleration counted, and
    None; or, when the board cannot turn that fast, its fastest ``F`` and a warning that says why. ``feed``
    itself where a setting is missing or garbled."""
    try:
        rates = [float(settings[MAX_RATE_SETTING + letters.index(axis)]) for axis in axes]
        accelerations = [float(settings[ACCELERATION_SETTING + letters.index(axis)]) for axis in axes]
    except (KeyError, ValueError):
        return feed, None
    if not axes or min(rates) <= 0 or min(accelerations) <= 0:
        return feed, None
    where = f"grbl's maximum rate of {min(rates):g} units/min ($110-$115) and acceleration of "
    where += f"{min(accelerations):,.0f} units/s² ($120-$125)"
    return turn_feed(units_per_quarter, feed, min(rates) / 60.0, min(accelerations), where, "Raise those settings")
