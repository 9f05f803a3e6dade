"""Automatic sticker-grid detection in a photo of one face (handheld or uncalibrated rig).

1. *Candidates* (``grid_candidates``): square-ish regions that edges cut a
   copy of the photo about 320 pixels wide into; brightness edges first,
   colour edges added where those do not settle the search (``_search``).
2. *Lattices* (``grid_lattice``): candidate pairs propose square lattices,
   refitted to their voters (affine, then a homography).
3. *Windows*: the n x n windows of a lattice with most voters are checked:
   voters of one face have one size relative to the pitch at their place
   (one that does not is left out and counts as missing), and all cells but
   one (two if a sticker was not even a candidate) must look like stickers
   framed by dark plastic on all four sides, which tells a 2x2 cube from a
   3x3 window half over the background. A 3x3 that holds up wins over any
   2x2 inside it; among equals, most framed cells, then most contrast.
   Missing stickers (glare, a sticker the edges split) are inferred from the
   lattice.
4. *Face*: the map fitted to the window's voters gives the four outer
   corners; the lattice axis closest to the image's x axis is the face's
   "right" (photos show the face in net orientation).

Where the coarse copy shows no grid, or one so fine that its black gaps (about
a tenth of the pitch) are only a pixel or two wide there and neighbouring
stickers may have merged, the search is repeated at twice the resolution (up
to the photo's own), and a 3x3 found at either scale beats a 2x2.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from .errors import ScanError
from .grid_candidates import brightness_edges, candidates, colour_edges, shrink
from .grid_lattice import MIN_HOMOGRAPHY_VOTERS, Lattice, apply, best_windows, fit_map, lattices, pitch_at
from .sampling import check_image

WORK_WIDTH = 320  # photos are shrunk to this width to find the grid (speed, noise) ...
FINE_WIDTH = 640  # ... and to this one where that shows none or a fine grid:
FINE_PITCH = 24.0  # pitch below which the gaps (a tenth of it) blur away on the coarse copy
MIN_VOTES = {2: 3, 3: 5}  # stickers found on the lattice before a grid is believed
SIDE_SPREAD = 1.2  # a voter's side per pitch within this factor of its face's median
TURN_DOUBT_DEG = 10.0  # a face seen within this of 45 degrees may be turned either way (see turn_in_doubt)
FRAME_RATIO = 1.4  # a sticker's middle is this much brighter than the plastic around it,
FRAME_LIFT = 8.0  # plus these levels
CHANNEL_FRAME_RATIO = 2.0  # the same in the sticker's own brightest channel
CELL = 20  # pixels per cell of the warped face the frame test reads
BAND = 5  # width of the border bands it reads, in those pixels
OUTER_LINES = 2  # the band's lines along the cell's edge, where the gap is
DARK_SHARE = 0.1  # a band's darkness: this quantile of its pixels (a half gap at the outline
# fills a fifth of the band)


@dataclass(frozen=True)
class Grid:
    """A found face: its size, outer corners TL TR BR BL (image pixels), how many stickers voted."""

    size: int
    corners: np.ndarray
    votes: int


@dataclass(frozen=True)
class _Window:
    """An n x n window of a lattice: its voters (candidate indices), a map fitted to them, where it starts,
    and whether it settles the search (see ``_fit``)."""

    size: int
    voters: np.ndarray
    matrix: np.ndarray  # lattice coordinates to the image
    start: tuple[int, int]
    settled: bool

    @property
    def votes(self) -> int:
        return len(self.voters)


def detect_grid(image: np.ndarray, size: int | None = None, name: str = "photo") -> Grid:
    """Find the sticker grid of one face in a photo; ``size`` 2 or 3, or None to tell from the photo.

    Returns the face's corners (TL, TR, BR, BL in the photo's pixels) for
    ``vision.sampling.sample_face``. Raises ``ScanError`` naming ``name``
    when no grid is found.
    """
    image = check_image(image, name)
    if size not in (None, 2, 3):
        raise ScanError(f"size must be 2 or 3, got {size!r}")
    found, best = 0, None
    for width in (WORK_WIDTH, FINE_WIDTH):
        work, scale = shrink(image, width)
        grid, seen = _search(work, size)
        found = max(found, seen)
        if grid is not None:
            if best is None or grid.size >= best.size:  # a 3x3 beats a 2x2 inside it at either scale
                best = Grid(grid.size, _upright(grid.corners) / scale, grid.votes)
            if _pitch(grid) >= FINE_PITCH:
                break
        if scale >= 1.0:
            break
    if best is not None:
        return best
    wanted = f"{size}x{size}" if size else "2x2 or 3x3"
    raise ScanError(
        f"{name}: no {wanted} sticker grid found ({found} sticker-like patches, "
        "none forming a grid): is one face of the cube in view, in focus and lit?"
    )


def _search(work: np.ndarray, size: int | None) -> tuple[Grid | None, int]:
    """The grid in a work image, and how many candidates were seen: brightness edges first, colour edges where needed.

    Brightness edges alone settle most photos (see ``_fit``). Else the
    colour edges are added (a sticker against plastic or background of like
    brightness) and the search is repeated.
    """
    edge_map = brightness_edges(work)
    cands = candidates(edge_map)
    first = _fit(cands, size, work) if len(cands) else None
    if first is not None and first[1]:
        return first[0], len(cands)
    more = candidates(cv2.bitwise_or(edge_map, colour_edges(work)))
    second = _fit(more, size, work) if len(more) else None
    found = second or first
    return (None if found is None else found[0]), max(len(cands), len(more))


def _pitch(grid: Grid) -> float:
    """Mean pitch of a grid in pixels (its sides over its size)."""
    return float(np.linalg.norm(grid.corners - np.roll(grid.corners, 1, axis=0), axis=1).mean()) / grid.size


def _fit(cands: np.ndarray, n: int | None, image: np.ndarray) -> tuple[Grid, bool] | None:
    """The best-supported grid (most votes, then most framed cells, then the clearest dark gaps), and whether
    it settles the search: every sticker found and, where the size is open, a 3x3, or a 2x2 with no more
    voters on its lattice (a 3x3 face whose other stickers the edges missed would show some)."""
    sizes = (n,) if n else (3, 2)
    windows: dict[tuple, _Window] = {}
    for lattice in lattices(cands):
        alone = int(lattice.fits.sum())
        for size in sizes:
            votes, starts = best_windows(lattice, size)
            if votes < MIN_VOTES[size]:
                continue
            for start in starts:
                window = _window(cands, lattice, size, start, settles=n is not None or size == 3 or votes == alone)
                if window is None:
                    continue
                key = (size, frozenset(window.voters.tolist()))  # one face seen from several stickers
                if key in windows:
                    continue
                windows[key] = window
                if size == sizes[0] and window.votes == size * size:
                    found = _accept(image, [window])  # every sticker found: nothing beats it
                    if found is not None:
                        return found[0], True
    for size in sizes:  # a 3x3 that holds up beats any 2x2 inside it
        mine = [w for w in windows.values() if w.size == size]
        for level in sorted({w.votes for w in mine}, reverse=True):
            found = _accept(image, [w for w in mine if w.votes == level])
            if found is not None:
                grid, window = found
                return grid, window.settled and window.votes == size * size
    return None


def _window(cands: np.ndarray, lattice: Lattice, size: int, start: tuple[int, int], settles: bool) -> _Window | None:
    """The voters in one n x n window of a lattice, with a map fitted to them; None if too few.

    Voters whose side per pitch at their place is far from the window's
    median are left out: stickers of one face are alike. The pitch comes from
    a homography fitted to the window's voters, so perspective (near
    stickers look larger) changes side and pitch alike; where the voters are
    too few to fit one, sizes are not compared.
    """
    inside = lattice.fits & np.all((lattice.coords >= start) & (lattice.coords < np.add(start, size)), axis=1)
    voters = np.flatnonzero(inside)
    if len(voters) < MIN_VOTES[size]:
        return None
    matrix = _window_map(cands, lattice, voters, size)
    if _homography_fits(len(voters), size):
        relative = cands[voters, 2] / pitch_at(matrix, lattice.coords[voters].astype(np.float64))
        middle = float(np.sort(relative)[len(relative) // 2])
        alike = (relative < SIDE_SPREAD * middle) & (relative > middle / SIDE_SPREAD)
        if not alike.all():
            voters = voters[alike]
            if len(voters) < MIN_VOTES[size]:
                return None
            matrix = _window_map(cands, lattice, voters, size)
    return _Window(size, voters, matrix, start, settles)


def _homography_fits(voters: int, size: int) -> bool:
    """Whether a window's voters determine a homography well: six or more, or a complete 2x2."""
    return voters >= MIN_HOMOGRAPHY_VOTERS or voters == size * size == 4


