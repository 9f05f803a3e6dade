"""Sticker lattices for grid detection: which candidates sit on one square lattice, and where.

Each candidate and one of its nearest neighbours of similar size propose a
square lattice (origin, one pitch vector, the other at 90 degrees).
Candidates near its points, whose size fits the pitch there, vote. The
lattice is then refitted to its voters: an affine map (a photo at an angle
shears and stretches the grid), then, from six voters, a homography (the
worst voter dropped while any sits off it, so a background part that
happened to fit does not bend it), so the foreshortening of a tilted photo
does not push the far stickers off their points. Every pair of voters one
step apart on a lattice proposes that same lattice again, so such pairs are
not tried again: a face is fitted once, not once per sticker pair.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

LATTICE_TOLERANCE = 0.28  # in pitches: how far a centre may sit from its lattice point
MIN_SIDE, MAX_SIDE = 0.6, 1.25  # a voter's side, in pitches at its place
MIN_HOMOGRAPHY_VOTERS = 6  # fewer fit almost any homography: it would prove nothing
OUTLIER_SHARE = 0.15  # of a pitch: how far a voter may sit from the fitted homography
NEIGHBOURS = 4  # nearest candidates paired with each
PAIR_SIZE_RATIO = 1.33  # the two candidates of a proposing pair differ in size at most this much
PAIR_DISTANCE = (1.0, 1.7)  # their distance, in sides of the first
MAX_REACH = 16  # lattice steps from the middle voter that windows are looked for in


@dataclass
class Lattice:
    """All candidates in one lattice's coordinates: integer points, which vote, pitch at each, the map."""

    coords: np.ndarray  # (k, 2) int: nearest lattice point of each candidate
    fits: np.ndarray  # (k,) bool: voters
    pitch: np.ndarray  # (k,) lattice pitch in pixels at each candidate
    matrix: np.ndarray  # 3x3 homography from lattice coordinates (points at integers) to the image


def lattices(cands: np.ndarray) -> Iterator[Lattice]:
    """Distinct lattices proposed by neighbouring candidate pairs, with at least two voters each."""
    explained = np.zeros((len(cands), len(cands)), dtype=bool)
    for i, j in _pairs(cands):
        if explained[i, j]:
            continue
        lattice = _lattice(cands, i, cands[j, :2] - cands[i, :2])
        voters = np.flatnonzero(lattice.fits)
        if len(voters) < 2:
            continue
        steps = np.abs(lattice.coords[voters, None, :] - lattice.coords[None, voters, :]).sum(axis=2)
        explained[np.ix_(voters, voters)] |= steps == 1
        yield lattice


def _pairs(cands: np.ndarray) -> np.ndarray:
    """(m, 2) index pairs: each candidate with its nearest neighbours of similar size at sticker distance."""
    centres, sides = cands[:, :2], cands[:, 2]
    dist = np.linalg.norm(centres[:, None] - centres[None], axis=2)
    np.fill_diagonal(dist, np.inf)
    nearest = np.zeros_like(dist, dtype=bool)
    order = np.argsort(dist, axis=1)[:, :NEIGHBOURS]
    nearest[np.arange(len(cands))[:, None], order] = True
    ratio = sides[None, :] / sides[:, None]
    ok = (
        nearest
        & (ratio > 1 / PAIR_SIZE_RATIO)
        & (ratio < PAIR_SIZE_RATIO)
        & (dist > PAIR_DISTANCE[0] * sides[:, None])
        & (dist < PAIR_DISTANCE[1] * sides[:, None])
    )
    return np.argwhere(ok)


