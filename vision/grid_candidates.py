"""Sticker candidates for grid detection: the square-ish regions that edges cut an image into.

Stickers are bright, evenly coloured, rounded squares framed by dark
plastic. Edges cut the image into regions: Canny on the brightness (the
largest channel) on a log scale, so an edge is a ratio of levels whatever
the light, and, where the caller asks, on the colour channels Cr and Cb;
each channel's threshold lies above that channel's own noise. A region is a
candidate when its own outline (not the rim of a hole it leaves in the
region around it) is a filled, convex, rounded square of plausible size,
judged where needed after undoing any affine distortion (so a sticker seen
at an angle, a parallelogram, passes and a disc does not). Background
parts, the robot's frame and coloured plastic produce candidates too; the
lattice sorts them out.
"""

from __future__ import annotations

import cv2
import numpy as np

MIN_STICKER_PX = 8.0  # side, at work size
EDGE_FLOORS = (30.0, 25.0, 25.0)  # Canny's least low threshold: log brightness, Cr, Cb
EDGE_NOISE_FACTOR = 3.0  # Canny's low threshold, in noise deviations of the unblurred channel (its high
# one, 2.5 times that, lies above the gradients the blurred noise makes)
DARK_OFFSET = 0.1  # log brightness is taken of the level plus this share of the bright level
MAX_STICKER_SHARE = 0.45  # of the image's shorter side
MAX_ASPECT = 1.67  # of the rotated bounding rectangle (a sticker seen at up to ~50 degrees)
MIN_SOLIDITY = 0.9  # of the convex hull: no notches
MIN_FILL = 0.85  # of the rotated bounding rectangle (made isotropic): rounded squares, not discs (0.785)
SAMPLE_ROWS = 4  # image statistics (bright level, noise) are read from every 4th row
EDGE_WIDTH = 2.0  # the dilated edges eat this much of a region's side


def shrink(image: np.ndarray, width: int) -> tuple[np.ndarray, float]:
    """The image at most ``width`` pixels wide (area averaging), and the scale applied."""
    scale = min(1.0, width / image.shape[1])
    if scale >= 1.0:
        return image, 1.0
    size = (max(1, round(image.shape[1] * scale)), max(1, round(image.shape[0] * scale)))
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA), scale


def _level(hist: np.ndarray, share: float) -> float:
    """The grey level below which ``share`` of the pixels of a 256-bin histogram lie."""
    cumulative = np.cumsum(hist)
    return float(np.searchsorted(cumulative, share * cumulative[-1]))


def _noise(residual: np.ndarray) -> float:
    """Noise deviation of a channel from its absolute deviations from the 3x3 median (uint8).

    The median deviation is read between histogram bins, so noise of a level
    or two is not rounded to 0 or 1.
    """
    hist = cv2.calcHist([residual[::SAMPLE_ROWS]], [0], None, [256], [0, 256]).ravel()
    cumulative = np.cumsum(hist) / max(hist.sum(), 1.0)
    k = int(np.searchsorted(cumulative, 0.5))
    below = cumulative[k - 1] if k > 0 else 0.0
    start, width = (0.0, 0.5) if k == 0 else (k - 0.5, 1.0)  # bin k holds [k - 0.5, k + 0.5), bin 0 [0, 0.5)
    return 1.4826 * (start + width * (0.5 - below) / max(cumulative[k] - below, 1e-9))


def _log_brightness(image: np.ndarray) -> np.ndarray:
    """Brightness (the largest channel) on a log scale: an edge is a ratio of levels, not a difference.

    Light multiplies: a dim sticker against black plastic and a bright one
    against grey differ by alike ratios, so one threshold suits both, and
    exposure does not matter. Levels near black are compressed (an offset
    of a tenth of the bright level) where sensor noise would dominate; levels
    above the bright level (the 99th percentile: glare) are clipped.
    """
    value = cv2.max(cv2.max(image[:, :, 0], image[:, :, 1]), image[:, :, 2])
    top = max(_level(cv2.calcHist([value[::SAMPLE_ROWS]], [0], None, [256], [0, 256]).ravel(), 0.99), 1.0)
    offset = DARK_OFFSET * top
    levels = np.minimum(np.arange(256.0), top)
    lut = np.round(255 * np.log((levels + offset) / offset) / np.log((top + offset) / offset))
    return cv2.LUT(value, lut.astype(np.uint8))


