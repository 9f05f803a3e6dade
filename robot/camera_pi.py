"""A Raspberry Pi CSI camera through picamera2 (libcamera), with its exposure controls.

``picamera2`` is imported only when such a camera is opened or listed: it
needs libcamera's Python bindings, which come from the OS, not from PyPI.

Frames are asked for as picamera2's ``"RGB888"``, whose arrays are laid out
B, G, R per pixel (libcamera names formats by their little-endian word
order), which is OpenCV's BGR as it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType
from typing import Any

import numpy as np

from .camera_config import CaptureSettings
from .errors import RobotError

FORMAT = "RGB888"
BUFFERS = 4  # fewer than picamera2's video default of 6: less memory, and fewer stale frames after a change
MANUAL, AUTO = 1, 0  # libcamera's ExposureTimeMode / AnalogueGainMode values
VALUE_CONTROLS = ("ExposureTime", "AnalogueGain", "ColourGains")

INSTALL = (
    "on Raspberry Pi OS install it with `sudo apt install python3-picamera2` and make robotd's "
    "virtual environment with `python3 -m venv --system-site-packages` so that it sees it "
    "(`pip install 'robotd[pi]'` fetches picamera2 from PyPI, but libcamera's Python bindings "
    "still come only from apt: python3-libcamera)"
)


def import_picamera2() -> ModuleType:
    """The picamera2 module, or a RobotError saying what to install."""
    try:
        import picamera2
    except ImportError as error:
        if (error.name or "").startswith("libcamera"):
            raise RobotError(
                "picamera2 is installed but libcamera's Python bindings are not visible: " + INSTALL
            ) from None
        if error.name == "picamera2":
            raise RobotError('kind = "picamera2" needs the picamera2 package: ' + INSTALL) from None
        raise RobotError(f"picamera2 failed to import ({error}); " + INSTALL) from None
    return picamera2


class PicameraSource:
    """An opened, started Picamera2; see ``camera_lock.Source``."""

    flush_frames = BUFFERS + 3  # requests in flight, and libcamera's few frames of delay in applying controls

    def __init__(self, settings: CaptureSettings):
        module = import_picamera2()
        number = settings.device
        try:
            camera = module.Picamera2(number)
        except Exception as error:  # picamera2 raises IndexError, RuntimeError, ... for a missing or busy camera
            raise RobotError(
                f"camera '{settings.name}': cannot open picamera2 camera {number}: {error} "
                "(is it connected and not in use by another program? `robotd check` lists cameras)"
            ) from None
        try:
            main: dict[str, object] = {"format": FORMAT}
            if settings.width and settings.height:
                main["size"] = (settings.width, settings.height)
            camera.configure(camera.create_video_configuration(main=main, buffer_count=BUFFERS))
            camera.start()
        except Exception as error:
            camera.close()
            raise RobotError(f"camera '{settings.name}': picamera2 camera {number} cannot start: {error}") from None
        self._camera = camera
        self._offered = set(camera.camera_controls)

    def read(self) -> np.ndarray | None:
        return self._camera.capture_array("main")

    def current(self, names: Iterable[str]) -> dict[str, Any]:
        metadata = self._camera.capture_metadata()
        gains = metadata.get("ColourGains")
        seen = {
            "exposure": metadata.get("ExposureTime"),
            "gain": metadata.get("AnalogueGain"),
            "white_balance": (float(gains[0]), float(gains[1])) if gains is not None else None,
        }
        return {name: seen[name] for name in names}

    def release(self, names: Iterable[str]) -> dict[str, str]:
        return self._set({name: self._auto_controls(name) for name in names})[1]

    def fix(self, values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        groups = {
            name: self._manual_controls(name, value, both="exposure" in values and "gain" in values)
            for name, value in values.items()
        }
        applied, refused = self._set(groups)
        return {name: values[name] for name in applied}, refused

    def close(self) -> None:
        try:
            self._camera.stop()
        finally:
            self._camera.close()

    def _auto_controls(self, name: str) -> dict[str, Any]:
        if name == "white_balance":
            return {"AwbEnable": True}
        mode = "ExposureTimeMode" if name == "exposure" else "AnalogueGainMode"
        # libcamera 0.5 and later: one mode per control (AeEnable would set
        # both, and could undo the other's manual mode in the same request).
        return {mode: AUTO} if mode in self._offered else {"AeEnable": True}

    def _manual_controls(self, name: str, value: Any, both: bool) -> dict[str, Any]:
        if name == "white_balance":
            return {"AwbEnable": False, "ColourGains": (float(value[0]), float(value[1]))}
        mode, key, value = (
            ("ExposureTimeMode", "ExposureTime", int(round(value)))
            if name == "exposure"
            else ("AnalogueGainMode", "AnalogueGain", float(value))
        )
        if mode in self._offered:
            return {mode: MANUAL, key: value}
        # Before libcamera 0.5 a value alone fixes its control and the
        # automatic works with the other; AeEnable off fixes both.
        return {key: value, "AeEnable": False} if both else {key: value}

    def _set(self, groups: dict[str, dict[str, Any]]) -> tuple[list[str], dict[str, str]]:
        """Set each control's group of libcamera controls: all in one request if the camera takes them."""
        refused, wanted = {}, {}
        for name, controls in groups.items():
            offered = {key: value for key, value in controls.items() if key in self._offered}
            missing = [key for key in controls if key in VALUE_CONTROLS and key not in self._offered]
            if missing or not offered:
                refused[name] = f"the camera does not offer {', '.join(missing or controls)}"
            else:
                wanted[name] = offered
        if not wanted:
            return [], refused
        try:
            self._camera.set_controls({k: v for controls in wanted.values() for k, v in controls.items()})
            return list(wanted), refused
        except Exception:
            pass  # find out which one it will not take
        applied = []
        for name, controls in wanted.items():
            try:
                self._camera.set_controls(controls)
                applied.append(name)
            except Exception as error:
                refused[name] = f"picamera2 refused {', '.join(controls)}: {error}"
        return applied, refused
