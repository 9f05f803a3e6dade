"""Exposure bracketing: which camera image to take again, brighter or darker, and how to read the set.

A robot controls its cameras' exposure (locked after settling), so where a
picture hides what tells two colours apart it can simply look again:

- stickers *clipped* in every channel (an overexposed white and a cream
  yellow, two or three levels of 255 apart) are taken again at half the
  exposure, then a quarter;
- an image whose stickers are far darker than the other images' (two stops
  or more: a camera in shadow) is taken again brighter, up to eight times.

The best frame of each image is kept: the one with the fewest clipped
stickers, and of a brighter re-take only one that clips nothing. Frames
taken darker are brought to one exposure with the rest: every other
sticker's linear colour is scaled to the lowest exposure used, so no value
rises past the sensor's ceiling and the classifier sees the images as if
all were taken at it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from solver.puzzles.cube.geometry import FACES

from .lab import linear_to_srgb, luminance, srgb_to_linear
from .reader import SATURATED
from .sampling import check_image, sample_face, sample_views
from .views import ViewConfig

DARKER = (0.5, 0.25)  # exposures tried, in turn, for an image whose stickers clip
DARK_STOPS = 2.0  # an image this many stops darker than the median image is taken again brighter
MAX_BRIGHTER = 8.0

# One frame of the named image at this many times the locked exposure; None where the camera cannot.
Retake = Callable[[str, float], "np.ndarray | None"]


@dataclass
class Bracket:
    """The frames a scan reads, the exposure each was taken at (1: the locked one), and what was re-taken."""

    images: dict[str, np.ndarray]
    exposures: dict[str, float] = field(default_factory=dict)
    retakes: list[dict] = field(default_factory=list)  # {"image", "exposure", "why", "kept"} per re-take

    def as_dict(self) -> dict:
        return {"exposures": dict(self.exposures), "retakes": list(self.retakes)}


def clipped_stickers(rgb: np.ndarray) -> int:
    """How many stickers are at the sensor's ceiling in every channel (their colour differences lost)."""
    return int(np.sum(np.asarray(rgb).min(axis=1) >= SATURATED))


def _per_image(rgb: np.ndarray, config: ViewConfig) -> dict[str, np.ndarray]:
    """The sampled stickers of each image of a view config."""
    per_face = config.size**2
    out: dict[str, list[np.ndarray]] = {}
    for view in config.views:
        at = FACES.index(view.face) * per_face
        out.setdefault(view.image, []).append(rgb[at : at + per_face])
    return {name: np.concatenate(blocks) for name, blocks in out.items()}


def _brightness(rgb: np.ndarray) -> float:
    return float(np.median(luminance(srgb_to_linear(rgb))))


def bracket(images: dict[str, np.ndarray], config: ViewConfig, retake: Retake | None) -> Bracket:
    """Take again, at another exposure, each image whose stickers clip or that is far darker than the rest.

    ``retake(name, exposure)`` is one frame of that image at ``exposure``
    times the locked exposure (None: the camera cannot). Without it, or
    when nothing needs it, the images are read as they are.
    """
    result = Bracket(dict(images), {name: 1.0 for name in images})
    if retake is None:
        return result
    sampled = _per_image(sample_views(images, config), config)
    levels = {name: _brightness(rgb) for name, rgb in sampled.items()}
    typical = float(np.median(list(levels.values())))
    for name, rgb in sampled.items():
        if clipped_stickers(rgb):
            _try_darker(result, name, config, retake, clipped_stickers(rgb))
        elif len(levels) > 1 and levels[name] * 2**DARK_STOPS < typical:
            _try_brighter(result, name, config, retake, min(MAX_BRIGHTER, typical / max(levels[name], 1e-6)))
    return result


def _sample_one(image: np.ndarray, name: str, config: ViewConfig) -> np.ndarray:
    """The stickers of the faces one image shows, in the order ``_per_image`` gives them."""
    image = check_image(image, name)
    views = [v for v in config.views if v.image == name]
    return np.concatenate([sample_face(image, v.corners, config.size, config.inner) for v in views])


def _try_darker(result: Bracket, name: str, config: ViewConfig, retake: Retake, clipped: int) -> None:
    for exposure in DARKER:
        frame = retake(name, exposure)
        if frame is None:
            result.retakes.append({"image": name, "exposure": exposure, "why": "clipped", "kept": False})
            return
        now = clipped_stickers(_sample_one(frame, name, config))
        kept = now < clipped
        result.retakes.append({"image": name, "exposure": exposure, "why": "clipped", "kept": kept})
        if kept:
            result.images[name], result.exposures[name], clipped = frame, exposure, now
        if clipped == 0:
            return


def _try_brighter(result: Bracket, name: str, config: ViewConfig, retake: Retake, exposure: float) -> None:
    frame = retake(name, exposure)
    kept = frame is not None and clipped_stickers(_sample_one(frame, name, config)) == 0
    result.retakes.append({"image": name, "exposure": round(exposure, 3), "why": "dark", "kept": kept})
    if kept and frame is not None:
        result.images[name], result.exposures[name] = frame, exposure


def at_one_exposure(rgb: np.ndarray, config: ViewConfig, exposures: dict[str, float]) -> np.ndarray:
    """Sticker colours of frames taken at different exposures, as if all were taken at the lowest of them.

    A frame taken again brighter is read as taken: its view was far darker
    than the rest for lack of light, and brightened it shows its colours
    above the noise; the classifier's per-face light takes the difference
    that is left. (Scaled back, it would be as dark as before.)
    """
    lowest = min([1.0] + [exposures.get(v.image, 1.0) for v in config.views])
    scale = {name: lowest / min(e, 1.0) for name, e in exposures.items()}
    if all(abs(s - 1.0) < 1e-9 for s in scale.values()):
        return rgb
    per_face = config.size**2
    out = np.asarray(rgb, dtype=np.float64).copy()
    for view in config.views:
        at = slice(FACES.index(view.face) * per_face, (FACES.index(view.face) + 1) * per_face)
        factor = scale.get(view.image, lowest)
        if factor != 1.0:
            out[at] = linear_to_srgb(srgb_to_linear(out[at]) * factor)
    return out
