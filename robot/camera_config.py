"""``[camera.NAME]``: which camera, at what size, and how its exposure is held.

Two kinds of source read the same table: ``kind = "v4l2"`` (the default; a
USB/UVC camera through OpenCV) and ``kind = "picamera2"`` (a Raspberry Pi
CSI camera through libcamera). Values the other kind cannot use are errors
naming the key, never silently ignored (``robot.schema.camera``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .config import Section

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
    """``[camera.NAME]`` as ``robot.schema.camera.CameraTable`` checked it."""
    table = section.model
    pi = table.kind == "picamera2"
    exposure = table.exposure
    if exposure is not None and pi:
        exposure = float(round(exposure))  # libcamera takes whole microseconds
    gains = table.colour_gains
    lock = LockSettings(
        lock=table.lock,
        settle_frames=table.settle_frames,
        exposure=exposure,
        gain=table.gain,
        white_balance=(float(gains[0]), float(gains[1])) if gains else table.white_balance,
    )
    device = (
        (0 if table.index is None else table.index)
        if pi
        else (table.index if table.index is not None else table.device)
    )
    return CaptureSettings(
        name=name,
        kind=table.kind,
        device=device,
        width=table.width,
        height=table.height,
        exposure=lock.exposure,
        lock=lock,
        warmup_frames=table.warmup_frames,
    )