def _lattice(cands: np.ndarray, origin: int, pitch: np.ndarray) -> Lattice:
    """The lattice one pair proposes, refitted to its voters (affine, then a homography from six)."""
    a = np.asarray(pitch, dtype=np.float64)
    matrix = np.array([[a[0], -a[1], cands[origin, 0]], [a[1], a[0], cands[origin, 1]], [0.0, 0.0, 1.0]])
    best = _votes(cands, matrix)
    for _ in range(2):  # affine refits: a sheared, stretched grid
        if best.fits.sum() >= MIN_HOMOGRAPHY_VOTERS:
            break  # enough for the homography below
        voters = np.flatnonzero(best.fits)
        refit = fit_map(best.coords[voters], cands[voters, :2], homography=False)
        if refit is None:
            break
        tried = _votes(cands, refit)
        if tried.fits.sum() < best.fits.sum():
            break
        settled = np.array_equal(tried.fits, best.fits)
        best = tried
        if settled:
            break
    if best.fits.sum() >= MIN_HOMOGRAPHY_VOTERS:
        homography = _robust_homography(cands, best)
        if homography is not None:
            tried = _votes(cands, homography)
            if tried.fits.sum() >= best.fits.sum():
                best = tried
    return best


def _robust_homography(cands: np.ndarray, lattice: Lattice) -> np.ndarray | None:
    """A homography through the voters; the worst is dropped while any sits off it (a background part that fit)."""
    voters = np.flatnonzero(lattice.fits)
    allowed = OUTLIER_SHARE * float(np.median(lattice.pitch[voters]))
    while len(voters) >= MIN_HOMOGRAPHY_VOTERS:
        points, centres = lattice.coords[voters].astype(np.float64), cands[voters, :2]
        matrix = fit_map(points, centres, homography=True)
        if matrix is None:
            return None
        off = np.linalg.norm(apply(matrix, points) - centres, axis=1)
        worst = int(np.argmax(off))
        if off[worst] <= allowed:
            return matrix
        voters = np.delete(voters, worst)
    return None


def fit_map(points: np.ndarray, image_pts: np.ndarray, homography: bool) -> np.ndarray | None:
    """Least-squares 3x3 map from lattice points to image points: affine, or a homography; None if undetermined.

    The homography is the normalised direct linear transform (both point
    sets centred and scaled first, so the fit does not depend on pixel units).
    """
    points = np.asarray(points, dtype=np.float64)
    if len(points) < (4 if homography else 3):
        return None
    if not homography:
        design = np.empty((len(points), 3))
        design[:, :2], design[:, 2] = points, 1.0
        normal = design.T @ design
        if np.linalg.cond(normal) > 1e8:
            return None  # all on one line
        solution = np.linalg.solve(normal, design.T @ image_pts)
        return np.vstack([solution.T, [0.0, 0.0, 1.0]])
    src, to_src = _normalise(points)
    dst, to_dst = _normalise(image_pts)
    n = len(points)
    rows = np.zeros((2 * n, 9))
    rows[:n, 0:2], rows[:n, 2] = src, 1.0
    rows[n:, 3:5], rows[n:, 5] = src, 1.0
    rows[:n, 6:8], rows[:n, 8] = -dst[:, :1] * src, -dst[:, 0]
    rows[n:, 6:8], rows[n:, 8] = -dst[:, 1:] * src, -dst[:, 1]
    _, singular, vt = np.linalg.svd(rows)
    if singular[7] < 1e-6 * singular[0]:
        return None  # the points do not pin a homography down (three on a line)
    matrix = np.linalg.inv(to_dst) @ vt[-1].reshape(3, 3) @ to_src
    if abs(matrix[2, 2]) < 1e-12:
        return None
    return matrix / matrix[2, 2]


