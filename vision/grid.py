"""Automatic sticker-grid detection in a photo of one face (handheld or uncalibrated rig).

1. *Candidates*: stickers are bright, evenly coloured, square-ish patches
   framed by dark plastic. Edges (Canny on the contrast-stretched brightness
   and on the colour channels) cut the image into regions; regions that are
   square-ish (aspect, fill of their rotated rectangle) and of a plausible
   size are candidates. Background parts, the robot's frame and coloured
   plastic produce candidates too; the lattice sorts them out.
2. *Lattice*: each candidate and one of its nearest neighbours of similar
   size propose a square lattice (origin, one pitch vector, the other at
   90 degrees); with six or more voters a RANSAC homography takes over, so
   perspective does not push far stickers off their points. Candidates on
   lattice points whose size fits vote; the n x n windows with most votes
   are checked: all cells but one (two if a sticker was missed) must look
   like stickers framed by dark plastic on all four sides, which tells a
   2x2 cube from a 3x3 window half over the background. A 3x3 that holds
   up wins over any 2x2 inside it; among equals, most framed cells, then
   most contrast. Missing stickers (glare, a sticker the edges split) are
   inferred from the lattice.
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
MIN_HOMOGRAPHY_VOTERS = 6   # fewer fit almost any homography: it would prove nothing
RANSAC_SHARE = 0.15         # of a pitch: how far a voter may sit from the fitted homography
NEIGHBOURS = 4
MIN_FILL = 0.85             # of its rotated bounding rectangle: rounded squares yes, discs no
MIN_VOTES = {2: 3, 3: 5}
MAX_SIDE_RATIO = 1.45       # largest to smallest voter of one face (a tilted photo's perspective)    # stickers found on the lattice before a grid is believed
FRAME_RATIO = 1.4           # a sticker's middle is this much brighter than the plastic around it,
FRAME_LIFT = 8.0            # plus these levels
CHANNEL_FRAME_RATIO = 2.0   # the same in the sticker's own brightest channel


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
    """(k, 3) rows of centre x, centre y and side of the sticker-like regions of an image."""
    blurred = cv2.GaussianBlur(image, (5, 5), 1.2)
    value = blurred.max(axis=2)
    top = max(float(np.percentile(value, 99)), 1.0)
    stretched = cv2.convertScaleAbs(value, alpha=255.0 / top)
    channels = [stretched] + list(cv2.split(cv2.cvtColor(blurred, cv2.COLOR_BGR2YCrCb))[1:])
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
        (cx, cy), (rw, rh), _ = cv2.minAreaRect(contour)
        if rw <= 0 or rh <= 0 or not 0.6 < rw / rh < 1.67 or area / (rw * rh) < MIN_FILL:
            continue
        hull = cv2.convexHull(contour)
        if area / max(cv2.contourArea(hull), 1.0) < 0.9:
            continue
        # the region lies inside the dilated edges: grow its side back by the edge width
        rows.append((cx, cy, np.sqrt(rw * rh) + 2.0))
    return _distinct(np.array(rows, dtype=np.float64).reshape(-1, 3))


def _distinct(cands: np.ndarray) -> np.ndarray:
    """One candidate per patch: nested regions of one sticker keep the largest."""
    keep = []
    for row in cands[np.argsort(-cands[:, 2])]:
        if all(np.hypot(*(row[:2] - k[:2])) > 0.3 * k[2] for k in keep):
            keep.append(row)
    return np.array(keep).reshape(-1, 3)


def _lattice_votes(cands: np.ndarray, origin: int, pitch: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lattice coordinates of all candidates under one hypothesis, and which of them fit it.

    First a square lattice from the pitch; then, from six or more voters, a
    homography (RANSAC, so a background part that happened to fit is left
    out), so the foreshortening of a tilted photo does not push the far
    stickers off their lattice points.
    """
    basis = np.array([pitch, [-pitch[1], pitch[0]]]).T          # columns: a, a turned 90 degrees
    coords = np.linalg.solve(basis, (cands[:, :2] - cands[origin, :2]).T).T
    local_pitch = np.full(len(cands), np.linalg.norm(pitch))
    fits = _fitting(cands, coords, local_pitch)
    if fits.sum() >= MIN_HOMOGRAPHY_VOTERS:
        lattice = np.round(coords[fits])
        matrix, _ = cv2.findHomography(np.float32(lattice), np.float32(cands[fits, :2]), cv2.RANSAC,
                                       RANSAC_SHARE * float(np.linalg.norm(pitch)))
        if matrix is not None and abs(np.linalg.det(matrix)) > 1e-9:
            warped = cv2.perspectiveTransform(np.float32(cands[None, :, :2]), np.linalg.inv(matrix))[0]
            warped = warped.astype(np.float64)
            steps = np.float32(np.concatenate([warped + (0.5, 0), warped - (0.5, 0)]))[None]
            ends = cv2.perspectiveTransform(steps, matrix)[0]
            refined = _fitting(cands, warped, np.linalg.norm(ends[:len(cands)] - ends[len(cands):], axis=1))
            if refined.sum() >= fits.sum():
                coords, fits = warped, refined
    return np.round(coords).astype(int), fits


def _fitting(cands: np.ndarray, coords: np.ndarray, pitch: np.ndarray) -> np.ndarray:
    near = np.all(np.abs(coords - np.round(coords)) < LATTICE_TOLERANCE, axis=1)
    return near & (cands[:, 2] > 0.6 * pitch) & (cands[:, 2] < 1.25 * pitch)


