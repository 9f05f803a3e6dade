"""``FlipSpinRig``: the flip/spin rig as robotd's Runner sees it (``plan``, ``status``), plus scan planning.

The rig remembers the pose it leaves the cube in: each ``plan`` and
``scan_plan`` starts where the previous one ended. The pose is a plan's
promise, not a measurement; after an aborted run, ``reset`` it to where the
cube really is (by default: as scanned, spinner home, cover open).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from ..config import Section
from .naive import plan_naive
from .planner import plan_optimal
from .pose import HOME, Pose
from .scan import ScanPlan, plan_scan
from .steps import RigStep
from .timing import FlipSpinTiming, timing_from_config

PLANNERS = {"optimal": plan_optimal, "naive": plan_naive}


@dataclass
class FlipSpinRig:
    timing: FlipSpinTiming = field(default_factory=FlipSpinTiming)
    planner: str = "optimal"
    pose: Pose = HOME
    kind: str = "flip-spin"

    def plan(self, moves: Sequence[int]) -> list[RigStep]:
        """One step per solver move (a run on one axis may be reordered); the rig's pose moves to its end."""
        steps, self.pose = PLANNERS[self.planner](moves, self.pose, self.timing)
        return steps

    def scan_plan(self) -> ScanPlan:
        """Captures of all six faces from the current spinner and cover, the cube's frame taken as it is now.

        The scanned state is written in that frame, so the rig's pose
        afterwards is the scan's end pose in it.
        """
        scan = plan_scan(Pose(HOME.orientation, self.pose.spinner, self.pose.cover), self.timing)
        self.pose = scan.end
        return scan

    def reset(self, pose: Pose = HOME) -> None:
        self.pose = pose

    def status(self) -> dict:
        return {"kind": self.kind, "planner": self.planner, "timing": self.timing.as_dict(),
                "pose": {"faces": self.pose.faces, "spinner": self.pose.spinner, "cover": self.pose.cover}}


def flip_spin_from_config(section: Section) -> FlipSpinRig:
    """Read ``[rig]`` for kind = "flip-spin": the timing keys (see ``timing``) and ``planner``."""
    timing = timing_from_config(section)
    planner = section.get_str("planner", "optimal", choices=tuple(PLANNERS))
    return FlipSpinRig(timing, planner)

