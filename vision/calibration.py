"""A stored colour reference captured from a solved cube: a prior, never required.

Scanning a solved cube in the rig records what each of the six colours
looks like under that rig's light and camera (the *palette*), and, per
sticker position, how much brighter or darker that spot of the image is
than the rest of its face (*position gains*, which cancel vignetting and
uneven light). The scatter of each colour's stickers (*spread*, CIELAB) is kept too. The
classifier uses all three as a prior: position gains are divided out before
anything else, the palette pulls the adaptive colour references towards the
calibrated colours (their lightness relative to each other included, which
is what tells a dim red from orange), and no colour is judged tighter than
its calibrated spread. A scan without calibration works the same way, just
without that help.

File format (JSON)::

    {"size": 3,
     "palette": {"U": [r, g, b], "R": [...], ...},     # sRGB 0..255 per face colour
     "spread": {"U": [L, a, b], ...},                  # optional: CIELAB scatter per face colour
     "position_gains": [g, ...] | null}                # one per facelet, linear light

Unknown keys are an error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from solver.puzzles.cube.geometry import FACES, OPPOSITE

from .errors import ScanError
from .lab import linear_to_lab, linear_to_srgb, luminance, srgb_to_linear

_KEYS = {"size", "palette", "spread", "position_gains"}
_GAIN_RANGE = (0.2, 5.0)
MAX_FACE_SPREAD = 30.0  # CIELAB distance of a sticker from its face's mean on a solved cube
SPREAD_RANGE = (0.5, 30.0)  # CIELAB units: one 8-bit step .. MAX_FACE_SPREAD
MAD_TO_SIGMA = 1.4826


@dataclass(frozen=True)
class Calibration:
    """Colour reference of one rig. ``palette[f]``: sRGB of the colour on face f of the solved cube."""

    size: int
    palette: np.ndarray  # (6, 3) sRGB, rows in face order U R F D L B
    position_gains: np.ndarray | None = None  # (6 n^2,) brightness gains, mean 1 over each face
    spread: np.ndarray | None = None  # (6, 3) CIELAB scatter of each colour's stickers, rows as palette

    @property
    def palette_linear(self) -> np.ndarray:
        return srgb_to_linear(self.palette)

    def opposite_colour(self, index: int) -> int:
        """Palette row of the colour opposite palette row ``index`` on the calibrated cube."""
        return FACES.index(OPPOSITE[FACES[index]])

    def flatten(self, linear: np.ndarray) -> np.ndarray:
        """Divide out the position gains (vignetting, uneven light) from linear sticker colours."""
        if self.position_gains is None:
            return linear
        return linear / self.position_gains[:, None]

    def to_json(self) -> dict:
        gains = None if self.position_gains is None else np.round(self.position_gains, 5).tolist()
        out = {
            "size": self.size,
            "palette": {f: np.round(self.palette[k], 2).tolist() for k, f in enumerate(FACES)},
            "position_gains": gains,
        }
        if self.spread is not None:
            out["spread"] = {f: np.round(self.spread[k], 3).tolist() for k, f in enumerate(FACES)}
        return out

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n")


def calibrate(rgb: np.ndarray | list, per_position: bool = True, state: str | None = None) -> Calibration:
    """Build a calibration from the sticker colours of a *solved* cube, in facelet order.

    ``rgb``: (54, 3) or (24, 3) sRGB 0..255, as sampled by the rig. Every face
    must show one colour; a face whose stickers differ much is reported.
    ``state``: the face letters of a cube that is not solved, as read; its
    colours are grouped by letter instead, and no position gains are kept
    (a position shows one colour only on a solved cube).
    """
    rgb = check_rgb(rgb)
    size = 3 if len(rgb) == 54 else 2
    per_face = size * size
    if state is None:
        order = np.arange(len(rgb))
    else:
        if len(state) != len(rgb) or sorted(state) != sorted(FACES * per_face):
            raise ScanError(f"calibration: the state must give each of U R F D L B {per_face} times")
        order = np.argsort([FACES.index(c) for c in state], kind="stable")
    linear = srgb_to_linear(rgb)[order].reshape(6, per_face, 3)
    face_mean = linear.mean(axis=1)
    lab = linear_to_lab(linear)
    spread = np.linalg.norm(lab - linear_to_lab(face_mean)[:, None, :], axis=2)
    for k, face in enumerate(FACES if state is None else ()):  # a read cube's colours sit under every face's light
        worst = int(np.argmax(spread[k]))
        if spread[k, worst] > MAX_FACE_SPREAD:
            raise ScanError(
                f"calibration needs a solved cube, but sticker {face}{worst + 1} differs from "
                f"the rest of face {face} by {spread[k, worst]:.0f} CIELAB units"
            )
    gains = None
    if per_position and state is None:  # brightness only: a dark channel's ratio (blue of yellow) would be noise
        brightness = luminance(linear)
        gains = np.clip((brightness / np.maximum(brightness.mean(axis=1, keepdims=True), 1e-6)).ravel(), *_GAIN_RANGE)
    centre = np.median(lab, axis=1, keepdims=True)
    scatter = np.clip(np.median(np.abs(lab - centre), axis=1) * MAD_TO_SIGMA, *SPREAD_RANGE)
    return Calibration(size, linear_to_srgb(face_mean), gains, scatter)


def check_rgb(rgb) -> np.ndarray:
    """Sticker colours as a (54, 3) or (24, 3) float array, or a ScanError saying what is wrong."""
    try:
        array = np.asarray(rgb, dtype=np.float64)
    except (TypeError, ValueError):
        raise ScanError("sticker colours must be a list of [r, g, b] numbers") from None
    if array.ndim != 2 or array.shape[1] != 3 or array.shape[0] not in (54, 24):
        raise ScanError(f"expected 54 (3x3x3) or 24 (2x2x2) [r, g, b] triples, got shape {array.shape}")
    return array


NUMBERED_FACE_ORDER = "ULFRBD"  # faces of a numbered sticker object, as rubiks-color-resolver numbers them


def colours_from_json(data) -> np.ndarray:
    """Sticker colours in facelet order from a JSON value, or a ScanError saying what is wrong.

    Either a list of [r, g, b] in facelet order (U R F D L B), or an object
    numbering the stickers "1" .. "54" ("24" for a 2x2x2) face by face in
    the order U L F R B D, each face in net reading order: the layout that
    rubiks-color-resolver and rubiks-cube-tracker (D. Walton) read and
    write, so their scans can be classified as they are.
    """
    if not isinstance(data, dict):
        return check_rgb(data)
    if len(data) not in (54, 24):
        raise ScanError(f"a numbered sticker object needs keys 1..54 or 1..24; got {len(data)} keys")
    missing = [str(i) for i in range(1, len(data) + 1) if str(i) not in data]
    if missing:
        raise ScanError(f"a numbered sticker object of {len(data)} stickers lacks key {missing[0]!r}")
    rows = [data[str(i)] for i in range(1, len(data) + 1)]
    per_face = len(data) // 6
    order = [NUMBERED_FACE_ORDER.index(face) * per_face + k for face in FACES for k in range(per_face)]
    return check_rgb([rows[i] for i in order])


def load_calibration(path: str | Path) -> Calibration:
    """Read a calibration file (see the module docstring); every problem is a ScanError."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise ScanError(f"cannot read calibration {path}: {error}") from None
    return calibration_from_json(data, str(path))


