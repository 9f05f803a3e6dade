"""Overlapping turns (protocol version 3, docs/protocol.md section 17): when each turn starts and ends.

Each motor runs the trapezoid of section 16 from rest to rest. In a version-3
session the next turn does not wait for the rig to stop: it starts once every
motor still turning an adjacent face has no more than its ``overlap=`` steps
left (that face is within the cube's corner-cutting tolerance of aligned);
a motor on the opposite face never holds it back, its own motors must have
stopped, and turns start in plan order. The reference device times its
steps with this, and the rig's estimate (``robot``) times a plan with it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass


def profile_seconds(steps: float, rate: float, accel: float) -> float:
    """Time of a move of ``steps`` with a symmetric trapezoid: cruise ``rate`` steps/s, ``accel`` steps/s²."""
    if steps <= 0:
        return 0.0
    if steps >= rate * rate / accel:
        return steps / rate + rate / accel
    return 2 * math.sqrt(steps / accel)


def cruise_rate(quarter_steps: int, rate: float, accel: float, quarter_s: float) -> float:
    """The motor's top ``rate``, lowered so that a quarter turn takes no less than ``quarter_s`` (SPEED):
    the smaller root of v² − A·T·v + A·S = 0 when that is below ``rate``."""
    if quarter_s > 0 and profile_seconds(quarter_steps, rate, accel) < quarter_s:
        at = accel * quarter_s
        root = (at - math.sqrt(max(at * at - 4 * accel * quarter_steps, 0.0))) / 2
        return min(rate, root)
    return float(rate)


def overlap_steps(overlap_deg: float, steps_per_quarter: int) -> int:
    """``overlap=`` for a motor: the steps before aligned that stay within ``overlap_deg`` (rounded down)."""
    return min(steps_per_quarter, math.floor(overlap_deg * steps_per_quarter / 90 + 1e-9))


@dataclass(frozen=True)
class Ramp:
    """One motor's move: ``steps`` at cruise ``rate`` steps/s and ``accel`` steps/s²."""

    steps: int
    rate: float
    accel: float

    @property
    def seconds(self) -> float:
        return profile_seconds(self.steps, self.rate, self.accel)

    def _peak(self) -> float:
        return min(self.rate, math.sqrt(self.accel * self.steps))

    def time_at(self, done: float) -> float:
        """Seconds from the start until ``done`` of its steps are made."""
        done = min(max(done, 0.0), float(self.steps))
        peak = self._peak()
        ramp = peak * peak / (2 * self.accel)
        if done <= ramp:
            return math.sqrt(2 * done / self.accel)
        if done <= self.steps - ramp:
            return peak / self.accel + (done - ramp) / peak
        return self.seconds - math.sqrt(2 * (self.steps - done) / self.accel)

    def steps_left(self, t: float) -> float:
        """Steps still to make ``t`` seconds after the start."""
        if t >= self.seconds:
            return 0.0
        peak = self._peak()
        up = peak / self.accel
        if t <= up:
            return self.steps - self.accel * t * t / 2
        if t <= self.seconds - up:
            return self.steps - (peak * peak / (2 * self.accel) + (t - up) * peak)
        rest = self.seconds - t
        return self.accel * rest * rest / 2


@dataclass(frozen=True)
class MotorMove:
    """A motor's move that started at ``start`` (seconds on the caller's clock)."""

    motor: str
    start: float
    ramp: Ramp

    @property
    def end(self) -> float:
        return self.start + self.ramp.seconds

    def when_left(self, steps: int) -> float:
        """When no more than ``steps`` are left."""
        return self.start + self.ramp.time_at(self.ramp.steps - steps)

    def steps_left(self, t: float) -> float:
        return self.ramp.steps_left(t - self.start)


Opposite = Callable[[str, str], bool]


def gate_time(
    moving: Iterable[MotorMove], motors: Iterable[str], overlap: Mapping[str, int], opposite: Opposite
) -> float:
    """Earliest time a turn of ``motors`` may start beside the moves in ``moving`` (0: at once)."""
    turning = set(motors)
    t = 0.0
    for move in moving:
        if move.motor in turning:
            t = max(t, move.end)
        elif not any(opposite(move.motor, m) for m in turning):
            t = max(t, move.when_left(overlap.get(move.motor, 0)))
    return t


def schedule(
    turns: Sequence[Mapping[str, Ramp]], overlap: Mapping[str, int], opposite: Opposite
) -> list[tuple[float, float]]:
    """(start, end) of each turn of a plan (its motors' ramps), the first starting at 0."""
    moving: list[MotorMove] = []
    times: list[tuple[float, float]] = []
    previous = 0.0
    for turn in turns:
        start = max(previous, gate_time(moving, turn, overlap, opposite))
        started = [MotorMove(motor, start, ramp) for motor, ramp in turn.items()]
        moving = [move for move in moving if move.end > start] + started
        times.append((start, max(move.end for move in started)))
        previous = start
    return times


def jammed_by(
    starting: Iterable[MotorMove],
    moving: Iterable[MotorMove],
    now: float,
    quarter_steps: Mapping[str, int],
    tolerance_deg: float,
    opposite: Opposite,
) -> str | None:
    """The motor of ``starting`` that jams a cube of ``tolerance_deg``: it starts at ``now`` while a motor of
    ``moving`` on an adjacent face leaves that face further than the tolerance from aligned; None if none."""
    others = list(moving)
    for move in starting:
        for other in others:
            if other.motor == move.motor or opposite(other.motor, move.motor):
                continue
            quarter = quarter_steps[other.motor]
            left = other.steps_left(now) % quarter
            if min(left, quarter - left) * 90 / quarter > tolerance_deg + 1e-9:
                return move.motor
    return None