def _window_map(cands: np.ndarray, lattice: Lattice, voters: np.ndarray, size: int) -> np.ndarray:
    """A map from lattice coordinates to the image fitted to a window's voters.

    A homography where the voters determine one well, else an affine map;
    the lattice's own map where neither is determined.
    """
    points, image_pts = lattice.coords[voters].astype(np.float64), cands[voters, :2]
    matrix = fit_map(points, image_pts, homography=True) if _homography_fits(len(voters), size) else None
    if matrix is None:
        matrix = fit_map(points, image_pts, homography=False)
    return lattice.matrix if matrix is None else matrix


def _accept(image: np.ndarray, windows: list[_Window]) -> tuple[Grid, _Window] | None:
    """Of windows with equal votes, the one with most framed cells, then most contrast, if any holds up."""
    best = None
    for window in windows:
        outline = (
            np.asarray(window.start, dtype=np.float64)
            - 0.5
            + window.size * np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=np.float64)
        )
        corners = apply(window.matrix, outline)  # TL TR BR BL in lattice order
        framed, contrast = _framed_cells(image, corners, window.size)
        # one cell may fail the frame test, two where a sticker was not even a candidate
        n = window.size * window.size
        needed = n - (1 if window.votes == n else 2)
        if framed >= needed and (best is None or (framed, contrast) > best[0]):
            best = ((framed, contrast), (Grid(window.size, corners, window.votes), window))
    return None if best is None else best[1]


