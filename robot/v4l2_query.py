"""What a V4L2 device node is and can capture, asked with the kernel's ioctls.

Only three read-only ioctls are used: VIDIOC_QUERYCAP (driver, card, bus and
capabilities), VIDIOC_ENUM_FMT (pixel formats) and VIDIOC_ENUM_FRAMESIZES
(sizes per format). Structures are packed with ``struct`` in the layouts of
``linux/videodev2.h``. The ioctl function is a parameter, so tests answer
for the kernel.
"""

from __future__ import annotations

import errno
import fcntl
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

Ioctl = Callable[[int, int, bytearray], object]

_CAPABILITY = struct.Struct("=16s32s32sIII3I")  # struct v4l2_capability, 104 bytes
_FMTDESC = struct.Struct("=III32sII3I")  # struct v4l2_fmtdesc, 64 bytes
_FRMSIZE = struct.Struct("=III6I2I")  # struct v4l2_frmsizeenum, 44 bytes

CAP_VIDEO_CAPTURE = 0x00000001
CAP_VIDEO_CAPTURE_MPLANE = 0x00001000
CAP_VIDEO_M2M_MPLANE = 0x00004000
CAP_VIDEO_M2M = 0x00008000
CAP_META_CAPTURE = 0x00800000
CAP_DEVICE_CAPS = 0x80000000
BUF_TYPE_VIDEO_CAPTURE = 1
BUF_TYPE_VIDEO_CAPTURE_MPLANE = 9
FMT_FLAG_COMPRESSED = 0x0001
FRMSIZE_DISCRETE, FRMSIZE_CONTINUOUS, FRMSIZE_STEPWISE = 1, 2, 3


def _ioc(direction: int, number: int, size: int) -> int:
    return (direction << 30) | (size << 16) | (ord("V") << 8) | number


VIDIOC_QUERYCAP = _ioc(2, 0, _CAPABILITY.size)  # _IOR('V', 0, ...)
VIDIOC_ENUM_FMT = _ioc(3, 2, _FMTDESC.size)  # _IOWR('V', 2, ...)
VIDIOC_ENUM_FRAMESIZES = _ioc(3, 74, _FRMSIZE.size)  # _IOWR('V', 74, ...)


@dataclass
class PixelFormat:
    code: int  # the 32-bit pixel format code
    fourcc: str
    description: str
    compressed: bool
    sizes: list[tuple[int, int]] = field(default_factory=list)  # discrete sizes, or the min and max of a range
    size_range: str | None = None  # "160x120 to 1920x1080, step 8x8" for stepwise/continuous sizes


@dataclass
class DeviceInfo:
    driver: str
    card: str
    bus_info: str
    capabilities: int  # the node's own (device_caps where the driver reports them)
    formats: list[PixelFormat] = field(default_factory=list)

    @property
    def captures_video(self) -> bool:
        """A node that delivers images (not a metadata node, not a memory-to-memory codec)."""
        video = self.capabilities & (CAP_VIDEO_CAPTURE | CAP_VIDEO_CAPTURE_MPLANE)
        return bool(video) and not self.capabilities & (CAP_VIDEO_M2M | CAP_VIDEO_M2M_MPLANE)


def query_device(path: str, ioctl: Ioctl = fcntl.ioctl) -> DeviceInfo:
    """Open ``path`` (non-blocking, no streaming) and describe it."""
    fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
    try:
        return describe(fd, ioctl)
    finally:
        os.close(fd)


def describe(fd: int, ioctl: Ioctl = fcntl.ioctl) -> DeviceInfo:
    buffer = bytearray(_CAPABILITY.size)
    ioctl(fd, VIDIOC_QUERYCAP, buffer)
    driver, card, bus, _version, caps, device_caps, *_ = _CAPABILITY.unpack(buffer)
    own = device_caps if caps & CAP_DEVICE_CAPS else caps
    info = DeviceInfo(_text(driver), _text(card), _text(bus), own)
    if info.captures_video:
        kind = BUF_TYPE_VIDEO_CAPTURE if own & CAP_VIDEO_CAPTURE else BUF_TYPE_VIDEO_CAPTURE_MPLANE
        info.formats = [_with_sizes(fd, ioctl, pixel) for pixel in _formats(fd, ioctl, kind)]
    return info


def _formats(fd: int, ioctl: Ioctl, kind: int) -> list[PixelFormat]:
    found = []
    for index in range(256):
        buffer = bytearray(_FMTDESC.pack(index, kind, 0, b"", 0, 0, 0, 0, 0))
        if not _ask(ioctl, fd, VIDIOC_ENUM_FMT, buffer):
            break
        _index, _kind, flags, description, code, *_ = _FMTDESC.unpack(buffer)
        found.append(PixelFormat(code, fourcc(code), _text(description), bool(flags & FMT_FLAG_COMPRESSED)))
    return found


def _with_sizes(fd: int, ioctl: Ioctl, pixel: PixelFormat) -> PixelFormat:
    for index in range(256):
        buffer = bytearray(_FRMSIZE.pack(index, pixel.code, 0, *[0] * 8))
        if not _ask(ioctl, fd, VIDIOC_ENUM_FRAMESIZES, buffer):
            break
        _index, _code, kind, *numbers = _FRMSIZE.unpack(buffer)
        if kind == FRMSIZE_DISCRETE:
            pixel.sizes.append((numbers[0], numbers[1]))
            continue
        low_w, high_w, step_w, low_h, high_h, step_h = numbers[:6]
        pixel.sizes += [(low_w, low_h), (high_w, high_h)]
        pixel.size_range = f"{low_w}x{low_h} to {high_w}x{high_h}" + (
            f", step {step_w}x{step_h}" if kind == FRMSIZE_STEPWISE else ""
        )
        break  # a range is the only answer
    return pixel


def _ask(ioctl: Ioctl, fd: int, request: int, buffer: bytearray) -> bool:
    """One enumeration step; False when the list has ended (EINVAL)."""
    try:
        ioctl(fd, request, buffer)
    except OSError as error:
        if error.errno == errno.EINVAL:
            return False
        raise
    return True


def fourcc(code: int) -> str:
    return code.to_bytes(4, "little").decode("latin-1").rstrip("\0 ") or "?"


def _text(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")
