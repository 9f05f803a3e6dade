"""``[rig]``: its ``kind`` picks the mechanism, and each kind is built from its own table.

A six-motor rig (``robot.six_axis``) turns every face with its own motor; a
two-servo flip/spin rig (``robot.flipspin``) re-poses the cube between moves.
Both plan the same way for the Runner (``robot.rig_plan.Rig``); another
mechanism plugs in as another class of that shape, registered in
``RIG_KINDS``.
"""

from __future__ import annotations

from collections.abc import Callable

from solver.puzzles.cube.geometry import FACES

from .config import Section
from .flipspin.rig import FlipSpinRig
from .flipspin.timing import timing_from_config
from .rig_plan import Rig
from .six_axis import STEPPER_KEYS, SixAxisRig


def six_axis_from_config(section: Section) -> SixAxisRig:
    """``[rig]`` for a six-motor rig (``robot.schema.rig.SixAxisTable``); every face needs its own motor.

    Motors are named as the firmware names them (``U`` ... ``B`` by default).
    Steps per quarter turn live in the firmware: protocol v1 commands whole
    quarter turns, so a rig can never be left between two faces' positions by
    a rounding in the host. ``direction = -1`` flips a motor mounted the
    other way round. ``[rig.stepper]`` (optional) is sent to a version-2
    firmware at connect (MOTOR); direction then travels with it, and a
    version-3 firmware also gets ``overlap_deg`` as each motor's overlap=
    (the plan's times then follow ``robot.turn_timing``).
    """
    table = section.model
    stepper = table.stepper
    return SixAxisRig(
        motors=dict(table.motors),
        direction=dict(table.direction),
        quarter_turn_s=table.quarter_turn_s,
        half_turn_s=table.half_turn_s,
        settle_s=table.settle_s,
        simultaneous_opposite=table.simultaneous_opposite,
        overlap_deg=table.overlap_deg,
        stepper=None
        if stepper is None
        else {face: tuple(getattr(stepper, key)[face] for key in STEPPER_KEYS) for face in FACES},
    )


def flip_spin_from_config(section: Section) -> FlipSpinRig:
    """``[rig]`` for kind = "flip-spin" (``robot.schema.rig.FlipSpinTable``): the timing keys (see
    ``robot.flipspin.timing``) and ``planner``."""
    table = section.model
    return FlipSpinRig(timing_from_config(table), table.planner)


RIG_KINDS: dict[str, Callable[[Section], Rig]] = {"six-axis": six_axis_from_config, "flip-spin": flip_spin_from_config}


def rig_from_config(section: Section) -> Rig:
    """The rig described by ``[rig]``; ``kind`` picks the mechanism."""
    return RIG_KINDS[section.model.kind](section)
