"""A six-motor rig's motor time from its steppers' trapezoids, turns overlapping as the firmware runs them.

With ``[rig.stepper]`` the firmware knows each motor's steps per quarter
turn, top rate and acceleration (MOTOR), and from ``[rig] overlap_deg`` how
close to aligned a face must be before a turn of an adjacent face starts
(MOTOR's ``overlap=``, protocol version 3). ``stepper_seconds`` times a
plan the way the firmware will run it (``firmware_interface.robotd.overlap``):
each command's share is the time from its start to the next command's
start, the last one's to the end of every motor. A turn ends when its steps
end, so ``settle_s`` does not apply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from firmware_interface.robotd.overlap import Ramp, cruise_rate, overlap_steps, schedule
from solver.puzzles.cube.geometry import OPPOSITE


def _opposite(a: str, b: str) -> bool:
    return OPPOSITE[a] == b


def stepper_seconds(
    commands: Sequence[Sequence[tuple[str, int]]],
    stepper: Mapping[str, tuple[int, int, float]],
    overlap_deg: float,
    quarter_turn_s: float,
) -> list[float]:
    """Seconds of each command, given as its (face, signed quarter turns); ``stepper``: per face (steps per
    quarter turn, top rate steps/s, accel steps/s²); ``quarter_turn_s``: the quarter-turn time sent as SPEED."""
    if not commands:
        return []
    ramps = []
    for turns in commands:
        ramp = {}
        for face, quarters in turns:
            steps, rate, accel = stepper[face]
            ramp[face] = Ramp(steps * abs(quarters), cruise_rate(steps, rate, accel, quarter_turn_s), accel)
        ramps.append(ramp)
    overlap = {face: overlap_steps(overlap_deg, steps) for face, (steps, _rate, _accel) in stepper.items()}
    times = schedule(ramps, overlap, _opposite)
    starts = [start for start, _end in times]
    last = max(end for _start, end in times) - starts[-1]
    return [b - a for a, b in zip(starts, starts[1:])] + [last]
