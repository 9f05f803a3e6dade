"""Automatic sticker-grid detection in a photo of one face (handheld or uncalibrated rig).

1. *Candidates*: stickers are bright, evenly coloured, square-ish patches
   framed by dark plastic. Edges (Canny on the contrast-stretched brightness
   and on the colour channels) cut the image into regions; regions that are
   square-ish (aspect, fill of their rotated rectangle) and of a plausible
   size are candidates. Background parts, the robot's frame and coloured
   plastic produce candidates too; the lattice sorts them out.
2. *Lattice*: each candidate and one of its nearest neighbours of similar
   size propose a square lattice (origin, one pitch vector, the other at
   90 degrees). Candidates whose centres fall on lattice points and whose
   size fits vote for it; the n x n window with most votes wins. Missing
   stickers (glare, a sticker the edges split) are inferred from the lattice.
   The n x n window is only believed where all its cells but one
   looks like a sticker framed by dark plastic, which tells a 2x2 cube
   from a 3x3 window half over the background, and a 3x3 proposal that
   holds up wins over any 2x2 inside it.
3. *Face*: a homography from lattice coordinates to the voters' centres
   gives the four outer corners; the lattice axis closest to the image's x
   axis is the face's "right" (photos show the face in net orientation).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from .errors import ScanError
from .sampling import check_image

WORK_WIDTH = 320            # photos are shrunk to this width to find the grid (speed, noise)
MIN_STICKER_PX = 8.0        # side, at work size
EDGE_NOISE_FACTOR = 12.0    # Canny's low threshold, in noise deviations of the blurred channel
MAX_STICKER_SHARE = 0.45    # of the image's shorter side
LATTICE_TOLERANCE = 0.28    # in pitches: how far a centre may sit from its lattice point
NEIGHBOURS = 4
MIN_FILL = 0.85             # of its rotated bounding rectangle: rounded squares yes, discs no
MIN_VOTES = {2: 3, 3: 5}    # stickers found on the lattice before a grid is believed
FRAME_RATIO = 1.4           # a sticker's middle is this much brighter than the plastic around it,
FRAME_LIFT = 8.0            # plus these levels


@dataclass(frozen=True)
class Grid:
    """A found face: its size, outer corners TL TR BR BL (image pixels), how many stickers voted."""
    size: int
    corners: np.ndarray
    votes: int


def _noise(channel: np.ndarray) -> float:
    """Robust noise level of a channel: scaled median deviation from its 3x3 median."""
    residual = cv2.absdiff(channel, cv2.medianBlur(channel, 3))
    return 1.4826 * float(np.median(residual)) + 0.5


def _candidates(image: np.ndarray) -> np.ndarray:
    """(k, 4) rows of centre x, centre y, side, angle (radians, mod 90 degrees) of sticker-like regions."""
    blurred = cv2.GaussianBlur(image, (5, 5), 1.2)
    value = blurred.max(axis=2)
    top = max(float(np.percentile(value, 99)), 1.0)
    stretched = cv2.convertScaleAbs(value, alpha=255.0 / top)
    channels = [stretched] + list(cv2.split(cv2.cvtColor(blurred, cv2.COLOR_BGR2Lab))[1:])
    edges = None
    for channel, low in zip(channels, (30.0, 25.0, 25.0)):
        low = max(low, EDGE_NOISE_FACTOR * _noise(channel))
        found = cv2.Canny(channel, low, 2.5 * low)
        edges = found if edges is None else edges | found
    edges = cv2.dilate(edges, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(255 - edges, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    h, w = image.shape[:2]
    max_side = MAX_STICKER_SHARE * min(h, w)
    rows = []
    for contour in contours:
        area = cv2.contourArea(contour)
        if area < MIN_STICKER_PX ** 2 or area > max_side ** 2:
            continue
        (cx, cy), (rw, rh), angle = cv2.minAreaRect(contour)
        if rw <= 0 or rh <= 0 or not 0.6 < rw / rh < 1.67 or area / (rw * rh) < MIN_FILL:
            continue
        hull = cv2.convexHull(contour)
        if area / max(cv2.contourArea(hull), 1.0) < 0.9:
            continue
        # the region lies inside the dilated edges: grow its side back by the edge width
        rows.append((cx, cy, np.sqrt(rw * rh) + 2.0, np.radians(angle) % (np.pi / 2)))
    return _distinct(np.array(rows, dtype=np.float64).reshape(-1, 4))


def _distinct(cands: np.ndarray) -> np.ndarray:
    """One candidate per patch: nested regions of one sticker keep the largest."""
    keep = []
    for row in cands[np.argsort(-cands[:, 2])]:
        if all(np.hypot(*(row[:2] - k[:2])) > 0.3 * k[2] for k in keep):
            keep.append(row)
    return np.array(keep).reshape(-1, 4)


def _lattice_votes(cands: np.ndarray, origin: int, pitch: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lattice coordinates of all candidates under one hypothesis, and which of them fit it."""
    basis = np.array([pitch, [-pitch[1], pitch[0]]]).T          # columns: a, a turned 90 degrees
    coords = np.linalg.solve(basis, (cands[:, :2] - cands[origin, :2]).T).T
    rounded = np.round(coords)
    side = np.linalg.norm(pitch)
    size_ok = (cands[:, 2] > 0.6 * side) & (cands[:, 2] < 1.05 * side)
    fits = np.all(np.abs(coords - rounded) < LATTICE_TOLERANCE, axis=1) & size_ok
    return rounded.astype(int), fits


