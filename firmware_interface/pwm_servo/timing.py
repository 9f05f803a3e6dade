"""How long ``PwmServoLink`` gives each servo move: ``PwmServoTiming``, and ``move_s``, the one formula the link
waits by and the flip/spin rig's timing model (``robot.flipspin.timing.servo_timing``) estimates with."""

from __future__ import annotations

from dataclasses import dataclass

from ..servo_horn import check_times, follow_s


@dataclass(frozen=True)
class PwmServoTiming:
    """Seconds unless named otherwise."""

    servo_us_per_ms: float = 2.0  # how fast the servos turn, µs of pulse per ms (MG996R class: about 2)
    settle: float = 0.05  # after the servo arrives, for the mechanism to come to rest
    off_travel_us: float = 1000.0  # travel assumed for a servo coming from "off" (it may be anywhere)
    frame: float = 0.02  # a speed-limited pulse changes once per servo frame (50 Hz)

    def __post_init__(self):
        check_times(self, "servo timing", zero_ok=("settle",))

    def travel_s(self, travel_us: float, speed_us_per_s: float = 0.0) -> float:
        """Seconds a servo needs for ``travel_us`` µs of pulse: its own speed, or the pulse's speed limit
        (µs per second, 0: none) where that is slower; settling not included."""
        ramp = travel_us / speed_us_per_s if speed_us_per_s > 0 else 0.0
        return max(ramp, follow_s(travel_us, self.servo_us_per_ms))

    def move_s(self, travel_us: float, speed_us_per_s: float = 0.0) -> float:
        """One move as the link makes it: the travel, then the settle."""
        return self.travel_s(travel_us, speed_us_per_s) + self.settle
