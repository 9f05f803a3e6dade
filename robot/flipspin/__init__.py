"""The two-servo flip/spin rig (CUBOTino style): poses, timing, planners, scan planning.

A base ("spin") turns the cube or, while a cover holds the upper layers,
the bottom layer; a lever ("flip") tips the cube over. Every solver move
needs its face brought onto the base first, so how the cube is re-posed
between moves decides the robot's speed: ``planner`` finds the quickest
plan, ``naive`` is the one-move-at-a-time baseline, ``scan`` shows the six
faces to the camera, ``suited`` picks among equivalent solutions the one
the rig performs quickest.
"""

from .naive import plan_naive
from .planner import plan_optimal
from .pose import HOME, ORIENTATIONS, Op, Pose, ops_text
from .rig import FlipSpinRig
from .scan import Capture, ScanPlan, plan_scan, scan_view_config, scan_view_dict
from .steps import RigStep
from .suited import RigSolution, rig_solution
from .timing import FlipSpinTiming, servo_timing, timing_from_config

__all__ = [
    "Capture",
    "FlipSpinRig",
    "FlipSpinTiming",
    "HOME",
    "ORIENTATIONS",
    "Op",
    "Pose",
    "RigSolution",
    "RigStep",
    "ScanPlan",
    "ops_text",
    "plan_naive",
    "plan_optimal",
    "plan_scan",
    "rig_solution",
    "scan_view_config",
    "scan_view_dict",
    "servo_timing",
    "timing_from_config",
]
