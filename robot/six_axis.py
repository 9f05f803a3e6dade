"""The six-motor rig's kinematics: a move sequence becomes motor commands with a time estimate.

A six-motor rig has one motor per face. The planner merges two consecutive
turns of opposite faces (``U D'``) into one simultaneous command when the rig
allows it, which is where most of a six-motor rig's speed comes from. With
``[rig.stepper]`` the commands are timed by the firmware's trapezoids, and
turns overlap by ``overlap_deg`` (docs/protocol.md section 17).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from solver.puzzles.cube.geometry import FACES, OPPOSITE
from solver.puzzles.cube.notation import format_moves, move_face, move_turns

from .rig_plan import estimate_s
from .turn_timing import stepper_seconds

STEPPER_KEYS = ("steps_per_quarter", "max_rate", "accel")


@dataclass(frozen=True)
class FaceTurn:
    """One motor's part of a command: the face turn and what its motor is told."""

    face: str
    quarter_turns: int  # +1 clockwise, -1 counter-clockwise, +2 half turn (face seen from outside)
    motor: str  # the firmware's name for the motor
    motor_quarter_turns: int  # quarter_turns signed by the motor's mounting direction


@dataclass(frozen=True)
class MotorCommand:
    """What the rig does at once: one face turn, or two opposite faces turning together."""

    turns: tuple[FaceTurn, ...]
    moves: tuple[int, ...]  # the solver move ids this command performs, in order
    seconds: float  # estimated duration, settle time included

    @property
    def text(self) -> str:
        return format_moves(self.moves)


def signed_quarter_turns(move: int) -> int:
    """U -> +1, U2 -> +2, U' -> -1."""
    turns = move_turns(move)
    return -1 if turns == 3 else turns


@dataclass(frozen=True)
class SixAxisRig:
    """One motor per face; opposite faces may turn together when ``simultaneous_opposite``."""

    motors: dict[str, str]
    direction: dict[str, int]
    quarter_turn_s: float
    half_turn_s: float
    settle_s: float
    simultaneous_opposite: bool
    kind: str = "six-axis"
    # [rig.stepper]: per face (steps per quarter turn, top rate steps/s, accel steps/s²); None when absent
    stepper: dict[str, tuple[int, int, float]] | None = None
    # a turn of an adjacent face starts this close to aligned (with [rig.stepper], protocol 3)
    overlap_deg: float = 0.0

    def face_turn(self, move: int) -> FaceTurn:
        face = FACES[move_face(move)]
        quarters = signed_quarter_turns(move)
        return FaceTurn(face, quarters, self.motors[face], quarters * self.direction[face])

    def turn_seconds(self, move: int) -> float:
        return self.half_turn_s if move_turns(move) == 2 else self.quarter_turn_s

    def plan(self, moves: Sequence[int]) -> list[MotorCommand]:
        """Motor commands for ``moves`` (solver move ids), merging opposite-face pairs."""
        plan: list[MotorCommand] = []
        index = 0
        while index < len(moves):
            move = moves[index]
            pair = moves[index + 1] if index + 1 < len(moves) else None
            if (
                self.simultaneous_opposite
                and pair is not None
                and FACES[move_face(pair)] == OPPOSITE[FACES[move_face(move)]]
            ):
                group: tuple[int, ...] = (move, pair)
            else:
                group = (move,)
            seconds = max(self.turn_seconds(m) for m in group) + self.settle_s
            plan.append(MotorCommand(tuple(self.face_turn(m) for m in group), group, seconds))
            index += len(group)
        if self.stepper is None:
            return plan
        turns = [[(t.face, t.quarter_turns) for t in c.turns] for c in plan]
        timed = stepper_seconds(turns, self.stepper, self.overlap_deg, self.quarter_turn_s)
        return [replace(c, seconds=s) for c, s in zip(plan, timed)]

    def planned_s(self, moves: Sequence[int]) -> float:
        """Motor time ``moves`` would take on this rig."""
        return estimate_s(self.plan(moves))

    def status(self) -> dict:
        return {
            "kind": self.kind,
            "motors": dict(self.motors),
            "direction": dict(self.direction),
            "simultaneous_opposite": self.simultaneous_opposite,
            "overlap_deg": self.overlap_deg,
            "timing": {
                "quarter_turn_s": self.quarter_turn_s,
                "half_turn_s": self.half_turn_s,
                "settle_s": self.settle_s,
            },
            "stepper": None
            if self.stepper is None
            else {face: dict(zip(STEPPER_KEYS, values)) for face, values in self.stepper.items()},
        }
