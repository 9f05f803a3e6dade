"""A V4L2 (USB/UVC) camera through OpenCV's ``VideoCapture``, with its exposure controls.

OpenCV's V4L2 backend passes control values to the driver as they are (its
"normalized" 0..1 mode is switched off on open), so the numbers are the
driver's: ``CAP_PROP_AUTO_EXPOSURE`` takes the V4L2 menu (1 manual, 3
aperture priority, which is what UVC cameras call auto), ``CAP_PROP_EXPOSURE``
is ``exposure_time_absolute`` (100 µs units on uvcvideo) and
``CAP_PROP_WB_TEMPERATURE`` is in kelvin. The backend answers -1 for a
control the driver lacks, and every write is checked by reading it back.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from typing import Any

import numpy as np

from .camera_config import CaptureSettings
from .errors import RobotError

MANUAL_EXPOSURE = 1  # V4L2_EXPOSURE_MANUAL
AUTO_EXPOSURE_MODES = (3, 0)  # V4L2_EXPOSURE_APERTURE_PRIORITY (UVC's auto), V4L2_EXPOSURE_AUTO
UNKNOWN = -1.0
DEV_VIDEO = "/dev/video"


def open_target(device: int | str) -> tuple[int | str, int]:
    """What to hand ``VideoCapture`` on this system: (index or name, backend).

    Some OpenCV builds (5.x among them) refuse to open a V4L2 device by
    path, so a path that is, or links to, /dev/videoN (e.g. a stable
    /dev/v4l/by-id/... link) is opened as index N. It is resolved at each
    open, since the number can change when the camera is plugged in again.
    """
    import cv2

    if not sys.platform.startswith("linux"):
        return device, cv2.CAP_ANY
    if isinstance(device, int):
        return device, cv2.CAP_V4L2
    number = re.fullmatch(re.escape(DEV_VIDEO) + r"(\d+)", os.path.realpath(device))
    return (int(number.group(1)), cv2.CAP_V4L2) if number else (device, cv2.CAP_ANY)


class V4l2Source:
    """An opened ``VideoCapture``; see ``camera_lock.Source``."""

    flush_frames = 6  # OpenCV's 4 V4L2 buffers, and a frame or two inside a UVC camera

    def __init__(self, settings: CaptureSettings):
        import cv2

        self._cv2 = cv2
        target, backend = open_target(settings.device)
        capture = cv2.VideoCapture(target, backend)
        if not capture.isOpened():
            capture.release()
            node = f"{DEV_VIDEO}{target}" if isinstance(target, int) else None
            seen = f" ({node})" if node and isinstance(settings.device, str) and node != settings.device else ""
            raise RobotError(
                f"camera '{settings.name}': cannot open {settings.device!r}{seen} "
                "(is it plugged in, and is the user in the 'video' group? `robotd check` lists cameras)"
            )
        if backend == cv2.CAP_V4L2:
            capture.set(cv2.CAP_PROP_MODE, 0)  # raw driver values, even with OPENCV_VIDEOIO_V4L_RANGE_NORMALIZED set
        if settings.width and settings.height:
            capture.set(cv2.CAP_PROP_FRAME_WIDTH, settings.width)
            capture.set(cv2.CAP_PROP_FRAME_HEIGHT, settings.height)
        self._capture = capture
        self._value_props = {
            "exposure": cv2.CAP_PROP_EXPOSURE,
            "gain": cv2.CAP_PROP_GAIN,
            "white_balance": cv2.CAP_PROP_WB_TEMPERATURE,
        }

    def read(self) -> np.ndarray | None:
        ok, image = self._capture.read()
        return image if ok else None

    def current(self, names: Iterable[str]) -> dict[str, Any]:
        return {name: self._get(self._value_props[name]) for name in names}

    def release(self, names: Iterable[str]) -> dict[str, str]:
        cv2, refused = self._cv2, {}
        names = set(names)
        if "exposure" in names and not any(
            self._switch(cv2.CAP_PROP_AUTO_EXPOSURE, mode) for mode in AUTO_EXPOSURE_MODES
        ):
            refused["exposure"] = "the camera has no automatic exposure mode that can be switched on"
        if "white_balance" in names and not self._switch(cv2.CAP_PROP_AUTO_WB, 1):
            refused["white_balance"] = "the camera has no automatic white balance that can be switched on"
        # Gain has no automatic switch through OpenCV: its current value is read and kept.
        return refused

    def fix(self, values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        cv2 = self._cv2
        locked: dict[str, Any] = {}
        refused: dict[str, str] = {}
        if "exposure" in values:
            if self._switch(cv2.CAP_PROP_AUTO_EXPOSURE, MANUAL_EXPOSURE):
                self._write("exposure", values["exposure"], locked, refused)
            else:
                refused["exposure"] = "the driver refused manual exposure (auto_exposure = 1)"
        if "gain" in values:
            self._write("gain", values["gain"], locked, refused)
        if "white_balance" in values:
            if self._switch(cv2.CAP_PROP_AUTO_WB, 0):
                self._write("white_balance", values["white_balance"], locked, refused)
            else:
                refused["white_balance"] = "the driver refused to switch automatic white balance off"
        return locked, refused

    def close(self) -> None:
        self._capture.release()

    def _get(self, prop: int) -> float | None:
        value = self._capture.get(prop)
        return None if value == UNKNOWN else float(value)

    def _switch(self, prop: int, mode: int) -> bool:
        accepted = self._capture.set(prop, mode)
        now = self._get(prop)
        return accepted if now is None else now == mode

    def _write(self, name: str, value: float, locked: dict, refused: dict) -> None:
        accepted = self._capture.set(self._value_props[name], value)
        now = self._get(self._value_props[name])
        if now is None and accepted:
            locked[name] = value
        elif now is not None and (accepted or now == value):
            locked[name] = now  # the driver may round or clamp what it was given
        else:
            kept = f" (it keeps {now:g})" if now is not None else ""
            refused[name] = f"the driver refused {name} = {value:g}{kept}"