def _normalise(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Points centred on their mean and scaled to a mean distance of sqrt(2), and that transform."""
    centre = points.mean(axis=0)
    spread = float(np.sqrt(((points - centre) ** 2).sum(axis=1)).mean())
    scale = np.sqrt(2.0) / spread if spread > 0 else 1.0
    transform = np.array([[scale, 0.0, -scale * centre[0]], [0.0, scale, -scale * centre[1]], [0.0, 0.0, 1.0]])
    return (points - centre) * scale, transform


def _votes(cands: np.ndarray, matrix: np.ndarray) -> Lattice:
    """Candidates in the lattice's coordinates under a map, which of them fit, and the pitch at each."""
    coords = apply(np.linalg.inv(matrix), cands[:, :2])
    points = np.rint(coords)
    # the pitch at each candidate: the image length of one lattice step there (mean of both axes)
    pitch = pitch_at(matrix, coords)
    off = np.abs(coords - points)
    sides = cands[:, 2]
    fits = (
        (off[:, 0] < LATTICE_TOLERANCE)
        & (off[:, 1] < LATTICE_TOLERANCE)
        & (sides > MIN_SIDE * pitch)
        & (sides < MAX_SIDE * pitch)
    )
    fits = _one_per_point(points, coords, fits)
    return Lattice(points.astype(int), fits, pitch, matrix)


def pitch_at(matrix: np.ndarray, coords: np.ndarray) -> np.ndarray:
    """The lattice pitch in pixels at each of ``coords``: the mean image length of a unit step along either axis.

    From the map's derivative there: for x = (A p + t) / w, w = h . p + h22,
    dx/dp = (A - x h^T) / w.
    """
    if matrix[2, 0] == 0.0 and matrix[2, 1] == 0.0:  # affine: one pitch everywhere
        step = np.hypot(matrix[0, :2], matrix[1, :2]) / matrix[2, 2]
        return np.full(len(coords), 0.5 * (step[0] + step[1]))
    w = coords @ matrix[2, :2] + matrix[2, 2]
    mapped = (coords @ matrix[:2, :2].T + matrix[:2, 2]) / w[:, None]
    jacobian = (matrix[None, :2, :2] - mapped[:, :, None] * matrix[2, :2][None, None, :]) / w[:, None, None]
    return 0.5 * np.linalg.norm(jacobian, axis=1).sum(axis=1)


def apply(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(k, 2) points mapped by a 3x3 homography."""
    w = points @ matrix[2, :2] + matrix[2, 2]
    return (points @ matrix[:2, :2].T + matrix[:2, 2]) / w[:, None]


def _one_per_point(points: np.ndarray, coords: np.ndarray, fits: np.ndarray) -> np.ndarray:
    """Of voters on one lattice point keep the one nearest to it."""
    voters = np.flatnonzero(fits)
    if len(voters) < 2:
        return fits
    keys = points[voters, 0] * 100003 + points[voters, 1]
    if len(set(keys.tolist())) == len(keys):
        return fits
    off = np.abs(coords[voters] - points[voters]).sum(axis=1)
    order = np.lexsort((off, keys))
    first = np.r_[True, keys[order][1:] != keys[order][:-1]]
    out = np.zeros_like(fits)
    out[voters[order[first]]] = True
    return out


def best_windows(lattice: Lattice, n: int) -> tuple[int, list[tuple[int, int]]]:
    """Most voters an n x n lattice window holds, and the lower corners of all windows that hold them."""
    pts = lattice.coords[lattice.fits]
    if not len(pts):
        return 0, []
    middle = np.sort(pts, axis=0)[len(pts) // 2]
    pts = pts[np.abs(pts - middle).max(axis=1) <= MAX_REACH]  # a stray far point is no face
    low = pts.min(axis=0) - (n - 1)
    extent = pts.max(axis=0) - low + 1
    occupied = np.zeros((extent[0] + n, extent[1] + n), dtype=np.int32)
    occupied[pts[:, 0] - low[0], pts[:, 1] - low[1]] = 1
    table = np.zeros((occupied.shape[0] + 1, occupied.shape[1] + 1), dtype=np.int32)
    table[1:, 1:] = occupied.cumsum(0).cumsum(1)
    counts = table[n:, n:] - table[:-n, n:] - table[n:, :-n] + table[:-n, :-n]  # window starting at (i, j)
    best = int(counts.max())
    starts = np.argwhere(counts == best) + low
    return best, [(int(i), int(j)) for i, j in starts]
