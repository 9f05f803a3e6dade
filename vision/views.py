"""View config: where each face of the cube is in which camera image.

A fixed-camera rig is described once: for each face, the image (camera or
frame name) it is seen in, the four image points of the face's outer
corners, and which corner of the cube each point is. Corners are named by
the three faces that meet there, in any letter order (``"UFL"``, ``"FLU"``),
so a rig builder reads them off the real cube. A six-motor rig with two
corner cameras has two images holding three faces each; a flip rig has six
frames of one face each, each face turned however the rig presents it.

File format (TOML or JSON, same keys)::

    size = 3                      # 2 or 3
    inner = 0.5                   # optional: sampled fraction of each sticker's width

    [[view]]
    image = "ufr"                 # camera or frame name
    face = "U"
    corners = [[312.0, 80.5], [500.2, 150.0], [330.0, 240.0], [140.0, 160.0]]
    at = ["ULB", "UBR", "URF", "UFL"]

Unknown keys, a face missing or twice, a corner that is not on the face and a
degenerate quadrilateral are errors naming the view.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from solver.puzzles.cube.geometry import CORNER_SLOTS, FACES, stickers

from .errors import ScanError

_TOP_KEYS = {"size", "inner", "view"}
_VIEW_KEYS = {"image", "face", "corners", "at"}
MIN_FACE_AREA_PX = 64.0


@cache
def face_corner_names(face: str) -> tuple[str, str, str, str]:
    """Names of a face's corners (top-left, top-right, bottom-right, bottom-left in the net)."""
    n = 2
    base = FACES.index(face) * 4
    names = []
    for k in (0, 1, 3, 2):  # 2x2 reading order: TL TR BL BR
        position, _ = stickers(n)[base + k]
        letters = {
            f
            for f, axis, sign in (("R", 0, 1), ("L", 0, -1), ("U", 1, 1), ("D", 1, -1), ("F", 2, 1), ("B", 2, -1))
            if position[axis] == sign
        }
        names.append(next(slot for slot in CORNER_SLOTS if set(slot) == letters))
    top_left, top_right, bottom_left, bottom_right = names
    return top_left, top_right, bottom_left, bottom_right


@dataclass(frozen=True)
class FaceView:
    """One face in one image: its outer corners, top-left, top-right, bottom-right, bottom-left."""

    image: str
    face: str
    corners: np.ndarray  # (4, 2) float image points in net order TL TR BR BL


@dataclass(frozen=True)
class ViewConfig:
    """Where the six faces are: one FaceView per face, in face order U R F D L B."""

    size: int
    views: tuple[FaceView, ...]
    inner: float = 0.5

    @property
    def images(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(v.image for v in self.views))

    def to_json(self) -> dict:
        return {
            "size": self.size,
            "inner": self.inner,
            "view": [
                {
                    "image": v.image,
                    "face": v.face,
                    "corners": np.round(v.corners, 2).tolist(),
                    "at": list(face_corner_names(v.face)),
                }
                for v in self.views
            ],
        }

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n")


def _fail(where: str, message: str) -> ScanError:
    return ScanError(f"view config {where}: {message}")


def _parse_view(item, k: int, where: str) -> FaceView:
    at = f"{where} view #{k + 1}"
    if isinstance(item, dict) and item.get("face") in tuple(FACES):
        at += f" (face {item['face']})"
    if not isinstance(item, dict):
        raise _fail(at, "must be a table with keys image, face, corners, at")
    unknown = sorted(set(item) - _VIEW_KEYS)
    if unknown:
        raise _fail(at, f"unknown key {unknown[0]!r} (allowed: {', '.join(sorted(_VIEW_KEYS))})")
    missing = sorted(_VIEW_KEYS - set(item))
    if missing:
        raise _fail(at, f"missing key {missing[0]!r}")
    image, face = item["image"], item["face"]
    if not isinstance(image, str) or not image:
        raise _fail(at, "'image' must be a non-empty name")
    if face not in FACES:
        raise _fail(at, f"'face' must be one of U R F D L B, got {face!r}")
    try:
        points = np.array(item["corners"], dtype=np.float64)
    except (TypeError, ValueError):
        raise _fail(at, "'corners' must be four [x, y] points") from None
    if points.shape != (4, 2) or not np.all(np.isfinite(points)):
        raise _fail(at, "'corners' must be four [x, y] points")
    labels = item["at"]
    if not isinstance(labels, list) or len(labels) != 4 or not all(isinstance(s, str) for s in labels):
        raise _fail(at, "'at' must name the cube corner of each of the four points, e.g. \"UFL\"")
    names = face_corner_names(face)
    order = []
    for label in labels:
        match = [i for i, name in enumerate(names) if set(name) == set(label.upper()) and len(label) == 3]
        if not match:
            raise _fail(at, f"{label!r} is not a corner of face {face} (its corners: {', '.join(names)})")
        order.append(match[0])
    if sorted(order) != [0, 1, 2, 3]:
        raise _fail(at, "'at' must name each corner of the face once")
    corners = np.empty((4, 2))
    corners[order] = points
    x, y = corners[:, 0], corners[:, 1]
    area = 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))
    if area < MIN_FACE_AREA_PX:
        raise _fail(at, f"the corners enclose {area:.0f} square pixels: too small or in the wrong order")
    return FaceView(image, face, corners)


def view_config_from_dict(data, where: str = "") -> ViewConfig:
    """Validate a view config's parsed TOML/JSON (see the module docstring)."""
    where = where or "(inline)"
    if not isinstance(data, dict):
        raise _fail(where, "must be a table with keys size, view and optionally inner")
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise _fail(where, f"unknown key {unknown[0]!r} (allowed: {', '.join(sorted(_TOP_KEYS))})")
    size = data.get("size")
    if size not in (2, 3) or isinstance(size, bool):
        raise _fail(where, f"'size' must be 2 or 3, got {size!r}")
    inner = data.get("inner", 0.5)
    if not isinstance(inner, (int, float)) or not 0.1 <= inner <= 0.9:
        raise _fail(where, f"'inner' must be a number from 0.1 to 0.9, got {inner!r}")
    items = data.get("view")
    if not isinstance(items, list):
        raise _fail(where, "needs a list of views ([[view]] tables), one per face")
    views = [_parse_view(item, k, where) for k, item in enumerate(items)]
    by_face = {}
    for view in views:
        if view.face in by_face:
            raise _fail(where, f"face {view.face} appears in more than one view")
        by_face[view.face] = view
    missing = [f for f in FACES if f not in by_face]
    if missing:
        raise _fail(where, f"no view for face {', '.join(missing)}: all six faces are needed")
    return ViewConfig(size, tuple(by_face[f] for f in FACES), float(inner))


class ViewsMissing(ScanError):
    """The view config's file does not exist yet: the rig has not been calibrated."""


def load_view_config(path: str | Path) -> ViewConfig:
    """Read a view config from a .toml or .json file; ``ViewsMissing`` when there is no such file."""
    path = Path(path)
    if not path.exists():
        raise ViewsMissing(f"view config {path} does not exist yet: the cameras have not been calibrated")
    try:
        text = path.read_text()
        data = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except (OSError, ValueError) as error:
        raise ScanError(f"cannot read view config {path}: {error}") from None
    return view_config_from_dict(data, str(path))