def _framed_cells(image: np.ndarray, corners: np.ndarray, size: int) -> tuple[int, float]:
    """How many cells look like a sticker framed by dark plastic on all four sides, and the contrast.

    Each side's band (where the gaps are, with room for a slightly misplaced
    lattice) is taken apart: its darkest pixels must be clearly darker than
    the middle of the cell, in brightness (the largest channel) or, by a
    wider margin, in the cell's own brightest channel (a blue sticker under
    a warm lamp is bright in blue only, while the plastic's red is lifted).
    Background next to the cube has dark plastic on one or two sides only.
    What the photo does not show is no evidence either way: pixels off the
    image read white (no dark frame), a side mostly off the image is not
    judged, and a cell whose middle is off the image is no sticker seen.
    """
    n, side = size * size, CELL * size
    target = np.array([[0, 0], [side, 0], [side, side], [0, side]], np.float32) - 0.5  # on the outer pixel edges
    matrix = cv2.getPerspectiveTransform(np.asarray(corners, np.float32), target)
    square = cv2.warpPerspective(
        image, matrix, (side, side), borderMode=cv2.BORDER_CONSTANT, borderValue=(255, 255, 255)
    )
    shown = cv2.warpPerspective(
        np.full(image.shape[:2], 1, np.uint8),
        matrix,
        (side, side),
        flags=cv2.INTER_NEAREST,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=0,
    )
    brightness = cv2.max(cv2.max(square[:, :, 0], square[:, :, 1]), square[:, :, 2])
    planes = np.concatenate([square, brightness[:, :, None], shown[:, :, None]], axis=2)  # B G R bright shown
    cells = planes.reshape(size, CELL, size, CELL, 5).transpose(0, 2, 4, 1, 3).reshape(n, 5, CELL, CELL)
    middle = slice(CELL // 4, CELL - CELL // 4)
    inside = _quantile(cells[:, :, middle, middle].reshape(n, 5, -1), 0.5)  # (n, 5) medians
    # each side's band as (lines, CELL), its first line on the cell's edge
    bands = np.concatenate(
        [
            cells[:, :, :BAND],
            cells[:, :, : -BAND - 1 : -1],
            cells[:, :, :, :BAND].transpose(0, 1, 3, 2),
            cells[:, :, :, : -BAND - 1 : -1].transpose(0, 1, 3, 2),
        ],
        axis=2,
    ).reshape(n, 5, 4, -1)  # (n, plane, side, pixels)
    frame = _quantile(bands[:, :4], DARK_SHARE)  # (n, plane, side)
    # a side whose outer lines (where its gap is) lie mostly off the photo is not judged
    unseen = bands[:, 4].reshape(n, 4, BAND, CELL)[:, :, :OUTER_LINES].mean(axis=(2, 3)) < 0.5  # (n, side)
    rows = np.arange(n)
    channel = inside[:, :3].argmax(axis=1)
    bright, own = inside[:, 3], inside[rows, channel]
    framed = (unseen | (bright[:, None] > FRAME_RATIO * frame[:, 3] + FRAME_LIFT)).all(axis=1) | (
        unseen | (own[:, None] > CHANNEL_FRAME_RATIO * frame[rows, channel] + FRAME_LIFT)
    ).all(axis=1)
    framed &= (inside[:, 4] > 0) & (unseen.sum(axis=1) <= 1)  # its middle in the photo, three sides seen
    contrast = np.sort(bright - frame[:, 3].max(axis=1))[n // 2]  # the median cell's
    return int(framed.sum()), float(contrast)


def _quantile(values: np.ndarray, share: float) -> np.ndarray:
    """The ``share`` quantile along the last axis (the nearest-rank value, cheaper than np.percentile)."""
    k = int(round(share * (values.shape[-1] - 1)))
    return np.partition(values, k, axis=-1)[..., k].astype(np.float64)


def turn_in_doubt(corners: np.ndarray) -> int:
    """0 when a face's orientation in its photo is clear; else the quarter turns (1 or 3, clockwise) that
    read it the other way.

    ``corners`` as ``detect_grid`` gives them (TL TR BR BL, right closest to
    the image's +x). The face's apparent roll is the mean angle of its
    sides from the image axes; within ``TURN_DOUBT_DEG`` of 45 degrees a
    photo taken turned by just under 45 degrees and one turned by just over
    it look alike (perspective moves a face's sides that much), so only the
    colours can tell which was meant.
    """
    c = np.asarray(corners, dtype=np.float64)
    sides = [c[1] - c[0], c[2] - c[3], c[1] - c[2], c[0] - c[3]]  # right twice, then up twice (+90 degrees)
    angles = np.array([np.arctan2(v[1], v[0]) for v in sides]) + np.radians([0, 0, 90, 90])
    roll = np.degrees(np.angle(np.exp(1j * angles).sum()))
    if abs(roll) < 45.0 - TURN_DOUBT_DEG:
        return 0
    return 1 if roll > 0 else 3


def _upright(corners: np.ndarray) -> np.ndarray:
    """Reorder corners so the face's right points along the image's +x (net orientation)."""
    right, down = corners[1] - corners[0], corners[3] - corners[0]
    if right[0] * down[1] - right[1] * down[0] < 0:  # mirrored order: make it clockwise on screen
        corners = corners[[0, 3, 2, 1]]
    best_score, best = -np.inf, corners
    for k in range(4):
        c = np.roll(corners, -k, axis=0)
        right, down = c[1] - c[0], c[3] - c[0]
        score = right[0] / np.linalg.norm(right) + down[1] / np.linalg.norm(down)
        if score > best_score:
            best_score, best = score, c
    return best
