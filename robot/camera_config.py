"""``[camera.NAME]``: which camera, at what size, and how its exposure is held.

Two kinds of source read the same table: ``kind = "v4l2"`` (the default; a
USB/UVC camera through OpenCV) and ``kind = "picamera2"`` (a Raspberry Pi
CSI camera through libcamera). Values the other kind cannot use are errors
naming the key, never silently ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .config import Section

KINDS = ("v4l2", "picamera2")
CONTROLS = ("exposure", "gain", "white_balance")


@dataclass(frozen=True)
class LockSettings:
    """How exposure, gain and white balance are held steady for a scan.

    A manual value fixes its control from the start. With ``lock`` on, the
    controls left automatic are read after ``settle_frames`` frames and then
    fixed at what the camera chose, so all faces see the same settings.
    """
    lock: bool = True
    settle_frames: int = 30
    exposure: float | None = None  # v4l2: driver units (uvcvideo: 100 µs); picamera2: µs
    gain: float | None = None  # v4l2: driver units; picamera2: analogue gain factor
    white_balance: float | tuple[float, float] | None = None  # v4l2: kelvin; picamera2: (red, blue) gains

    def manual(self) -> dict[str, Any]:
        """The controls given a fixed value in the config."""
        values = {"exposure": self.exposure, "gain": self.gain, "white_balance": self.white_balance}
        return {name: value for name, value in values.items() if value is not None}


@dataclass(frozen=True)
class CaptureSettings:
    """``[camera.NAME]`` for a real camera: which device and how to set it up."""
    name: str
    device: int | str  # v4l2: index or path; picamera2: camera number
    width: int | None
    height: int | None
    exposure: float | None  # the same as lock.exposure (kept for older callers)
    warmup_frames: int
    kind: str = "v4l2"
    lock: LockSettings = field(default_factory=LockSettings)


def capture_settings(section: Section, name: str) -> CaptureSettings:
    """Read and check ``[camera.NAME]``."""
    kind = section.get_str("kind", "v4l2", choices=KINDS)
    width, height = _size(section)
    lock = _lock_settings(section, kind)
    return CaptureSettings(
        name=name, kind=kind, device=_device(section, kind), width=width, height=height,
        exposure=lock.exposure, lock=lock,
        warmup_frames=section.get_int("warmup_frames", 3, minval=0, maxval=100),
    )


def _optional(section: Section, key: str, getter, **limits):
    """A key with no default: None when absent (still listed as known in the unknown-key hint)."""
    if key not in section.data:
        section.config.used.add(f"{section.name}.{key}")
        return None
    return getter(key, **limits)


def _device(section: Section, kind: str) -> int | str:
    index = _optional(section, "index", section.get_int, minval=0)
    device = section.get_str("device", None)
    if kind == "picamera2":
        if device is not None:
            raise section.error("device", "a picamera2 camera is chosen by 'index' (0, 1, ...), not by a device path")
        return 0 if index is None else index
    if (index is None) == (device is None):
        raise section.error("device", "give exactly one of 'index' (0, 1, ...) or 'device' (/dev/video0, ...)")
    if device is not None and not device.strip():
        raise section.error("device", "must not be empty")
    return index if index is not None else device


def _size(section: Section) -> tuple[int | None, int | None]:
    width = _optional(section, "width", section.get_int, minval=16, maxval=16384)
    height = _optional(section, "height", section.get_int, minval=16, maxval=16384)
    if (width is None) != (height is None):
        missing = "height" if height is None else "width"
        raise section.error(missing, "give 'width' and 'height' together (or neither, for the camera's default)")
    return width, height


def _lock_settings(section: Section, kind: str) -> LockSettings:
    pi = kind == "picamera2"
    exposure = _optional(section, "exposure", section.get_float, above=0)
    if exposure is not None and pi:
        exposure = float(round(exposure))  # libcamera takes whole microseconds
    gain = _optional(section, "gain", section.get_float, minval=1.0 if pi else 0.0)
    return LockSettings(
        lock=section.get_bool("lock", True),
        settle_frames=section.get_int("settle_frames", 30, minval=0, maxval=1000),
        exposure=exposure, gain=gain, white_balance=_white_balance(section, pi),
    )


def _white_balance(section: Section, pi: bool) -> float | tuple[float, float] | None:
    if pi:
        if "white_balance" in section.data:
            raise section.error("white_balance", "a picamera2 camera takes colour_gains = [red, blue] instead")
        return _colour_gains(section)
    if "colour_gains" in section.data:
        raise section.error("colour_gains", "only for kind = \"picamera2\"; a V4L2 camera takes "
                                            "white_balance = <kelvin> instead")
    return _optional(section, "white_balance", section.get_float, minval=1000, maxval=15000)


def _colour_gains(section: Section) -> tuple[float, float] | None:
    gains = _optional(section, "colour_gains", section.get_list)
    if gains is None:
        return None
    if len(gains) != 2 or any(isinstance(g, bool) or not isinstance(g, (int, float)) or not 0 < g <= 32
                              for g in gains):
        raise section.error("colour_gains", f"must be two numbers [red, blue], each above 0 and at most 32; "
                                            f"got {gains!r}")
    return float(gains[0]), float(gains[1])
