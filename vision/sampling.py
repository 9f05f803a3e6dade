"""Sticker sampling: from a face's four image corners to one colour per sticker.

The face is warped to a square, cut into an n x n grid, and each sticker is
read as the per-channel median of its inner region (away from the black
gaps and a slightly misplaced corner). Glare pixels are left out first:
specular glare adds white light, so they are those whose weakest channel
rises clearly above the rest of their sticker (bright and unsaturated), or
clipped ones. Where glare hides most of the inner region, clean pixels of a
wider ring are read instead; a sticker covered by glare entirely keeps its
pixels (its colour is then doubtful, and the classifier's constraints decide).
"""

from __future__ import annotations

import cv2
import numpy as np

from solver.puzzles.cube.geometry import FACES

from .errors import ScanError
from .views import ViewConfig

CELL_PX = 20  # side of one sticker in the warped square
CLIPPED = 250.0
GLARE_LIFT = 10.0  # levels a glare pixel's weakest channel rises above its sticker's, plus
GLARE_RELATIVE = 0.08  # this share of the typical level, plus three noise deviations
OUTER = 0.8  # share of a sticker's width searched for clean pixels when glare hides its core
MIN_CLEAN_SHARE = 0.4


def check_image(image, name: str) -> np.ndarray:
    """An 8-bit BGR image (3 channels; grey is widened), or ScanError naming it."""
    if not isinstance(image, np.ndarray) or image.ndim not in (2, 3) or image.size == 0:
        raise ScanError(f"image {name!r} is not an image array")
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.shape[2] == 4:
        image = image[:, :, :3]
    if image.shape[2] != 3:
        raise ScanError(f"image {name!r} has {image.shape[2]} channels, expected 3 (BGR)")
    if image.dtype != np.uint8:
        raise ScanError(f"image {name!r} has pixel type {image.dtype}, expected 8-bit")
    return image


def warp_face(image: np.ndarray, corners: np.ndarray, size: int, cell: int = CELL_PX) -> np.ndarray:
    """The face as a square BGR image (net orientation) from its corners TL, TR, BR, BL."""
    side = size * cell
    target = np.array([[0, 0], [side, 0], [side, side], [0, side]], np.float32) - 0.5  # on the outer pixel edges
    matrix = cv2.getPerspectiveTransform(np.asarray(corners, np.float32), target)
    return cv2.warpPerspective(image, matrix, (side, side), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def sample_square(square: np.ndarray, size: int, inner: float = 0.5) -> np.ndarray:
    """(size*size, 3) RGB medians of each sticker's inner region of a warped face, glare left out.

    ``square`` may also be a stack of warped faces (faces, side, side, 3);
    their stickers come out face after face (one call for a whole cube).
    Where glare hides most of the inner region, the clean pixels of a wider
    ring around it (``OUTER`` of the sticker's width) are used as well.
    """
    squares = square.reshape(-1, *square.shape[-3:])
    faces, cell = len(squares), squares.shape[1] // size
    outer = max(inner, OUTER)
    margin = int(round(cell * (1 - outer) / 2))
    cells = squares[:, : size * cell, : size * cell].reshape(faces, size, cell, size, cell, 3)
    blocks = cells.transpose(0, 1, 3, 2, 4, 5)
    region = blocks[:, :, :, margin : cell - margin, margin : cell - margin]
    side = region.shape[3]
    pixels = region.reshape(faces * size * size, -1, 3)[:, :, ::-1].astype(np.float32)  # BGR -> RGB
    # Glare adds white light: it lifts a pixel's weakest channel above the rest of its sticker.
    weakest = pixels.min(axis=2)
    # Glare may cover most of a sticker's middle, so its level comes from the darker quarter of
    # the wider region (a sliver of black gap there, from a slightly misplaced corner, stays
    # below it), and the noise from each face as a whole: in a normal distribution p40 - p10 is
    # 1.03 deviations and p25 lies 0.67 below the median.
    core = _core_mask(side, int(round(cell * inner)))
    low, mid = np.percentile(weakest[:, core], [10, 40], axis=1)
    noise = np.median((mid - low).reshape(faces, -1), axis=1).repeat(size * size)[:, None] / 1.03
    typical = np.percentile(weakest, 25, axis=1, keepdims=True) + 0.67 * noise
    lifted = weakest > typical + GLARE_LIFT + GLARE_RELATIVE * typical + 3.0 * noise
    value = pixels.max(axis=2)
    clean = ~(lifted | (value >= CLIPPED) & (np.median(value, axis=1, keepdims=True) < CLIPPED))
    use = clean & core
    starved = use.sum(axis=1) < MIN_CLEAN_SHARE * core.sum()
    use[starved] = clean[starved]
    empty = use.sum(axis=1) == 0
    use[empty] = core  # glare everywhere: nothing better to read
    return _masked_median(pixels, use)


def _masked_median(pixels: np.ndarray, use: np.ndarray) -> np.ndarray:
    """Per-channel median of each row's used pixels (every row uses at least one).

    Sorting with the unused ones set to +inf (they sort last) and picking
    the middle of the used ones is several times faster than nanmedian.
    """
    ordered = np.sort(np.where(use[:, :, None], pixels, np.inf), axis=1)
    count = use.sum(axis=1)
    low = ordered[np.arange(len(count)), (count - 1) // 2]
    high = ordered[np.arange(len(count)), count // 2]
    return 0.5 * (low + high)


def _core_mask(side: int, core: int) -> np.ndarray:
    start = (side - core) // 2
    mask = np.zeros((side, side), dtype=bool)
    mask[start : start + core, start : start + core] = True
    return mask.ravel()


def sample_face(image: np.ndarray, corners: np.ndarray, size: int, inner: float = 0.5) -> np.ndarray:
    """(size*size, 3) RGB sticker colours of the face whose corners (TL, TR, BR, BL) are given."""
    return sample_square(warp_face(image, corners, size), size, inner)


def sample_views(images: dict[str, np.ndarray], config: ViewConfig) -> np.ndarray:
    """All stickers, (6 n^2, 3) RGB in facelet order, from the rig's images and its view config."""
    missing = [name for name in config.images if name not in images]
    if missing:
        raise ScanError(
            f"no image {missing[0]!r}: the view config needs images "
            f"{', '.join(config.images)}, got {', '.join(images) or 'none'}"
        )
    checked = {name: check_image(images[name], name) for name in config.images}
    squares = []
    for view in config.views:
        image = checked[view.image]
        h, w = image.shape[:2]
        c = view.corners
        if c[:, 0].min() < -0.5 * w or c[:, 0].max() > 1.5 * w or c[:, 1].min() < -0.5 * h or c[:, 1].max() > 1.5 * h:
            raise ScanError(
                f"face {view.face}: its corners lie outside image {view.image!r} "
                f"({w}x{h}): is the view config for this camera?"
            )
        squares.append(warp_face(image, c, config.size))
    assert [v.face for v in config.views] == list(FACES)
    return sample_square(np.stack(squares), config.size, config.inner)
