"""``FlipSpinRig``: the flip/spin rig as robotd's Runner sees it (``plan``, ``status``), plus scan planning;
``robot.rig`` builds it from ``[rig]``.

The rig remembers the pose it leaves the cube in: each ``plan`` and
``scan_plan`` starts where the previous one ended. The pose is a plan's
promise, not a measurement; after an aborted run, ``reset`` it to where the
cube really is (by default: as scanned, spinner home, cover open).

``suited`` swaps a run's solution for the one the rig performs quickest
(``suited.rig_solution``: the state solved as seen in other orientations,
each solution planned from the rig's pose); ``suited_budget_s`` 0 keeps the
solver's.

It also remembers the puzzle size (3 until told otherwise, e.g. by
``reset(pose, size=2)`` after a scan): a 2x2x2 has no centres, so the
optimal planner may make a move by turning the opposite layer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

from solver.api import Solution

from ..errors import RobotError
from ..rig_plan import estimate_s
from .naive import plan_naive
from .planner import plan_optimal
from .pose import HOME, Pose
from .scan import ScanPlan, plan_scan
from .steps import RigStep
from .suited import DEFAULT_BUDGET_S, rig_solution
from .timing import FlipSpinTiming

PLANNERS = {"optimal": plan_optimal, "naive": plan_naive}
SIZES = (2, 3)
SUITED_CANDIDATES = {2: 24, 3: 4}  # a 2x2x2's table answers at once; a 3x3x3's two-phase shares the budget


@dataclass
class FlipSpinRig:
    timing: FlipSpinTiming = field(default_factory=FlipSpinTiming)
    planner: str = "optimal"
    pose: Pose = HOME
    kind: str = "flip-spin"
    size: int = 3
    suited_budget_s: float = DEFAULT_BUDGET_S  # 0: keep the solver's solution

    @property
    def either_layer(self) -> bool:
        """Whether a move may turn the opposite layer: on a 2x2x2, with the optimal planner."""
        return self.size == 2 and self.planner == "optimal"

    def _planner(self) -> Callable[[Sequence[int], Pose, FlipSpinTiming], tuple[list[RigStep], Pose]]:
        if self.either_layer:
            return partial(plan_optimal, either_layer=True)
        return PLANNERS[self.planner]

    def preview(self, moves: Sequence[int]) -> tuple[list[RigStep], Pose]:
        """The plan ``plan`` would make and the pose it would end in; the rig's pose stays."""
        return self._planner()(moves, self.pose, self.timing)

    def planned_s(self, moves: Sequence[int]) -> float:
        """Motor time ``moves`` would take from the current pose; the rig's pose stays."""
        return estimate_s(self.preview(moves)[0])

    def plan(self, moves: Sequence[int]) -> list[RigStep]:
        """One step per solver move (a run on one axis may be reordered); the rig's pose moves to its end."""
        steps, self.pose = self.preview(moves)
        return steps

    def suited(self, state: str, solution: Solution) -> Solution:
        """Of ``solution`` and the solutions of ``state`` seen in other orientations, the one whose plan from the
        rig's pose takes the least robot time; what the choice found and cost is in its details."""
        if not solution.found or not solution.moves or self.suited_budget_s <= 0:
            return solution
        size = 3 if len(state) == 54 else 2
        answer = rig_solution(
            state, self, SUITED_CANDIDATES[size], self.suited_budget_s, first=solution.moves, metric=solution.metric
        )
        kept = tuple(solution.moves) == answer.moves
        details = dict(
            solution.details,
            rig_solution={
                "kept": kept,
                "orientation": answer.orientation,
                "candidates": answer.candidates,
                "planned_s": round(answer.seconds, 3),
                "solver_planned_s": round(self.planned_s(solution.moves), 3),
                "solve_s": round(answer.solve_s, 3),
            },
        )
        moves = list(solution.moves) if kept else list(answer.moves)
        return replace(solution, moves=moves, seconds=solution.seconds + answer.solve_s, details=details)

    def scan_plan(self) -> ScanPlan:
        """Captures of all six faces from the current spinner and cover, the cube's frame taken as it is now.

        The scanned state is written in that frame, so the rig's pose
        afterwards is the scan's end pose in it.
        """
        scan = plan_scan(Pose(HOME.orientation, self.pose.spinner, self.pose.cover), self.timing)
        self.pose = scan.end
        return scan

    def reset(self, pose: Pose = HOME, size: int | None = None) -> None:
        """Where the cube is now; ``size`` (2 or 3), when given, the puzzle on the rig."""
        if size is not None:
            if size not in SIZES:
                raise RobotError(f"the flip/spin rig turns 2x2x2 and 3x3x3 cubes, not size {size!r}")
            self.size = size
        self.pose = pose

    def status(self) -> dict:
        return {
            "kind": self.kind,
            "planner": self.planner,
            "size": self.size,
            "either_layer": self.either_layer,
            "timing": self.timing.as_dict(),
            "pose": {"faces": self.pose.faces, "spinner": self.pose.spinner, "cover": self.pose.cover},
        }
