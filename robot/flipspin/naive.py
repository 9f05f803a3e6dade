"""The baseline a hobby builder writes: one move at a time, no look-ahead.

For each solver move the cube is brought from where it is to that move's
face on the spinner by the fewest flips and quarter spins (time breaks a
tie), then held, turned a quarter, released, and the spinner carries the
free cube back home. A half turn is two such quarter turns; the base never
spins 180 degrees. This is what the optimal planner is measured against.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from functools import lru_cache

from solver.puzzles.cube.geometry import FACES
from solver.puzzles.cube.notation import move_face, move_turns

from .planner import check_moves
from .pose import FLIP, HOLD, HOLD_OP, OPEN, RELEASE, SPINNER, Op, Pose, spin_ops
from .steps import RigStep, make_step
from .timing import FlipSpinTiming

QUARTERS = {1: (1,), 2: (1, 1), 3: (-1,)}  # signed quarter turns of a move, by clockwise quarter turns


@lru_cache(maxsize=4096)
def _recipe(start: Pose, face: str, turn: int, timing: FlipSpinTiming) -> tuple[Op, ...]:
    """Fewest flips and quarter spins (then least time) to ``face`` on the spinner, ready to turn ``turn``."""
    best = {start: (0, 0.0)}
    heap: list[tuple] = [(0, 0.0, start, ())]
    while heap:
        moves, seconds, pose, ops = heapq.heappop(heap)
        if pose.bottom == face and pose.spinner + turn in SPINNER:
            return ops
        if best[pose] < (moves, seconds):
            continue
        for op in (FLIP, *spin_ops(pose.spinner, half_spins=False)):
            after, cost = pose.apply(op), (moves + 1, seconds + timing.seconds(op))
            if after not in best or cost < best[after]:
                best[after] = cost
                heapq.heappush(heap, (*cost, after, ops + (op,)))
    raise AssertionError("every face can reach the spinner")  # flips and spins reach all 24 orientations


def _quarter(pose: Pose, face: str, turn: int, timing: FlipSpinTiming) -> tuple[list[Op], Pose]:
    ops = list(_recipe(pose, face, turn, timing)) + [HOLD_OP, Op("turn", turn), RELEASE]
    for op in ops:
        pose = pose.apply(op)
    if pose.spinner != 0:
        home = Op("spin", -pose.spinner)
        ops.append(home)
        pose = pose.apply(home)
    return ops, pose


def plan_naive(moves: Sequence[int], start: Pose, timing: FlipSpinTiming) -> tuple[list[RigStep], Pose]:
    """The baseline plan for ``moves`` from ``start`` and the pose it ends in (cover open, spinner home)."""
    pose, steps = start, []
    for move in check_moves(moves):
        ops: list[Op] = []
        if pose.cover == HOLD:
            ops.append(RELEASE)
            pose = pose._replace(cover=OPEN)
        for turn in QUARTERS[move_turns(move)]:
            quarter, pose = _quarter(pose, FACES[move_face(move)], turn, timing)
            ops += quarter
        steps.append(make_step(ops, move, timing))
    return steps, pose
