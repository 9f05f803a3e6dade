"""Whole-cube colour classification: 54 (or 24) sticker colours to a valid facelet string.

How a scan is read (each step is there because it is what fails on real cubes):

1. *White balance and exposure*: every cube shows each colour on exactly 9
   (4) stickers, so the mean linear colour of all stickers is the same for
   every state. One gain per channel maps it to the mean of a typical (or
   the calibrated) sticker set, which cancels a global colour cast and
   exposure without knowing the state.
2. *Brightness-free first pass*: chromaticity gives a first reading that
   does not care how brightly each face is lit.
3. *CIELAB* features, with lightness weighted down: shading changes
   lightness more than hue.
4. *Centre-seeded, adaptive references*: each colour's reference starts at
   its centre (3x3) or, on a 2x2, at the DLB corner's stickers for D, L and
   B and at clusters of the other stickers for U, R and F; after each pass
   a reference moves to the median of the stickers given that colour, so a
   cast that shifts a colour moves its reference with it.
5. *Per-face light*: each face gets a smooth brightness plane fitted to its
   stickers against the references (faces lit differently, light falling
   off across a face).
6. *Piece constraints*: the answer is the cheapest *reachable* cube
   (``vision.pieces``), so counts, real pieces, twist, flip and parity hold
   by construction and a misread is outvoted by the pieces around it.
7. *Doubt*: ``vision.judge`` decides whether the reading can be trusted and
   names the stickers in doubt when it cannot.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import permutations

import numpy as np

from solver.geometry import FACES, OPPOSITE, sticker_name

from .assignment import min_cost_assignment
from .calibration import Calibration, check_rgb
from .errors import ScanError
from .lab import linear_to_lab, luminance, srgb_to_linear
from .judge import Classification, judge
from .pieces import Solution, best_cube, fixed_facelets

# A typical sticker set (white, red, green, yellow, orange, blue), used only for the
# target of the state-invariant white balance, never to name colours.
TYPICAL_STICKERS_SRGB = np.array([[235, 235, 230], [190, 25, 35], [0, 155, 75],
                                  [250, 215, 0], [255, 95, 10], [0, 75, 175]], dtype=np.float64)
LIGHTNESS_WEIGHT = 0.75
STUDENT_NU = 4.0
MIN_SIGMA = 2.5            # Lab units: real cameras rarely repeat a colour closer than this
FIRST_SIGMA = 8.0
MAX_PASSES = 6
PRIOR_WEIGHT = 3.0         # the calibrated colour counts as this many stickers
FACE_GAIN_RANGE = (0.2, 5.0)
SLOPE_RIDGE = {2: 2.0, 3: 1.0}    # how firmly a face's light is kept flat (per size)
CHROMA_FLOOR = 0.01        # keeps the chromaticity of near-black noise from flying apart
CHROMA_SIGMA = 3.0
CLUSTER_STARTS = 4         # 2x2: k-means starts for the three colours not on the DLB corner
ROUGH_REFINED = 3          # 2x2: best seedings refined before one is kept


def _features(linear: np.ndarray) -> np.ndarray:
    lab = linear_to_lab(linear)
    lab[..., 0] *= LIGHTNESS_WEIGHT
    return lab


def _chromaticity(linear: np.ndarray) -> np.ndarray:
    """Brightness-free features: 100 r/(r+g+b), 100 g/(r+g+b), for the first, rough pass."""
    total = linear.sum(axis=-1, keepdims=True) + CHROMA_FLOOR
    return 100.0 * linear[..., :2] / total


def _white_balance(linear: np.ndarray, target_mean: np.ndarray) -> np.ndarray:
    mean = np.maximum(linear.mean(axis=0), 1e-4)
    return linear * (target_mean / mean)


def _costs(features: np.ndarray, refs: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """(robust cost, squared distance / sigma^2) of every sticker against every reference."""
    d2 = ((features[:, None, :] - refs[None, :, :]) ** 2).sum(axis=2) / sigma ** 2
    return 0.5 * (STUDENT_NU + 3) * np.log1p(d2 / STUDENT_NU), d2


def _sigma(features: np.ndarray, refs: np.ndarray, labels: np.ndarray) -> float:
    d2 = ((features - refs[labels]) ** 2).sum(axis=1)
    return max(MIN_SIGMA, float(np.sqrt(np.median(d2) / 2.366)))  # 2.366: median of chi-square, 3 dof


def _medians(values: np.ndarray, labels: np.ndarray) -> np.ndarray:
    return np.stack([np.median(values[labels == k], axis=0) for k in range(6)])


@lru_cache(maxsize=None)
def _gain_fit(size: int) -> np.ndarray:
    """Matrix taking per-sticker log ratios of one face to its fitted plane (ridge on the slopes)."""
    step = np.linspace(-1.0, 1.0, size)
    rows, cols = np.meshgrid(step, step, indexing="ij")
    design = np.stack([np.ones(size * size), cols.ravel(), rows.ravel()], axis=1)
    ridge = np.diag([0.0, SLOPE_RIDGE[size], SLOPE_RIDGE[size]])
    return design @ np.linalg.solve(design.T @ design + ridge, design.T)


def _face_gains(linear: np.ndarray, labels: np.ndarray, size: int) -> np.ndarray:
    """Brightness gain of each sticker's spot: a plane in log luminance per face.

    Faces get different light (one lamp, two cameras) and light falls off
    across a face. One factor per spot rather than one per channel, and a
    smooth plane rather than free values, so a few stickers cannot bend a
    wrong labelling into a consistent one.
    """
    y = luminance(linear)
    expected = np.array([np.median(y[labels == k]) for k in range(6)])[labels]
    log_ratio = np.log(np.maximum(y, 1e-6) / np.maximum(expected, 1e-6)).reshape(6, size * size)
    log_gain = np.clip(log_ratio @ _gain_fit(size).T, *np.log(FACE_GAIN_RANGE))
    return np.exp(log_gain - log_gain.mean()).ravel()


class _Reader:
    """One scan being read: normalised colours, references, the current best cube."""

    def __init__(self, rgb: np.ndarray, calibration: Calibration | None):
        self.size = 3 if len(rgb) == 54 else 2
        self.per_face = self.size ** 2
        self.calibration = calibration
        linear = srgb_to_linear(rgb)
        if calibration is not None:
            linear = calibration.flatten(linear)
            target = calibration.palette_linear.mean(axis=0)
            self.prior_linear = calibration.palette_linear
        else:
            target = srgb_to_linear(TYPICAL_STICKERS_SRGB).mean(axis=0)
            self.prior_linear = None
        self.linear0 = _white_balance(linear, target)
        self.linear = self.linear0
        self.feature_fn = _features
        self.features = _features(self.linear)
        self.sigma = FIRST_SIGMA
        self.prior_match = None  # prior palette row for each face, once known

    def solve(self, refs: np.ndarray) -> tuple[Solution, np.ndarray, np.ndarray]:
        cost, d2 = _costs(self.features, refs, self.sigma)
        return best_cube(cost, self.size), cost, d2

    def update(self, labels: np.ndarray) -> np.ndarray:
        """New references (and face gains, spread) from a labelling."""
        self.feature_fn = _features
        gains = _face_gains(self.linear0, labels, self.size)
        self.linear = self.linear0 / gains[:, None]
        self.features = _features(self.linear)
        refs = _medians(self.features, labels)
        if self.prior_linear is not None:
            refs = self._with_prior(refs, labels)
        self.sigma = _sigma(self.features, refs, labels)
        return refs

    def _with_prior(self, refs: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """Pull the references towards the calibrated colours, at the brightness seen now.

        On the solved cube each colour was lit as its face was; only its
        chromaticity carries over, so the calibrated colour is scaled to the
        luminance of the stickers now given that colour.
        """
        if self.prior_match is None:
            d = ((_chromaticity(_medians(self.linear, labels))[:, None, :]
                  - _chromaticity(self.prior_linear)[None, :, :]) ** 2).sum(axis=2)
            self.prior_match = min_cost_assignment(d)
        prior = self.prior_linear[self.prior_match]
        seen = luminance(_medians(self.linear, labels))
        prior = _features(prior * (seen / np.maximum(luminance(prior), 1e-6))[:, None])
        counts = np.bincount(labels, minlength=6)[:, None]
        return (refs * counts + prior * PRIOR_WEIGHT) / (counts + PRIOR_WEIGHT)

    def rough_labels(self) -> np.ndarray:
        """Labels from brightness-free chromaticity, so faces lit very differently start right.

        A 2x2 has several candidate seedings (its U, R and F colours are not
        known up front); each is refined a little and the best fit kept.
        """
        self.feature_fn = _chromaticity
        self.features = _chromaticity(self.linear0)
        self.sigma = CHROMA_SIGMA
        tried = []
        for refs in self.seed_sets():
            solution, _, _ = self.solve(refs)
            tried.append((solution.cost, refs, solution.faces))
        tried.sort(key=lambda t: t[0])
        best = None
        for _, refs, labels in tried[:ROUGH_REFINED]:
            for _ in range(3):
                refs = _medians(self.features, labels)
                solution, _, _ = self.solve(refs)
                if np.array_equal(labels, solution.faces):
                    break
                labels = solution.faces
            if best is None or solution.cost < best[0]:
                best = (solution.cost, labels)
        return best[1]

    def seed_sets(self) -> list[np.ndarray]:
        """Candidate starting references: the centres (3x3); DLB corner plus U R F guesses (2x2)."""
        fixed = fixed_facelets(self.size)
        refs = np.zeros((6, self.features.shape[1]))
        for index, face in fixed.items():
            refs[face] = self.features[index]
        if self.size == 3:
            return [refs]
        return self._seed_opposites(refs, fixed)

    def _seed_opposites(self, refs: np.ndarray, fixed: dict[int, int]) -> list[np.ndarray]:
        """2x2: D, L, B come from the DLB corner; guesses for U, R, F (their opposites)."""
        known = [FACES.index(f) for f in "DLB"]
        unknown = [FACES.index(f) for f in "URF"]
        if self.prior_linear is not None:
            prior = self.feature_fn(self.prior_linear)
            d = ((refs[known][:, None, :] - prior[None, :, :]) ** 2).sum(axis=2)
            padded = np.vstack([d, np.full((3, 6), d.max() + 1.0)])
            rows = min_cost_assignment(padded)[:3]
            for face, row in zip(known, rows):
                refs[FACES.index(OPPOSITE[FACES[face]])] = prior[self.calibration.opposite_colour(row)]
            return [refs]
        out = []
        for centres in self._free_clusters(refs[known], fixed):
            for order in permutations(range(3)):
                trial = refs.copy()
                trial[unknown] = centres[list(order)]
                out.append(trial)
        return out

    def _free_clusters(self, known: np.ndarray, fixed: dict[int, int]) -> list[np.ndarray]:
        """Three more cluster centres, k-means from farthest-first and from seeded random starts."""
        free = self.features[[i for i in range(len(self.features)) if i not in fixed]]
        rng = np.random.default_rng(0)   # the same input always reads the same
        results = []
        for attempt in range(CLUSTER_STARTS):
            centres = list(known)
            for _ in range(3):
                d = np.min([((free - c) ** 2).sum(axis=1) for c in centres], axis=0)
                pick = int(np.argmax(d)) if attempt == 0 else int(rng.choice(len(free), p=d / d.sum()))
                centres.append(free[pick])
            centres = np.array(centres)
            for _ in range(4):
                nearest = ((self.features[:, None, :] - centres[None]) ** 2).sum(axis=2).argmin(axis=1)
                for k in range(3, 6):
                    if np.any(nearest == k):
                        centres[k] = np.median(self.features[nearest == k], axis=0)
            if not any(np.allclose(centres[3:], r) for r in results):
                results.append(centres[3:])
        return results


def classify(rgb, calibration: Calibration | None = None) -> Classification:
    """Classify a whole cube's sticker colours into a valid facelet string.

    ``rgb``: 54 (3x3x3) or 24 (2x2x2) sRGB triples 0..255 in facelet order
    (U R F D L B, each face in net reading order). ``calibration``: an
    optional prior (``vision.calibration``). Raises ``ScanError`` for bad
    input or when the colours cannot be read for sure, naming the stickers
    in doubt and the colours competing for them.
    """
    rgb = check_rgb(rgb)
    if not np.all(np.isfinite(rgb)) or np.any((rgb < 0) | (rgb > 255)):
        bad = int(np.argwhere(~np.isfinite(rgb) | (rgb < 0) | (rgb > 255))[0, 0])
        raise ScanError(f"sticker {sticker_name(bad, 3 if len(rgb) == 54 else 2)} has colour "
                        f"{rgb[bad].tolist()}: each value must be a number in 0..255")
    if calibration is not None and calibration.size != (3 if len(rgb) == 54 else 2):
        raise ScanError(f"the calibration is for a {calibration.size}x{calibration.size}x{calibration.size} "
                        f"but the scan has {len(rgb)} stickers")
    reader = _Reader(rgb, calibration)
    labels = reader.rough_labels()
    refs = reader.update(labels)
    for _ in range(MAX_PASSES):
        solution, cost, d2 = reader.solve(refs)
        if np.array_equal(solution.faces, labels):
            break
        labels = solution.faces
        refs = reader.update(labels)
    else:
        solution, cost, d2 = reader.solve(refs)
    return judge(solution, cost, d2, refs, reader.sigma)