def _channel_edges(channel: np.ndarray, floor: float) -> np.ndarray:
    """Canny edges of one channel, blurred first, its low threshold above the channel's own noise."""
    low = max(floor, EDGE_NOISE_FACTOR * _noise(cv2.absdiff(channel, cv2.medianBlur(channel, 3))))
    return cv2.Canny(cv2.GaussianBlur(channel, (5, 5), 1.2), low, 2.5 * low)


def brightness_edges(image: np.ndarray) -> np.ndarray:
    """Edges of the log brightness (undilated)."""
    return _channel_edges(_log_brightness(image), EDGE_FLOORS[0])


def colour_edges(image: np.ndarray) -> np.ndarray:
    """Edges of the colour channels Cr and Cb (undilated): stickers against plastic or background of like brightness."""
    ycrcb = cv2.cvtColor(image, cv2.COLOR_BGR2YCrCb)
    return cv2.bitwise_or(
        _channel_edges(cv2.extractChannel(ycrcb, 1), EDGE_FLOORS[1]),
        _channel_edges(cv2.extractChannel(ycrcb, 2), EDGE_FLOORS[2]),
    )


def candidates(edge_map: np.ndarray) -> np.ndarray:
    """(k, 3) rows of centre x, centre y and side of the sticker-like regions that edges cut an image into."""
    edge_map = cv2.dilate(edge_map, np.ones((3, 3), np.uint8))
    contours, hierarchy = cv2.findContours(cv2.bitwise_not(edge_map), cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    if hierarchy is None:
        return np.zeros((0, 3))
    h, w = edge_map.shape[:2]
    max_area = (MAX_STICKER_SHARE * min(h, w)) ** 2
    rows = []
    for contour, links in zip(contours, hierarchy[0]):
        # A region's own outline only: the rim of a hole in the region around a sticker traces the
        # edge band too and would make that sticker look larger than it is.
        if links[3] >= 0 or len(contour) < 4:
            continue
        area = cv2.contourArea(contour)
        if not MIN_STICKER_PX**2 <= area <= max_area:
            continue
        _, (rw, rh), _ = rect = cv2.minAreaRect(contour)
        if rw <= 0 or rh <= 0 or max(rw, rh) > MAX_ASPECT * min(rw, rh):
            continue
        if area < MIN_SOLIDITY * cv2.contourArea(cv2.convexHull(contour)):
            continue
        if area < MIN_FILL * rw * rh and _isotropic_fill(contour, area) < MIN_FILL:
            continue  # (a region that fills its rectangle needs no whitening)
        rows.append((rect[0][0], rect[0][1], np.sqrt(area) + EDGE_WIDTH))
    return _distinct(np.array(rows, dtype=np.float64).reshape(-1, 3))


def _isotropic_fill(contour: np.ndarray, area: float) -> float:
    """How much of its rotated bounding rectangle a region fills once its second moments are made equal.

    Whitening undoes any affine distortion (a square seen at an angle is a
    parallelogram, which fills its bounding rectangle poorly): a rounded
    square fills 0.9 and more, a disc or ellipse 0.785, whatever the angle.
    """
    m = cv2.moments(contour)
    a, b, c = m["mu20"], m["mu11"], m["mu02"]
    det = a * c - b * b
    if m["m00"] <= 0 or det <= 1e-12 * (a + c) ** 2:
        return 0.0
    # the inverse square root of [[a, b], [b, c]]: sqrt(M) = (M + s I) / t, s = sqrt(det), t = sqrt(a + c + 2 s)
    root = np.sqrt(det)
    scale = np.sqrt(a + c + 2 * root)
    whiten = np.array([[c + root, -b], [-b, a + root]]) * (scale / (root * (a + c + 2 * root)))
    points = (contour.reshape(-1, 2) - (m["m10"] / m["m00"], m["m01"] / m["m00"])) @ whiten
    _, (rw, rh), _ = cv2.minAreaRect(points.astype(np.float32))
    return area * abs(np.linalg.det(whiten)) / max(rw * rh, 1e-12)


def _distinct(cands: np.ndarray) -> np.ndarray:
    """One candidate per patch: of regions nested in one sticker (a logo, a glare spot) keep the largest."""
    order = np.argsort(-cands[:, 2])
    keep: list[np.ndarray] = []
    for row in cands[order]:
        if all(np.hypot(row[0] - k[0], row[1] - k[1]) > 0.3 * k[2] for k in keep):
            keep.append(row)
    return np.array(keep, dtype=np.float64).reshape(-1, 3)
