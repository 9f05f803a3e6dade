"""The cameras robotd could use, for ``robotd check``: what is attached and what to write in ``[camera.NAME]``.

V4L2 nodes are found under /dev, named from sysfs and described with the
V4L2 ioctls (``v4l2_query``); metadata nodes and codecs are left out, and so
are the raw nodes of the Raspberry Pi camera pipeline (those cameras are
listed through picamera2 when it imports). Every part that touches the
system is a parameter, so tests can stand in for it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from .errors import RobotError
from .v4l2_query import DeviceInfo, query_device

# Drivers of the Pi's libcamera pipeline: raw Bayer or ISP nodes OpenCV cannot use.
PI_PIPELINE_DRIVERS = {"unicam", "rp1-cfe", "bcm2835-isp", "pispbe"}
PREFERRED_SIZE = (640, 480)  # plenty for sticker colours, and quick to read
SHOWN_SIZES = 10


def list_cameras(
    dev_dir: str | os.PathLike = "/dev",
    sys_dir: str | os.PathLike = "/sys/class/video4linux",
    query: Callable[[str], DeviceInfo] = query_device,
    load_picamera2: Callable[[], ModuleType] | None = None,
) -> list[dict]:
    """Every camera found: V4L2 nodes first, then picamera2 cameras. Unusable nodes have ``usable: False``."""
    stable = _stable_paths(Path(dev_dir))
    entries = [_v4l2_entry(node, Path(sys_dir), stable, query) for node in _nodes(Path(dev_dir))]
    found = [entry for entry in entries if entry is not None]
    return found + _picamera2_entries(load_picamera2 or _import_picamera2, any(e.get("pipeline") for e in found))


def camera_lines(cameras: list[dict] | None = None) -> list[str]:
    """``list_cameras()`` as lines for a terminal."""
    cameras = list_cameras() if cameras is None else cameras
    usable = [entry for entry in cameras if entry["usable"]]
    lines = []
    for entry in usable:
        lines += _v4l2_lines(entry) if entry["kind"] == "v4l2" else _picamera2_lines(entry)
    pipeline = [entry["device"] for entry in cameras if entry.get("pipeline")]
    if pipeline:
        lines.append(
            f"{len(pipeline)} Raspberry Pi camera pipeline node(s) ({', '.join(pipeline)}) not listed: "
            'such cameras are used with kind = "picamera2"'
        )
    for entry in cameras:
        if not entry["usable"] and not entry.get("pipeline"):
            lines.append(f"{entry.get('device', 'picamera2')}: {entry['why']}")
    if not usable:
        lines.insert(0, "no usable camera found")
    return lines


def _nodes(dev_dir: Path) -> list[Path]:
    nodes = [path for path in dev_dir.glob("video*") if re.fullmatch(r"video\d+", path.name)]
    return sorted(nodes, key=lambda path: int(path.name[5:]))


def _stable_paths(dev_dir: Path) -> dict[str, str]:
    """/dev/videoN → its /dev/v4l/by-id link (the number can change between boots; the link does not)."""
    links = {}
    by_id = dev_dir / "v4l" / "by-id"
    for link in sorted(by_id.glob("*")) if by_id.is_dir() else []:
        target = os.path.realpath(link)
        if target not in links or link.name.endswith("index0"):
            links[target] = str(link)
    return links


def _v4l2_entry(node: Path, sys_dir: Path, stable: dict[str, str], query) -> dict | None:
    entry = {"kind": "v4l2", "device": str(node)}
    try:
        info = query(str(node))
    except PermissionError:
        return {**entry, "usable": False, "why": "permission denied (is the user in the 'video' group?)"}
    except OSError as error:
        return {**entry, "usable": False, "why": f"cannot be queried: {error.strerror or error}"}
    if not info.captures_video:
        return None  # a metadata node, a codec, an output
    if info.driver in PI_PIPELINE_DRIVERS:
        return {**entry, "usable": False, "pipeline": True, "why": f"{info.driver} pipeline node"}
    path = stable.get(os.path.realpath(node), str(node))
    size = suggest_size([size for pixel in info.formats for size in pixel.sizes])
    return {
        **entry,
        "usable": True,
        "name": _sysfs_name(sys_dir, node.name) or info.card,
        "driver": info.driver,
        "bus": info.bus_info,
        "stable_path": path if path != str(node) else None,
        "formats": [
            {
                "fourcc": p.fourcc,
                "description": p.description,
                "compressed": p.compressed,
                "sizes": [f"{w}x{h}" for w, h in p.sizes],
                "range": p.size_range,
            }
            for p in info.formats
        ],
        "config": ["[camera.NAME]", f'device = "{path}"', *_size_lines(size)],
    }


def _sysfs_name(sys_dir: Path, node: str) -> str | None:
    try:
        return (sys_dir / node / "name").read_text(encoding="utf-8", errors="replace").strip() or None
    except OSError:
        return None


def suggest_size(sizes: list[tuple[int, int]]) -> tuple[int, int] | None:
    """640x480 if offered, else the smallest at least as wide, else the largest."""
    if not sizes or PREFERRED_SIZE in sizes:
        return PREFERRED_SIZE if sizes else None
    wide = [size for size in sizes if size[0] >= PREFERRED_SIZE[0]]
    return min(wide, key=lambda s: s[0] * s[1]) if wide else max(sizes, key=lambda s: s[0] * s[1])


def _size_lines(size: tuple[int, int] | None) -> list[str]:
    return [f"width = {size[0]}", f"height = {size[1]}"] if size else []


def _import_picamera2() -> ModuleType:
    from .camera_pi import import_picamera2

    return import_picamera2()


def _picamera2_entries(load: Callable[[], ModuleType], pipeline_seen: bool) -> list[dict]:
    try:
        module = load()
    except RobotError as error:
        # Without a Pi camera in sight a missing picamera2 is no news.
        return [{"kind": "picamera2", "usable": False, "why": str(error)}] if pipeline_seen else []
    try:
        infos = module.Picamera2.global_camera_info()
    except Exception as error:
        return [{"kind": "picamera2", "usable": False, "why": f"libcamera cannot list cameras: {error}"}]
    return [_picamera2_entry(module, info.get("Num", position), info) for position, info in enumerate(infos)]


def _picamera2_entry(module: ModuleType, number: int, info: dict) -> dict:
    entry = {
        "kind": "picamera2",
        "usable": True,
        "index": number,
        "name": info.get("Model", "?"),
        "id": info.get("Id", ""),
        "modes": [],
        "modes_error": None,
        "config": ["[camera.NAME]", 'kind = "picamera2"', f"index = {number}", *_size_lines(PREFERRED_SIZE)],
    }
    try:
        camera = module.Picamera2(number)
    except Exception as error:  # busy (robotd itself may be running), or gone
        entry["modes_error"] = f"cannot open it to list its modes: {error}"
        return entry
    try:
        entry["modes"] = [_mode_text(mode) for mode in camera.sensor_modes]
    except Exception as error:
        entry["modes_error"] = f"cannot list its modes: {error}"
    finally:
        camera.close()
    return entry


def _mode_text(mode: dict) -> str:
    width, height = mode.get("size", (0, 0))
    fps = mode.get("fps")
    depth = mode.get("bit_depth")
    return f"{width}x{height}" + (f" {depth}-bit" if depth else "") + (f" {fps:.1f} fps" if fps else "")


def _v4l2_lines(entry: dict) -> list[str]:
    lines = [f"{entry['device']}: {entry['name']} ({entry['driver']}, {entry['bus']})"]
    for pixel in entry["formats"]:
        sizes = pixel["range"] or _shorten(pixel["sizes"])
        lines.append(f"    {pixel['fourcc']} ({pixel['description']}): {sizes or 'no sizes listed'}")
    return lines + _config_lines(entry)


def _picamera2_lines(entry: dict) -> list[str]:
    lines = [f"picamera2 camera {entry['index']}: {entry['name']} ({entry['id']})"]
    if entry["modes"]:
        lines.append(f"    sensor modes: {', '.join(entry['modes'])}")
    if entry["modes_error"]:
        lines.append(f"    {entry['modes_error']}")
    return lines + _config_lines(entry)


def _shorten(sizes: list[str]) -> str:
    more = len(sizes) - SHOWN_SIZES
    return ", ".join(sizes[:SHOWN_SIZES]) + (f" and {more} more" if more > 0 else "")


def _config_lines(entry: dict) -> list[str]:
    first, *rest = entry["config"]
    return [f"    to use it: {first}", *(f"               {line}" for line in rest)]
