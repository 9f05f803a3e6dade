"""Scanning the cube on a fixed-camera rig: grab every camera, sample the faces, classify.

The view config (``vision.views``) says where each face is in which camera
image; the colour calibration is an optional prior. Where a camera can set
its exposure (``retake``), an image whose stickers clip, or that is far
darker than the others, is taken again at another exposure and the best
frame is read (``vision.exposure``). Both can be replaced
while the daemon runs (the dashboard's calibration endpoint). Every scan,
read or refused, is remembered with its frames (``scan_archive.ScanMemory``)
for the dashboard's overlay and for keeping a refused scan on disk.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import numpy as np

from vision import Calibration, ScanError, ViewConfig, scan_views
from vision.exposure import Retake, at_one_exposure, bracket
from vision.overlay import doubtful_stickers
from vision.sampling import sample_views

from .errors import RobotError
from .run import ScanRefused, ScanResult
from .scan_archive import ScanMemory

Frames = Callable[[], dict[str, np.ndarray]]
log = logging.getLogger("robotd.scanner")


class ViewScanner:
    """``scan()`` grabs one frame per camera and returns the classified cube; ``memory`` keeps the last scans."""

    def __init__(
        self,
        frames: Frames,
        views: Callable[[], ViewConfig],
        calibration: Calibration | None = None,
        memory: ScanMemory | None = None,
        retake: Retake | None = None,
    ):
        self._frames, self._views, self._retake = frames, views, retake
        self.calibration = calibration
        self.memory = memory if memory is not None else ScanMemory()
        self._lock = threading.Lock()

    def views(self) -> ViewConfig:
        return self._views()

    def set_views(self, views: ViewConfig) -> None:
        with self._lock:
            self._views = lambda: views

    def colours(self) -> tuple[np.ndarray, list[dict]]:
        """The sticker colours of the cube in the rig now, in facelet order, and the re-takes that needed
        (for a colour calibration: ``vision.calibrate``)."""
        views = self._views()
        taken = bracket(self._frames(), views, self._retake)
        return at_one_exposure(sample_views(taken.images, views), views, taken.exposures), taken.retakes

    def scan(self) -> ScanResult:
        views = self._views()
        images = self._frames()
        missing = [name for name in views.images if name not in images]
        if missing:
            raise RobotError(
                f"the view config needs camera image(s) {', '.join(missing)}, "
                f"but the cameras are {', '.join(images) or 'none'}"
            )
        calibration = self.calibration if self.calibration and self.calibration.size == views.size else None
        try:
            taken = bracket(images, views, self._retake)
            images = taken.images
            result = scan_views(images, views, calibration, taken.exposures)
        except ScanError as error:
            record = self.memory.add(
                images, views, error.reading, doubtful_stickers(error.reading, error.stickers), str(error), calibration
            )
            raise ScanRefused(str(error), record.doubtful, record.id) from None
        except Exception as error:  # a bug in the vision: keep the frames that show it, for the bug report
            message = f"the vision failed on these frames: {type(error).__name__}: {error}"
            record = self.memory.add(images, views, None, (), message, calibration)
            raise ScanRefused(message, (), record.id) from error
        record = self.memory.add(images, views, result, doubtful_stickers(result), calibration=calibration)
        return ScanResult(
            result.state,
            [round(float(c), 4) for c in result.confidence],
            record.id,
            list(record.doubtful),
            list(result.warnings),
            taken.retakes,
        )


def camera_retake(cameras: dict) -> Retake:
    """Exposure bracketing through the cameras' own controls (``Camera.frame_at``): a camera that fails
    while re-taking leaves the scan to the frame it had (the failure is logged)."""

    def retake(name: str, exposure: float) -> np.ndarray | None:
        camera = cameras.get(name)
        if camera is None:
            return None
        try:
            return camera.frame_at(exposure)
        except RobotError as error:
            log.warning("camera '%s': no frame at %.2f times the exposure: %s", name, exposure, error)
            return None

    return retake


def views_for_page(views: ViewConfig, sizes: dict[str, tuple[int, int]]) -> dict:
    """The view config as the dashboard draws it: per camera, its size and the four points of each face."""
    page: dict[str, dict] = {}
    for view in views.views:
        width, height = sizes.get(view.image, (None, None))
        camera = page.setdefault(view.image, {"width": width, "height": height, "faces": {}})
        camera["faces"][view.face] = np.round(view.corners, 1).tolist()
    return page
