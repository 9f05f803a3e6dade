"""Camera sources: an OpenCV ``VideoCapture`` device, or frames rendered by the simulator.

Every source hands out BGR frames (``numpy`` uint8, height x width x 3) under
a name that the view config refers to.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, Protocol

import numpy as np

from .config import Section
from .errors import RobotError


class Camera(Protocol):
    name: str

    def frame(self) -> np.ndarray: ...

    def status(self) -> dict: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class CaptureSettings:
    """``[camera.NAME]`` for a real camera: which device and how to set it up."""
    name: str
    device: int | str
    width: int | None
    height: int | None
    exposure: float | None  # the driver's units; None keeps auto exposure
    warmup_frames: int


def capture_settings(section: Section, name: str) -> CaptureSettings:
    index = section.get_int("index", None) if "index" in section.data else None
    device = section.get_str("device", None)
    if (index is None) == (device is None):
        raise section.error("device", "give exactly one of 'index' (0, 1, ...) or 'device' (/dev/video0, ...)")
    return CaptureSettings(
        name=name,
        device=index if index is not None else device,
        width=section.get_int("width", None) if "width" in section.data else None,
        height=section.get_int("height", None) if "height" in section.data else None,
        exposure=section.get_float("exposure", None) if "exposure" in section.data else None,
        warmup_frames=section.get_int("warmup_frames", 3, minval=0, maxval=100),
    )


class CaptureCamera:
    """A V4L2/USB camera through OpenCV, opened lazily and reopened after a failure."""

    def __init__(self, settings: CaptureSettings):
        self.name = settings.name
        self.settings = settings
        self._capture = None
        self._lock = threading.Lock()
        self.last_error: str | None = None

    def _open(self):
        import cv2

        capture = cv2.VideoCapture(self.settings.device)
        if not capture.isOpened():
            capture.release()
            raise RobotError(f"camera '{self.name}': cannot open {self.settings.device!r} "
                             "(is it plugged in, and is the user in the 'video' group?)")
        if self.settings.width:
            capture.set(cv2.CAP_PROP_FRAME_WIDTH, self.settings.width)
        if self.settings.height:
            capture.set(cv2.CAP_PROP_FRAME_HEIGHT, self.settings.height)
        if self.settings.exposure is not None:
            capture.set(cv2.CAP_PROP_AUTO_EXPOSURE, 1)  # V4L2 manual mode
            capture.set(cv2.CAP_PROP_EXPOSURE, self.settings.exposure)
        for _ in range(self.settings.warmup_frames):
            capture.read()
        return capture

    def frame(self) -> np.ndarray:
        with self._lock:
            if self._capture is None:
                self._capture = self._open()
            ok, image = self._capture.read()
            if not ok or image is None:
                self._capture.release()
                self._capture = None
                self.last_error = f"camera '{self.name}': no frame from {self.settings.device!r}"
                raise RobotError(self.last_error)
            self.last_error = None
            return image

    def status(self) -> dict:
        return {"name": self.name, "kind": "capture", "device": self.settings.device,
                "open": self._capture is not None, "error": self.last_error}

    def close(self) -> None:
        with self._lock:
            if self._capture is not None:
                self._capture.release()
                self._capture = None


class RenderedCamera:
    """A simulated camera: ``render()`` draws the virtual cube as this camera would see it."""

    def __init__(self, name: str, render: Callable[[], np.ndarray]):
        self.name = name
        self._render = render

    def frame(self) -> np.ndarray:
        return self._render()

    def status(self) -> dict:
        return {"name": self.name, "kind": "simulated", "open": True, "error": None}

    def close(self) -> None:
        pass
