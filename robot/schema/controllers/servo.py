"""What every servo controller's tables share: a servo's pulse width (µs) at each end-point of the flip/spin rig."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from ..base import Table, raise_problems

MIN_APART_US = 20.0


def pulse(default: float) -> Any:
    return Field(default=default, ge=400, le=2600, description="µs; within the channel's limits")


class EndPoints(Table):
    """A servo's end-points, at least ``MIN_APART_US`` apart."""

    @model_validator(mode="after")
    def _apart(self) -> Any:
        pulses = {key: value for key, value in self if key.endswith("_us")}
        ordered = sorted(pulses.values())
        if any(b - a < MIN_APART_US for a, b in zip(ordered, ordered[1:])):
            name = "spin" if "ccw_us" in pulses else "cover"
            raise_problems(
                [
                    (
                        next(iter(pulses)),
                        f"the {name} end-points must be at least {MIN_APART_US:g} µs "
                        f"apart; got {', '.join(f'{v:g}' for v in pulses.values())}",
                    )
                ]
            )
        return self


class SpinPoints(EndPoints):
    ccw_us: float = pulse(1000.0)  # spinner at -1
    home_us: float = pulse(1500.0)
    cw_us: float = pulse(2000.0)


class CoverPoints(EndPoints):
    open_us: float = pulse(1500.0)
    hold_us: float = pulse(1200.0)
    flip_us: float = pulse(1900.0)
