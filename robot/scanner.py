"""Scanning the cube on a fixed-camera rig: grab every camera, sample the faces, classify.

The view config (``vision.views``) says where each face is in which camera
image; the colour calibration is an optional prior. Both can be replaced
while the daemon runs (the dashboard's calibration endpoint).
"""

from __future__ import annotations

import threading
from typing import Callable

import numpy as np

from vision import Calibration, ViewConfig, scan_views

from .errors import RobotError
from .run import ScanResult

Frames = Callable[[], dict[str, np.ndarray]]


class ViewScanner:
    """``scan()`` grabs one frame per camera and returns the classified cube."""

    def __init__(self, frames: Frames, views: Callable[[], ViewConfig], calibration: Calibration | None = None):
        self._frames, self._views = frames, views
        self.calibration = calibration
        self._lock = threading.Lock()

    def views(self) -> ViewConfig:
        return self._views()

    def set_views(self, views: ViewConfig) -> None:
        with self._lock:
            self._views = lambda: views

    def scan(self) -> ScanResult:
        views = self._views()
        images = self._frames()
        missing = [name for name in views.images if name not in images]
        if missing:
            raise RobotError(f"the view config needs camera image(s) {', '.join(missing)}, "
                             f"but the cameras are {', '.join(images) or 'none'}")
        calibration = self.calibration if self.calibration and self.calibration.size == views.size else None
        result = scan_views(images, views, calibration)
        return ScanResult(result.state, [round(float(c), 4) for c in result.confidence])


def views_for_page(views: ViewConfig, sizes: dict[str, tuple[int, int]]) -> dict:
    """The view config as the dashboard draws it: per camera, its size and the four points of each face."""
    page: dict[str, dict] = {}
    for view in views.views:
        width, height = sizes.get(view.image, (None, None))
        camera = page.setdefault(view.image, {"width": width, "height": height, "faces": {}})
        camera["faces"][view.face] = np.round(view.corners, 1).tolist()
    return page
