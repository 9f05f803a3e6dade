"""Scanning on a one-camera rig: the rig turns each face up to the camera, one frame per face.

``views()`` plans the scan from where the servos are (``flipspin.scan``:
the quickest flips and spins that show all six faces) and says which cube
face, turned which way, each frame shows; ``frames()`` carries the same
plan out, grabbing a frame after each face comes up. ``ViewScanner`` reads
the frames with those views like any other rig's. The scanned state is
written in the cube's frame as it sat when the scan began; the rig's
planner goes on from the scan's end pose in that frame.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from vision import ViewConfig

from .errors import RobotError
from .flipspin.pose import HOME, Pose
from .flipspin.scan import ScanPlan, plan_scan, scan_view_config


class TurningScan:
    """The frames and views of one scan by flips and spins, for ``ViewScanner``."""

    def __init__(
        self, rig, motion, frame: Callable[[], np.ndarray], quad: Callable[[], np.ndarray], size: Callable[[], int]
    ):
        self.rig, self.motion = rig, motion
        self._frame, self._quad, self._size = frame, quad, size

    def _plan(self) -> ScanPlan:
        return plan_scan(Pose(HOME.orientation, self.motion.spinner, self.motion.cover), self.rig.timing)

    def views(self) -> ViewConfig:
        """Which face each frame of the next scan shows, and how it is turned."""
        return scan_view_config(self._plan(), self._quad(), self._size())

    def frames(self) -> dict[str, np.ndarray]:
        """Turn each face up to the camera and grab it: ``scan1`` ... ``scan6``."""
        self.motion.ready()
        plan = self._plan()
        images = {}
        for k, capture in enumerate(plan.captures):
            self.motion.do(capture.ops)
            images[f"scan{k + 1}"] = self._frame()
        if (self.motion.spinner, self.motion.cover) != (plan.end.spinner, plan.end.cover):
            raise RobotError("the scan did not end where it was planned to: the servos are out of step")
        self.rig.reset(plan.end, size=self._size())
        return images