def calibration_from_json(data: dict, where: str = "calibration") -> Calibration:
    """Validate a calibration's JSON object (unknown keys are errors)."""
    if not isinstance(data, dict):
        raise ScanError(f"{where}: expected a JSON object")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ScanError(f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(_KEYS))})")
    size = data.get("size")
    if size not in (2, 3):
        raise ScanError(f"{where}: 'size' must be 2 or 3, got {size!r}")
    rows = _per_face(data.get("palette"), where, "palette", "[r, g, b]", (0, 255))
    gains = data.get("position_gains")
    if gains is not None:
        try:
            gains = np.array(gains, dtype=np.float64)
        except (TypeError, ValueError):
            raise ScanError(f"{where}: 'position_gains' must be a list of numbers") from None
        if gains.shape != (6 * size * size,) or not np.all((gains >= _GAIN_RANGE[0]) & (gains <= _GAIN_RANGE[1])):
            raise ScanError(
                f"{where}: 'position_gains' must hold {6 * size * size} numbers "
                f"between {_GAIN_RANGE[0]} and {_GAIN_RANGE[1]}"
            )
    spread = data.get("spread")
    spread = None if spread is None else _per_face(spread, where, "spread", "[L, a, b]", SPREAD_RANGE)
    return Calibration(size, rows, gains, spread)


def _per_face(value, where: str, key: str, what: str, bounds: tuple[float, float]) -> np.ndarray:
    """(6, 3) rows in face order from a JSON object mapping each face to three numbers within ``bounds``."""
    if not isinstance(value, dict) or sorted(value) != sorted(FACES):
        raise ScanError(f"{where}: '{key}' must map each of U R F D L B to {what}")
    try:
        rows = np.array([[float(v) for v in value[f]] for f in FACES])
    except (TypeError, ValueError):
        raise ScanError(f"{where}: '{key}' values must be {what} numbers") from None
    low, high = bounds
    if rows.shape != (6, 3) or not np.all((rows >= low) & (rows <= high)):
        raise ScanError(f"{where}: '{key}' values must be {what} with each number in {low:g}..{high:g}")
    return rows
