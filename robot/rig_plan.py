"""What every rig kind shares with the Runner: a plan of steps, each with its time, and the rig's shape.

A six-motor rig (``robot.six_axis``) plans ``MotorCommand``s, the flip/spin rig
(``robot.flipspin``) ``RigStep``s; the Runner sees either as ``PlannedStep``s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class PlannedStep(Protocol):
    """What a rig's plan is made of (``MotorCommand``, the flip/spin rig's ``RigStep``)."""

    @property
    def moves(self) -> tuple[int, ...]: ...

    @property
    def seconds(self) -> float: ...

    @property
    def text(self) -> str: ...


class Rig(Protocol):
    @property
    def kind(self) -> str: ...

    def plan(self, moves: Sequence[int]) -> Sequence[PlannedStep]: ...

    def planned_s(self, moves: Sequence[int]) -> float: ...

    def status(self) -> dict: ...


def estimate_s(plan: Sequence[PlannedStep]) -> float:
    """Estimated motor time of a plan in seconds."""
    return sum(command.seconds for command in plan)
