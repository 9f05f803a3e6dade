"""Rig kinematics: a move sequence becomes motor commands with a time estimate.

A six-motor rig has one motor per face. The planner merges two consecutive
turns of opposite faces (``U D'``) into one simultaneous command when the rig
allows it, which is where most of a six-motor rig's speed comes from. Other
mechanisms (a two-servo flip-and-spin rig, say) plug in as another class with
the same ``plan`` / ``estimate_s`` / ``status`` shape, registered in
``RIG_KINDS``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

from solver.geometry import FACES, OPPOSITE
from solver.notation import format_moves, move_face, move_turns

from .config import Section


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


class Rig(Protocol):
    kind: str

    def plan(self, moves: Sequence[int]) -> list[MotorCommand]: ...

    def planned_s(self, moves: Sequence[int]) -> float: ...

    def status(self) -> dict: ...


def signed_quarter_turns(move: int) -> int:
    """U -> +1, U2 -> +2, U' -> -1."""
    turns = move_turns(move)
    return -1 if turns == 3 else turns


def estimate_s(plan: Sequence[MotorCommand]) -> float:
    """Estimated motor time of a plan in seconds."""
    return sum(command.seconds for command in plan)


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
            if (self.simultaneous_opposite and pair is not None
                    and FACES[move_face(pair)] == OPPOSITE[FACES[move_face(move)]]):
                group = (move, pair)
            else:
                group = (move,)
            seconds = max(self.turn_seconds(m) for m in group) + self.settle_s
            plan.append(MotorCommand(tuple(self.face_turn(m) for m in group), group, seconds))
            index += len(group)
        return plan

    def planned_s(self, moves: Sequence[int]) -> float:
        """Motor time ``moves`` would take on this rig."""
        return estimate_s(self.plan(moves))

    def status(self) -> dict:
        return {"kind": self.kind, "motors": dict(self.motors), "direction": dict(self.direction),
                "simultaneous_opposite": self.simultaneous_opposite,
                "timing": {"quarter_turn_s": self.quarter_turn_s, "half_turn_s": self.half_turn_s,
                           "settle_s": self.settle_s},
                "stepper": None if self.stepper is None else {
                    face: dict(zip(STEPPER_KEYS, values)) for face, values in self.stepper.items()}}


def six_axis_from_config(section: Section) -> SixAxisRig:
    """Read ``[rig]`` for a six-motor rig; every face needs its own motor.

    Motors are named as the firmware names them (``U`` ... ``B`` by default).
    Steps per quarter turn live in the firmware: protocol v1 commands whole
    quarter turns, so a rig can never be left between two faces' positions by
    a rounding in the host. ``direction = -1`` flips a motor mounted the
    other way round. ``[rig.stepper]`` (optional) is sent to a version-2
    firmware at connect (MOTOR); direction then travels with it.
    """
    motors_table = section.get_table("motors") or {face: face for face in FACES}
    motors = _face_table(section, "motors", motors_table, lambda v: isinstance(v, str) and v.isalnum()
                         and 0 < len(v) <= 24, "a motor name (letters and digits, as the firmware names it)")
    if len(set(motors.values())) != len(motors):
        raise section.error("motors", "two faces share a motor")
    direction_table = section.get_table("direction") or {face: 1 for face in FACES}
    direction = _face_table(section, "direction", direction_table, lambda v: v in (1, -1) and not isinstance(v, bool),
                            "1 or -1")
    quarter = section.get_float("quarter_turn_s", 0.15, above=0, maxval=10)
    return SixAxisRig(
        motors=motors,
        direction=direction,
        quarter_turn_s=quarter,
        half_turn_s=section.get_float("half_turn_s", 0.25, above=0, maxval=10),
        settle_s=section.get_float("settle_s", 0.02, minval=0, maxval=10),
        simultaneous_opposite=section.get_bool("simultaneous_opposite", True),
        stepper=_stepper(section),
    )


STEPPER_KEYS = ("steps_per_quarter", "max_rate", "accel")
_STEPPER_CHECKS = {   # key: (valid, wanted)
    "steps_per_quarter": (lambda v: isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 20000,
                          "a whole number of steps 1..20000"),
    "max_rate": (lambda v: isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 65535,
                 "a whole number of steps/s 1..65535"),
    "accel": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= 6553500,
              "a number of steps/s² above 0, at most 6553500"),
}


def _stepper(section: Section) -> dict[str, tuple[int, int, float]] | None:
    """``[rig.stepper]``: each key a number for every motor, or a table per face U..B."""
    if "stepper" not in section.data:
        return None
    table = section.get_table("stepper")
    unknown = [key for key in table if key not in STEPPER_KEYS]
    if unknown:
        raise section.error(f"stepper.{unknown[0]}", f"unknown key (known: {', '.join(STEPPER_KEYS)})")
    missing = [key for key in STEPPER_KEYS if key not in table]
    if missing:
        raise section.error("stepper", f"needs {', '.join(missing)}")
    per_face = {}
    for key in STEPPER_KEYS:
        valid, wanted = _STEPPER_CHECKS[key]
        value = table[key]
        if isinstance(value, dict):
            per_face[key] = _face_table(section, f"stepper.{key}", value, valid, wanted)
        elif valid(value):
            per_face[key] = {face: value for face in FACES}
        else:
            raise section.error(f"stepper.{key}", f"must be {wanted}, or a table per face; got {value!r}")
    return {face: tuple(per_face[key][face] for key in STEPPER_KEYS) for face in FACES}


def _face_table(section: Section, key: str, table: dict, valid: Callable, wanted: str) -> dict:
    unknown = sorted(set(table) - set(FACES))
    if unknown:
        raise section.error(f"{key}.{unknown[0]}", f"is not a face; faces are {', '.join(FACES)}")
    missing = [face for face in FACES if face not in table]
    if missing:
        raise section.error(key, f"needs all six faces; missing {', '.join(missing)}")
    for face, value in table.items():
        if not valid(value):
            raise section.error(f"{key}.{face}", f"must be {wanted}; got {value!r}")
    return {face: table[face] for face in FACES}


def _flip_spin_from_config(section: Section) -> Rig:
    from .flipspin.rig import flip_spin_from_config
    return flip_spin_from_config(section)


RIG_KINDS: dict[str, Callable[[Section], Rig]] = {"six-axis": six_axis_from_config,
                                                  "flip-spin": _flip_spin_from_config}


def rig_from_config(section: Section) -> Rig:
    """The rig described by ``[rig]``; ``kind`` picks the mechanism."""
    kind = section.get_str("kind", "six-axis", choices=tuple(RIG_KINDS))
    return RIG_KINDS[kind](section)