def _best_window(coords: np.ndarray, fits: np.ndarray, n: int) -> tuple[int, tuple[int, int]]:
    """Votes and lower corner of the n x n lattice window holding most fitting candidates."""
    pts = np.unique(coords[fits], axis=0)
    if not len(pts):
        return 0, (0, 0)
    offsets = np.array([(di, dj) for di in range(n) for dj in range(n)])
    starts = np.unique((pts[:, None, :] - offsets[None]).reshape(-1, 2), axis=0)
    rel = pts[None, :, :] - starts[:, None, :]
    counts = np.all((rel >= 0) & (rel < n), axis=2).sum(axis=1)
    k = int(np.argmax(counts))
    return int(counts[k]), (int(starts[k, 0]), int(starts[k, 1]))


def _hypotheses(cands: np.ndarray):
    """(origin index, pitch vector) proposals from each candidate and its nearest similar neighbours."""
    centres = cands[:, :2]
    dist = np.linalg.norm(centres[:, None] - centres[None], axis=2)
    np.fill_diagonal(dist, np.inf)
    for i in range(len(cands)):
        for j in np.argsort(dist[i])[:NEIGHBOURS]:
            d = dist[i, j]
            if not np.isfinite(d):
                break
            ratio = cands[j, 2] / cands[i, 2]
            if not 0.75 < ratio < 1.33 or not 1.0 * cands[i, 2] < d < 1.7 * cands[i, 2]:
                continue
            yield i, centres[j] - centres[i]


def _fit(cands: np.ndarray, n: int | None, image: np.ndarray) -> Grid | None:
    """The best-supported grid: most votes, then the clearest dark gaps between its cells."""
    sizes = (n,) if n else (3, 2)
    proposals = {}
    for origin, pitch in _hypotheses(cands):
        coords, fits = _lattice_votes(cands, origin, pitch)
        for size in sizes:
            votes, start = _best_window(coords, fits, size)
            if votes < MIN_VOTES[size]:
                continue
            inside = fits & np.all((coords >= start) & (coords < np.add(start, size)), axis=1)
            key = (size, tuple(np.flatnonzero(inside).tolist()), tuple(coords[inside].ravel().tolist()))
            if key not in proposals:
                proposals[key] = (votes, size, origin, pitch, start, coords, inside, fits)
    for size in sizes:                 # a 3x3 that holds up beats any 2x2 inside it
        mine = [p for p in proposals.values() if p[1] == size]
        for level in sorted({p[0] for p in mine}, reverse=True):
            best = None
            for votes, _, origin, pitch, start, coords, inside, fits in mine:
                if votes != level:
                    continue
                lattice = (coords[inside] - start + 0.5) / size   # in the face square 0..1
                corners = _face_corners(lattice, cands[inside, :2], pitch, cands[origin, :2], start, size)
                framed, contrast = _framed_cells(image, corners, size)
                if framed >= size * size - 1 and (best is None or contrast > best[0]):
                    best = (contrast, Grid(size, corners, votes))
            if best is not None:
                return best[1]
    return None