def _best_windows(coords: np.ndarray, fits: np.ndarray, n: int) -> tuple[int, list[tuple[int, int]]]:
    """Most votes an n x n lattice window gets, and the lower corners of all windows that get them."""
    pts = np.array(sorted(set(map(tuple, coords[fits].tolist()))), dtype=int).reshape(-1, 2)
    if not len(pts):
        return 0, []
    offsets = np.array([(di, dj) for di in range(n) for dj in range(n)])
    starts = np.unique((pts[:, None, :] - offsets[None]).reshape(-1, 2), axis=0)
    rel = pts[None, :, :] - starts[:, None, :]
    counts = np.all((rel >= 0) & (rel < n), axis=2).sum(axis=1)
    best = int(counts.max())
    return best, [(int(i), int(j)) for i, j in starts[counts == best]]


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
            votes, starts = _best_windows(coords, fits, size)
            if votes < MIN_VOTES[size]:
                continue
            for start in starts:
                inside = fits & np.all((coords >= start) & (coords < np.add(start, size)), axis=1)
                key = (size, frozenset(np.flatnonzero(inside).tolist()))   # a lattice seen from several stickers
                if key in proposals:
                    continue
                proposals[key] = (votes, size, origin, pitch, start, coords, inside)
                if size == sizes[0] and votes == size * size:
                    found = _accept(cands, image, [proposals[key]])   # every sticker found: nothing can beat it
                    if found is not None:
                        return found
    for size in sizes:                 # a 3x3 that holds up beats any 2x2 inside it
        mine = [p for p in proposals.values() if p[1] == size]
        for level in sorted({p[0] for p in mine}, reverse=True):
            found = _accept(cands, image, [p for p in mine if p[0] == level])
            if found is not None:
                return found
    return None


def _accept(cands: np.ndarray, image: np.ndarray, proposals: list) -> Grid | None:
    """Of proposals with equal votes, the one with most framed cells, then most contrast, if any holds up."""
    best = None
    for votes, size, origin, pitch, start, coords, inside in proposals:
        sides = cands[inside, 2]
        if sides.max() > MAX_SIDE_RATIO * sides.min():
            continue  # stickers of one face differ in size by perspective only, not that much
        lattice = (coords[inside] - start + 0.5) / size   # in the face square 0..1
        corners = _face_corners(lattice, cands[inside, :2], pitch, cands[origin, :2], start, size)
        framed, contrast = _framed_cells(image, corners, size)
        # one cell may fail the frame test, two where a sticker was not even a candidate
        needed = size * size - (1 if votes == size * size else 2)
        if framed >= needed and (best is None or (framed, contrast) > best[0]):
            best = ((framed, contrast), Grid(size, corners, votes))
    return None if best is None else best[1]


def _framed_cells(image: np.ndarray, corners: np.ndarray, size: int) -> tuple[int, float]:
    """How many cells look like a sticker framed by dark plastic on all four sides, and the contrast.

    Each side's band (where the gaps are, with room for a slightly misplaced
    lattice) is taken apart: its darkest pixels must be clearly darker than
    the middle of the cell, in brightness (the largest channel) or, by a
    wider margin, in the cell's own brightest channel (a blue sticker under
    a warm lamp is bright in blue only, while the plastic's red is lifted).
    Background next to the cube has dark plastic on one or two sides only.
    """
    cell, n = 20, size * size
    side = cell * size
    target = np.float32([[0, 0], [side, 0], [side, side], [0, side]]) - 0.5  # on the outer pixel edges
    matrix = cv2.getPerspectiveTransform(np.float32(corners), target)
    square = cv2.warpPerspective(image, matrix, (side, side)).astype(np.float32)
    cells = square.reshape(size, cell, size, cell, 3).transpose(0, 2, 4, 1, 3).reshape(n, 3, cell, cell)
    middles = np.median(cells[:, :, 5:15, 5:15].reshape(n, 3, -1), axis=2)
    brightness = cells.max(axis=1)
    inside, frame = np.median(brightness[:, 5:15, 5:15].reshape(n, -1), axis=1), _band_darkness(brightness)
    framed = np.all(inside[:, None] > FRAME_RATIO * frame + FRAME_LIFT, axis=1)
    channel = middles.argmax(axis=1)
    own, own_frame = middles[np.arange(n), channel], _band_darkness(cells[np.arange(n), channel])
    framed |= np.all(own[:, None] > CHANNEL_FRAME_RATIO * own_frame + FRAME_LIFT, axis=1)
    return int(framed.sum()), float(np.median(inside - frame.max(axis=1)))


def _band_darkness(cells: np.ndarray, band: int = 5) -> np.ndarray:
    """(cells, 4) dark level (15th percentile) of each cell's four border bands."""
    sides = [cells[:, :band], cells[:, -band:], cells[:, :, :band], cells[:, :, -band:]]
    return np.stack([np.percentile(b.reshape(len(cells), -1), 15, axis=1) for b in sides], axis=1)


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
    right, down = corners[1] - corners[0], corners[3] - corners[0]
    if right[0] * down[1] - right[1] * down[0] < 0:    # mirrored order: make it clockwise on screen
        corners = corners[[0, 3, 2, 1]]
    best = None
    for k in range(4):
        c = np.roll(corners, -k, axis=0)
        right, down = c[1] - c[0], c[3] - c[0]
        score = right[0] / np.linalg.norm(right) + down[1] / np.linalg.norm(down)
        if best is None or score > best[0]:
            best = (score, c)
    return best[1]


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
