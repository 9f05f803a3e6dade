"""A flip/spin plan step: the ops that perform one solver move, with its estimated time."""

from __future__ import annotations

from dataclasses import dataclass

from solver.puzzles.cube.notation import format_moves

from .pose import Op, ops_text
from .timing import FlipSpinTiming


@dataclass(frozen=True)
class RigStep:
    """Same duck type as ``robot.six_axis.MotorCommand``: ``moves``, ``seconds``, ``text``.

    ``ops`` brings the cube from where the previous step left it to the end
    of this step's layer turn (the plan's last step also releases the cube).
    """

    ops: tuple[Op, ...]
    moves: tuple[int, ...]
    seconds: float

    @property
    def text(self) -> str:
        return format_moves(self.moves)

    @property
    def ops_text(self) -> str:
        return ops_text(self.ops)

    @property
    def robot_moves(self) -> int:
        return sum(op.is_robot_move for op in self.ops)


def make_step(ops: list[Op] | tuple[Op, ...], move: int, timing: FlipSpinTiming) -> RigStep:
    return RigStep(tuple(ops), (move,), sum(timing.seconds(op) for op in ops))


def with_tail(step: RigStep, tail: list[Op], timing: FlipSpinTiming) -> RigStep:
    """``step`` with ops appended (the release that ends a plan)."""
    return RigStep(step.ops + tuple(tail), step.moves, step.seconds + sum(timing.seconds(op) for op in tail))


def robot_moves(steps: list[RigStep]) -> int:
    return sum(step.robot_moves for step in steps)
