"""Camera sources: a real camera (V4L2 through OpenCV, or a Pi camera through picamera2),
or frames rendered by the simulator.

Every source hands out BGR frames (``numpy`` uint8, height x width x 3) under
a name that the view config refers to. Real cameras hold exposure, gain and
white balance steady once opened (``camera_lock``), so every face of a scan
is seen under the same settings. ``frame_at(k)`` takes one frame at k times
the locked exposure and then restores it: the scanner's exposure bracketing
(``vision.exposure``) when stickers clip or a view is far too dark.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, NoReturn, Protocol

import numpy as np

from .camera_config import CaptureSettings, LockSettings, capture_settings
from .camera_lock import LockState, Source, apply_lock, drop_frames
from .errors import RobotError

__all__ = ["Camera", "CaptureCamera", "CaptureSettings", "LockSettings", "RenderedCamera", "capture_settings", "to_bgr"]


class Camera(Protocol):
    name: str

    def frame(self) -> np.ndarray: ...

    def frame_at(self, exposure: float) -> np.ndarray | None:
        """One frame at ``exposure`` times the locked exposure; None where the exposure cannot be set."""

    def status(self) -> dict: ...

    def close(self) -> None: ...


class CaptureCamera:
    """A real camera of either kind, opened lazily and reopened after a failure.

    After a reopen the values of the earlier lock are set again rather than
    measured anew, so a scan interrupted by a reconnect stays consistent;
    ``relock()`` measures again on the next frame.
    """

    def __init__(self, settings: CaptureSettings):
        self.name = settings.name
        self.settings = settings
        self._source: Source | None = None
        self._mutex = threading.Lock()
        self._held: dict[str, Any] | None = None
        self.lock_state: LockState | None = None
        self.last_error: str | None = None
        self._size: tuple[int, int] | None = None

    def frame(self) -> np.ndarray:
        with self._mutex:
            if self._source is None:
                self._source = self._guard(self._open)
            image = self._guard(self._source.read)
            if image is None:
                self._fail(f"camera '{self.name}': no frame from {self._where()}")
            frame = self._guard(lambda: to_bgr(image))
            self._size = (frame.shape[1], frame.shape[0])
            self.last_error = None
            return frame

    def frame_at(self, exposure: float) -> np.ndarray | None:
        """One frame at ``exposure`` times the locked exposure (V4L2 ``exposure_time_absolute``,
        picamera2 ``ExposureTime``), then the locked value again; None where exposure is not locked
        (the automatic would undo the change) or the camera refuses the value."""
        with self._mutex:
            locked = self.lock_state.locked.get("exposure") if self.lock_state else None
            source = self._source
            if source is None or locked is None:
                return None
            image = self._guard(lambda: _at_exposure(source, float(locked), exposure))
            return None if image is None else self._guard(lambda: to_bgr(image))

    def relock(self) -> None:
        """Forget the held values: the next frame reopens the camera and lets its automatics settle again."""
        with self._mutex:
            self._held = None
            self._close_source()

    def status(self) -> dict:
        lock = self.lock_state.as_dict() if self.lock_state else {"enabled": self.settings.lock.lock}
        return {
            "name": self.name,
            "kind": self.settings.kind,
            "device": self.settings.device,
            "open": self._source is not None,
            "error": self.last_error,
            "size": list(self._size) if self._size else None,
            "lock": lock,
        }

    def close(self) -> None:
        with self._mutex:
            self._close_source()

    def _open(self) -> Source:
        source = _open_source(self.settings)
        try:
            for _ in range(self.settings.warmup_frames):
                source.read()
            self.lock_state = apply_lock(source, self.settings.lock, self._held, self.name)
        except BaseException:
            source.close()
            raise
        if self.lock_state.how == "settled":
            self._held = dict(self.lock_state.locked)
        return source

    def _guard(self, step: Callable[[], Any]) -> Any:
        """Run one step; any failure closes the source (the next frame reopens it) and becomes a RobotError."""
        try:
            return step()
        except RobotError as error:
            self._fail(str(error))
        except Exception as error:  # driver and library errors of every kind
            self._fail(f"camera '{self.name}': {self._where()} failed: {error}")

    def _fail(self, message: str) -> NoReturn:
        self._close_source()
        self.last_error = message
        raise RobotError(message)

    def _close_source(self) -> None:
        if self._source is not None:
            source, self._source = self._source, None
            try:
                source.close()
            except Exception:
                pass  # it is gone either way

    def _where(self) -> str:
        if self.settings.kind == "picamera2":
            return f"picamera2 camera {self.settings.device}"
        return repr(self.settings.device)


def _at_exposure(source: Source, locked: float, exposure: float) -> np.ndarray | None:
    """One frame with the exposure at ``locked * exposure``, the locked value set again after it."""
    fixed, _ = source.fix({"exposure": locked * exposure})
    try:
        if "exposure" not in fixed:
            return None
        drop_frames(source, source.flush_frames)
        return source.read()
    finally:
        source.fix({"exposure": locked})
        drop_frames(source, source.flush_frames)


def _open_source(settings: CaptureSettings) -> Source:
    if settings.kind == "picamera2":
        from .camera_pi import PicameraSource

        return PicameraSource(settings)
    from .camera_v4l2 import V4l2Source

    return V4l2Source(settings)


def to_bgr(image: np.ndarray) -> np.ndarray:
    """Any frame a source gives (grey, BGR, BGRX; 8 or 16 bit) as contiguous BGR uint8."""
    image = np.asarray(image)
    if image.dtype == np.uint16:
        image = (image >> 8).astype(np.uint8)
    elif image.dtype != np.uint8:
        raise RobotError(f"camera frame of type {image.dtype}: expected 8-bit pixels")
    if image.ndim == 2:
        image = np.repeat(image[:, :, None], 3, axis=2)
    elif image.ndim == 3 and image.shape[2] == 4:
        image = image[:, :, :3]  # BGRA / picamera2's XRGB8888 ([B, G, R, 255])
    elif image.ndim != 3 or image.shape[2] != 3:
        raise RobotError(f"camera frame of shape {image.shape}: expected height x width x 3")
    return np.ascontiguousarray(image)


class RenderedCamera:
    """A simulated camera: ``render()`` draws the virtual cube as this camera would see it.

    ``render_at(k)``, where given, draws it at k times the exposure (what
    passes 255 clips, as on a sensor): the simulated camera's exposure control.
    """

    def __init__(
        self, name: str, render: Callable[[], np.ndarray], render_at: Callable[[float], np.ndarray] | None = None
    ):
        self.name = name
        self._render, self._render_at = render, render_at

    def frame(self) -> np.ndarray:
        return self._render()

    def frame_at(self, exposure: float) -> np.ndarray | None:
        return None if self._render_at is None else self._render_at(exposure)

    def status(self) -> dict:
        return {"name": self.name, "kind": "simulated", "open": True, "error": None}

    def close(self) -> None:
        pass
