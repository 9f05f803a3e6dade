"""The face under a flip/spin rig's camera (``top_face``): from ``[vision] top_face``, or saved by the dashboard.

The four image points of the face's outer corners, back-left, back-right, front-right, front-left
(docs/hardware.md, "Measuring top_face"). A config that sets ``[vision] top_face`` fixes them; without it
robotd reads ``top_face.json`` in the data directory, which the Calibration tab writes, and until that
exists the rig is not calibrated: it starts, and refuses to scan with a message that says where to
calibrate (``calibration_start.NotCalibrated``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from vision.views import MIN_FACE_AREA_PX

from .calibration_start import NotCalibrated
from .calibration_store import save_atomically
from .errors import ConfigError, RobotError

FILE_NAME = "top_face.json"
ORDER = "back-left, back-right, front-right, front-left"


class TopFace:
    """The quad the scan reads each face in; ``quad()`` raises ``NotCalibrated`` while there is none."""

    def __init__(self, configured, file: Path, camera: str, not_calibrated: str):
        self.file, self.camera, self._message = Path(file), camera, not_calibrated
        self.fixed = configured is not None  # set in the config: the dashboard shows it, cannot change it
        self.corners: np.ndarray | None = (
            np.array(configured, dtype=np.float64) if self.fixed else load_top_face(self.file)
        )

    def quad(self) -> np.ndarray:
        if self.corners is None:
            raise NotCalibrated(self._message)
        return self.corners

    def page(self, frame_size: tuple[int, int] | None) -> dict:
        """What the Calibration tab edits: the camera, the corners (None before the first calibration), a
        starting square to drag onto the cube, and where a save goes (or why it cannot)."""
        width, height = frame_size or (640, 480)
        side = 0.5 * min(width, height)
        x, y = (width - side) / 2, (height - side) / 2
        return {
            "camera": self.camera,
            "width": frame_size[0] if frame_size else None,
            "height": frame_size[1] if frame_size else None,
            "corners": None if self.corners is None else np.round(self.corners, 1).tolist(),
            "starting": [[x, y], [x + side, y], [x + side, y + side], [x, y + side]],
            "order": ORDER,
            "fixed": "set by [vision] top_face in the config" if self.fixed else None,
            "file": str(self.file),
        }

    def checked(self, corners, frame_size: tuple[int, int] | None) -> np.ndarray:
        """``corners`` validated: four finite points inside the frame, a quad large enough and not twisted."""
        if self.fixed:
            raise RobotError("top_face: set by [vision] top_face in the config: change it there")
        return quad_problems(corners, frame_size, f"top_face (camera {self.camera!r})")

    def save(self, corners: np.ndarray) -> Path | None:
        """Write ``corners`` to the data directory's file and use them from the next scan on; the previous
        file's backup, if there was one."""
        backup = save_atomically(self.file, json.dumps({"top_face": np.round(corners, 2).tolist()}) + "\n")
        self.corners = corners
        return backup


def quad_problems(corners, frame_size: tuple[int, int] | None, where: str) -> np.ndarray:
    """The four points as an array, or RobotError naming what is wrong with them."""
    try:
        points = np.array(corners, dtype=np.float64)
    except (TypeError, ValueError):
        points = np.empty(0)
    if points.shape != (4, 2) or not np.all(np.isfinite(points)):
        raise RobotError(f"{where}: must be four [x, y] image points ({ORDER})")
    if frame_size is not None:
        width, height = frame_size
        outside = [(x, y) for x, y in points if not (0 <= x <= width and 0 <= y <= height)]
        if outside:
            raise RobotError(
                f"{where}: point ({outside[0][0]:g}, {outside[0][1]:g}) lies outside the {width}x{height} frame"
            )
    edges = np.roll(points, -1, axis=0) - points
    turns = edges[:, 0] * np.roll(edges, -1, axis=0)[:, 1] - edges[:, 1] * np.roll(edges, -1, axis=0)[:, 0]
    area = 0.5 * abs(np.dot(points[:, 0], np.roll(points[:, 1], -1)) - np.dot(points[:, 1], np.roll(points[:, 0], -1)))
    if area < MIN_FACE_AREA_PX or not (np.all(turns > 0) or np.all(turns < 0)):
        raise RobotError(f"{where}: the points enclose no proper quadrilateral: give them in the order {ORDER}")
    return points


def load_top_face(file: Path) -> np.ndarray | None:
    """The quad the dashboard saved, None when there is none yet; a damaged file is a ConfigError."""
    if not file.is_file():
        return None
    try:
        return quad_problems(json.loads(file.read_text())["top_face"], None, str(file))
    except (OSError, ValueError, KeyError, TypeError, RobotError) as error:
        raise ConfigError(f"{file}: cannot read the saved top_face: {error} (delete it and calibrate again)") from None
