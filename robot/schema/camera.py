"""``[camera.NAME]``: a V4L2 (USB/UVC) or picamera2 (Pi CSI) camera; values the other kind cannot use are
errors naming the key."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from .base import Table, must, number, raise_problems

KINDS = ("v4l2", "picamera2")

ColourGains = Annotated[
    list[float],
    must(
        lambda v: (
            isinstance(v, list)
            and len(v) == 2
            and all(number(0, 32)(g) and g > 0 and not isinstance(g, bool) for g in v)
        ),
        "two numbers [red, blue], each above 0 and at most 32",
    ),
]


class CameraTable(Table):
    kind: Literal["v4l2", "picamera2"] = "v4l2"
    index: int | None = Field(default=None, ge=0)
    device: str | None = None
    width: int | None = Field(default=None, ge=16, le=16384)
    height: int | None = Field(default=None, ge=16, le=16384)
    exposure: float | None = Field(
        default=None, gt=0, description="v4l2: driver units (uvcvideo: 100 µs); picamera2: µs"
    )
    gain: float | None = Field(default=None, ge=0, description="picamera2: an analogue gain factor, at least 1")
    white_balance: float | None = Field(default=None, ge=1000, le=15000, description="v4l2: kelvin")
    colour_gains: ColourGains | None = None
    lock: bool = True
    settle_frames: int = Field(default=30, ge=0, le=1000)
    warmup_frames: int = Field(default=3, ge=0, le=100)

    @model_validator(mode="after")
    def _fits_its_kind(self) -> CameraTable:
        problems = self._device_problems()
        if (self.width is None) != (self.height is None):
            problems.append(
                (
                    "height" if self.height is None else "width",
                    "give 'width' and 'height' together (or neither, for the camera's default)",
                )
            )
        if self.kind == "picamera2":
            if self.gain is not None and self.gain < 1.0:
                problems.append(("gain", f"must be at least 1.0; got {self.gain!r}"))
            if self.white_balance is not None:
                problems.append(("white_balance", "a picamera2 camera takes colour_gains = [red, blue] instead"))
        elif self.colour_gains is not None:
            problems.append(
                ("colour_gains", 'only for kind = "picamera2"; a V4L2 camera takes white_balance = <kelvin> instead')
            )
        raise_problems(problems)
        return self

    def _device_problems(self) -> list[tuple[str, str]]:
        if self.kind == "picamera2":
            return (
                []
                if self.device is None
                else [("device", "a picamera2 camera is chosen by 'index' (0, 1, ...), not by a device path")]
            )
        if (self.index is None) == (self.device is None):
            return [("device", "give exactly one of 'index' (0, 1, ...) or 'device' (/dev/video0, ...)")]
        if self.device is not None and not self.device.strip():
            return [("device", "must not be empty")]
        return []