def _framed_cells(image: np.ndarray, corners: np.ndarray, size: int) -> tuple[int, float]:
    """How many cells look like a sticker framed by dark plastic on all four sides, and the contrast.

    Each side's band (where the gaps are, with room for a slightly misplaced
    lattice) is taken apart: its darkest pixels must be clearly darker than
    the middle of the cell. Background next to the cube has dark plastic on
    one or two sides only.
    """
    cell, band = 20, 5
    side = cell * size
    target = np.float32([[0, 0], [side, 0], [side, side], [0, side]])
    matrix = cv2.getPerspectiveTransform(np.float32(corners), target)
    square = cv2.warpPerspective(image, matrix, (side, side)).max(axis=2).astype(np.float32)
    cells = square.reshape(size, cell, size, cell).transpose(0, 2, 1, 3).reshape(size * size, cell, cell)
    inside = np.median(cells[:, 5:15, 5:15].reshape(size * size, -1), axis=1)
    sides = [cells[:, :band], cells[:, -band:], cells[:, :, :band], cells[:, :, -band:]]
    frame = np.stack([np.percentile(b.reshape(size * size, -1), 15, axis=1) for b in sides], axis=1)
    framed = np.all(inside[:, None] > FRAME_RATIO * frame + FRAME_LIFT, axis=1)
    return int(framed.sum()), float(np.median(inside - frame.max(axis=1)))


def _face_corners(lattice: np.ndarray, image_pts: np.ndarray, pitch, origin_pt, start, size) -> np.ndarray:
    """Outer corners TL TR BR BL (lattice order) from voters: a homography from 4 or more, else the pitch."""
    unit = np.float32([[0, 0], [1, 0], [1, 1], [0, 1]])
    if len(lattice) >= 4:
        matrix, _ = cv2.findHomography(np.float32(lattice), np.float32(image_pts))
        if matrix is not None and abs(np.linalg.det(matrix)) > 1e-9:
            return cv2.perspectiveTransform(unit[None], matrix)[0].astype(np.float64)
    design = np.c_[lattice, np.ones(len(lattice))]
    affine, *_ = np.linalg.lstsq(design, image_pts, rcond=None)
    if len(lattice) >= 3 and np.linalg.matrix_rank(design) == 3:
        return np.c_[unit, np.ones(4)] @ affine
    a = np.asarray(pitch, dtype=np.float64)
    b = np.array([-a[1], a[0]])
    base = origin_pt + (start[0] - 0.5) * a + (start[1] - 0.5) * b
    return np.array([base + size * (u * a + v * b) for u, v in unit])


def _upright(corners: np.ndarray) -> np.ndarray:
    """Reorder corners so the face's right points along the image's +x (net orientation)."""
    best = None
    for k in range(4):
        c = np.roll(corners, -k, axis=0)
        right = c[1] - c[0]
        down = c[3] - c[0]
        score = right[0] / np.linalg.norm(right) + down[1] / np.linalg.norm(down)
        if best is None or score > best[0]:
            best = (score, c)
    c = best[1]
    if np.cross(c[1] - c[0], c[3] - c[0]) < 0:        # mirrored order: swap to keep TL TR BR BL
        c = c[[0, 3, 2, 1]]
    return c


def detect_grid(image: np.ndarray, size: int | None = None, name: str = "photo") -> Grid:
    """Find the sticker grid of one face in a photo; ``size`` 2 or 3, or None to tell from the photo.

    Returns the face's corners (TL, TR, BR, BL in the photo's pixels) for
    ``vision.sampling.sample_face``. Raises ``ScanError`` naming ``name``
    when no grid is found.
    """
    image = check_image(image, name)
    if size not in (None, 2, 3):
        raise ScanError(f"size must be 2 or 3, got {size!r}")
    scale = min(1.0, WORK_WIDTH / image.shape[1])
    work = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else image
    cands = _candidates(work)
    grid = _fit(cands, size, work) if len(cands) else None
    if grid is None:
        wanted = f"{size}x{size}" if size else "2x2 or 3x3"
        raise ScanError(f"{name}: no {wanted} sticker grid found ({len(cands)} sticker-like patches, "
                        "none forming a grid): is one face of the cube in view, in focus and lit?")
    corners = _upright(grid.corners) / scale
    return Grid(grid.size, corners, grid.votes)
