"""The colour model of one scan: normalised sticker colours, references, spreads, face light.

``Reader`` holds a scan being read (see ``vision.classify`` for the whole
method): white balance and exposure cancelled once, chromaticity for a
brightness-free first labelling, CIELAB features with per-face brightness
planes afterwards, and for any labelling the references (medians) and each
colour's own scatter, from which every sticker's cost against every colour
follows.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

import numpy as np

from solver.puzzles.cube.geometry import FACES, OPPOSITE

from .assignment import assign
from .calibration import Calibration
from .lab import linear_to_lab, luminance, srgb_to_linear
from .pieces import Solution, best_cube, fixed_facelets

# A typical sticker set (white, red, green, yellow, orange, blue): the target of the
# state-invariant white balance, and which opposite faces are which colour pair in
# vision.scheme; never to name a sticker's colour.
TYPICAL_STICKERS_SRGB = np.array(
    [[235, 235, 230], [190, 25, 35], [0, 155, 75], [250, 215, 0], [255, 95, 10], [0, 75, 175]], dtype=np.float64
)
LIGHTNESS_WEIGHT = 0.75
STUDENT_NU = 4.0
HUE_SPREAD = 3.0  # CIELAB units of chroma, across the hue direction
MAX_HUE_COST = 4.5  # nats: a sticker's hue alone is never stronger evidence than this
FITS_NONE_D2 = 100.0  # squared standardised distance at which a sticker fits a colour not at all
MIN_SPREAD = 0.5  # Lab units: about one 8-bit step of a light colour
MAD_TO_SIGMA = 1.4826
SPREAD_PRIOR = 1.0  # the median colour's scatter counts as this many stickers
MAX_PASSES = 6
SATURATED = 245.0  # sRGB level from which a channel counts as at or near the sensor's ceiling
PRIOR_WEIGHT = 3.0  # the calibrated colour counts as this many stickers
SPREAD_FLOOR = 1.0  # no colour is judged tighter than this share of its calibrated scatter
FACE_GAIN_RANGE = (0.2, 5.0)
GAIN_OUTLIER_LOG = 0.4  # log brightness ratio beyond which a sticker stops bending its face's light
SLOPE_RIDGE = {2: 2.0, 3: 1.0}  # how firmly a face's light is kept flat (per size)
CHROMA_FLOOR = 0.01  # keeps the chromaticity of near-black noise from flying apart
CHROMA_SIGMA = 3.0
LAB_START_SIGMA = 8.0
CLUSTER_STARTS = 4  # 2x2: k-means starts for the three colours not on the DLB corner
ROUGH_REFINED = 3  # 2x2: best seedings refined before one is kept


def _features(linear: np.ndarray) -> np.ndarray:
    lab = linear_to_lab(linear)
    lab[..., 0] *= LIGHTNESS_WEIGHT
    return lab


def features_to_lab(features: np.ndarray) -> np.ndarray:
    """CIELAB of CIELAB features (lightness weighted back up)."""
    return features / np.array([LIGHTNESS_WEIGHT, 1.0, 1.0])


def _chromaticity(linear: np.ndarray) -> np.ndarray:
    """Brightness-free features: 100 r/(r+g+b), 100 g/(r+g+b), for the first, rough pass."""
    total = linear.sum(axis=-1, keepdims=True) + CHROMA_FLOOR
    return 100.0 * linear[..., :2] / total


def _white_balance(linear: np.ndarray, target_mean: np.ndarray) -> np.ndarray:
    mean = np.maximum(linear.mean(axis=0), 1e-4)
    return linear * (target_mean / mean)


def costs(
    features: np.ndarray, refs: np.ndarray, spread: np.ndarray, hue: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """(robust cost, squared standardised distance) of every sticker against every reference.

    ``spread[colour, axis]``: how far that colour's stickers scatter along
    each feature axis. The cost is a Student-t negative log-likelihood, so a
    tight colour pays less for its stickers than a loose one. Beyond
    ``FITS_NONE_D2`` a sticker fits that colour not at all, and how far
    beyond says nothing: a sticker that fits no colour (glare, a sticker
    half in shadow) is evidence for none of them, except by its hue
    (``hue``, CIELAB features only; see ``_hue_cost``).
    """
    d2 = distances(features, refs, spread)
    norm = np.log(spread).sum(axis=1)
    cost = 0.5 * (STUDENT_NU + 3) * np.log1p(d2 / STUDENT_NU) + norm[None, :]
    ceiling = 0.5 * (STUDENT_NU + 3) * np.log1p(FITS_NONE_D2 / STUDENT_NU) + small_median(norm)
    if hue:
        ceiling = ceiling + _hue_cost(features, refs)
    return np.minimum(cost, ceiling), d2


def _hue_cost(features: np.ndarray, refs: np.ndarray) -> np.ndarray:
    """What a sticker's hue alone says against each colour, in nats, at most ``MAX_HUE_COST``.

    A sticker in deep shadow, or with black plastic showing, is far from
    every colour in CIELAB, but shading darkens a colour without turning
    its hue. The hue angle between sticker and colour counts as the
    distance it spans at the sticker's own chroma, so a nearly grey
    sticker (glare, a white) says nothing by its hue.
    """
    ab, ref_ab = features[:, 1:], refs[:, 1:]
    chroma = np.hypot(ab[:, 0], ab[:, 1])
    cos = (ab @ ref_ab.T) / np.maximum(chroma[:, None] * np.hypot(ref_ab[:, 0], ref_ab[:, 1])[None, :], 1e-9)
    angle = np.arccos(np.clip(cos, -1.0, 1.0))
    return np.minimum(0.5 * (angle * chroma[:, None] / HUE_SPREAD) ** 2, MAX_HUE_COST)


def log_likelihood(d2: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """Gaussian log-likelihood (up to a constant) of every sticker under every colour's own spread."""
    return -0.5 * d2 - np.log(spread).sum(axis=1)[None, :]


def colour_separation(refs: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """(6, 6) squared distance between every two colours' references in their pooled spreads."""
    var = spread[:, None, :] ** 2 + spread[None, :, :] ** 2
    d2 = ((refs[:, None, :] - refs[None, :, :]) ** 2 / var).sum(axis=2)
    d2[np.diag_indices(len(refs))] = np.inf
    return d2


def closest_colours(refs: np.ndarray, spread: np.ndarray) -> tuple[int, int, float]:
    """The two colours whose references lie closest in their pooled spreads, and that squared distance."""
    d2 = colour_separation(refs, spread)
    a, b = np.unravel_index(int(np.argmin(d2)), d2.shape)
    return int(a), int(b), float(d2[a, b])


def _spread(features: np.ndarray, refs: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(6, 3) robust scatter of each colour's stickers along each axis, measured on this cube.

    Colours differ in how tightly they repeat (a saturated white hardly
    varies, a red in shadow a lot), so one global spread either blurs two
    close colours together or makes a loose one look like outliers. Each
    colour's scale is its median absolute deviation, shrunk a little
    towards the median over colours (few stickers per colour on a 2x2), and
    never below what 8-bit quantisation leaves.
    """
    dev = np.abs(features - refs[labels])
    own = _medians(dev, labels) * MAD_TO_SIGMA
    pooled = small_median(own, axis=0)
    counts = np.bincount(labels, minlength=6)[:, None]
    var = (counts * own**2 + SPREAD_PRIOR * pooled**2) / (counts + SPREAD_PRIOR)
    return np.maximum(np.sqrt(var), MIN_SPREAD)


def colour_model(features: np.ndarray, labels: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(references, spreads) of a labelling measured on the stickers in ``keep`` only.

    A colour none of whose stickers is kept is measured on all of them.
    """
    keep = keep | ~np.isin(labels, labels[keep])
    refs = _medians(features[keep], labels[keep])
    return refs, _spread(features[keep], refs, labels[keep])


def distances(features: np.ndarray, refs: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """Squared standardised distance of every sticker to every reference, in that colour's spreads."""
    return (((features[:, None, :] - refs[None, :, :]) / spread[None, :, :]) ** 2).sum(axis=2)


def small_median(values: np.ndarray, axis: int = 0, keepdims: bool = False) -> np.ndarray:
    """``np.median`` for the few values per colour or face this module takes it of: a sort and the middle
    two: 4.5 against 12 us on a (6, 9) array, and it is called over a thousand times a doubtful scan."""
    ordered = np.sort(values, axis=axis)
    n = ordered.shape[axis]
    middle = (np.take(ordered, (n - 1) // 2, axis=axis) + np.take(ordered, n // 2, axis=axis)) / 2
    return np.expand_dims(middle, axis) if keepdims else middle


def _medians(values: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per colour, the median of the values given that colour (each colour must have some)."""
    counts = np.bincount(labels, minlength=6)
    if np.all(counts == counts[0]):  # a cube's labelling: one call instead of six
        order = np.argsort(labels, kind="stable")
        return small_median(values[order].reshape(6, counts[0], *values.shape[1:]), axis=1)
    return np.stack([small_median(values[labels == k], axis=0) for k in range(6)])


@cache
def _gain_fit(size: int) -> np.ndarray:
    """Matrix taking per-sticker log ratios of one face to its fitted plane (ridge on the slopes)."""
    step = np.linspace(-1.0, 1.0, size)
    rows, cols = np.meshgrid(step, step, indexing="ij")
    design = np.stack([np.ones(size * size), cols.ravel(), rows.ravel()], axis=1)
    ridge = np.diag([0.0, SLOPE_RIDGE[size], SLOPE_RIDGE[size]])
    return design @ np.linalg.solve(design.T @ design + ridge, design.T)


def _face_gains(
    linear: np.ndarray, labels: np.ndarray, size: int, clipped: np.ndarray, expected: np.ndarray | None = None
) -> np.ndarray:
    """Brightness gain of each sticker's spot: a plane in log luminance per face.

    Faces get different light (one lamp, two cameras) and light falls off
    across a face. One factor per spot rather than one per channel, and a
    smooth plane rather than free values, so a few stickers cannot bend a
    wrong labelling into a consistent one; a sticker far darker or brighter
    than the rest of its face (a shadowed or blacked-out sticker, glare)
    counts only as much as one moderately off. A sticker clipped in every
    channel (an overexposed white or cream) shows nothing of its face's
    light: it neither bends the plane nor is relit by it (gain 1), so two
    such colours keep the few levels that tell them apart. ``expected``:
    each colour's luminance (a calibration's); by default the median of
    its stickers.
    """
    y = luminance(linear)
    expected = (_medians(y, labels) if expected is None else expected)[labels]
    log_ratio = np.log(np.maximum(y, 1e-6) / np.maximum(expected, 1e-6)).reshape(6, size * size)
    clipped = clipped.reshape(6, size * size)
    typical = small_median(log_ratio, axis=1, keepdims=True)
    for face in np.flatnonzero(clipped.any(axis=1) & ~clipped.all(axis=1)):
        typical[face] = small_median(log_ratio[face, ~clipped[face]])
    log_ratio = np.where(clipped, typical, log_ratio)
    log_ratio = typical + np.clip(log_ratio - typical, -GAIN_OUTLIER_LOG, GAIN_OUTLIER_LOG)
    log_gain = np.clip(log_ratio @ _gain_fit(size).T, *np.log(FACE_GAIN_RANGE))
    gains = np.exp(log_gain - log_gain.mean())
    gains[clipped] = 1.0
    return gains.ravel()


class Reader:
    """One scan being read: normalised colours, references, the current best cube."""

    def __init__(self, rgb: np.ndarray, calibration: Calibration | None, relight: np.ndarray | None = None):
        self.size = 3 if len(rgb) == 54 else 2
        self.per_face = self.size**2
        self.calibration = calibration
        linear = srgb_to_linear(rgb)
        self.clipped = np.asarray(rgb).min(axis=1) >= SATURATED
        self.prior_linear: np.ndarray | None
        self.prior_spread: np.ndarray | None = None
        if calibration is not None:
            linear = calibration.flatten(linear)
            target = calibration.palette_linear.mean(axis=0)
            self.prior_linear = calibration.palette_linear
            if calibration.spread is not None:
                self.prior_spread = calibration.spread * np.array([LIGHTNESS_WEIGHT, 1.0, 1.0])
        else:
            target = srgb_to_linear(TYPICAL_STICKERS_SRGB).mean(axis=0)
            self.prior_linear = None
        self.linear0 = _white_balance(linear, target)
        if relight is not None:  # per face: its stickers as if lit that many times as brightly
            self.linear0 = self.linear0 * np.repeat(relight, self.per_face)[:, None]
        self.linear = self.linear0
        self.features = _features(self.linear)
        self.spread = np.full((6, 3), CHROMA_SIGMA)
        self.prior_match: np.ndarray | None = None  # prior palette row for each colour of the labelling matched
        self._matched: bytes | None = None  # that labelling

    def solve(self, refs: np.ndarray) -> tuple[Solution, np.ndarray, np.ndarray]:
        cost, d2 = costs(self.features, refs, self.spread)
        return best_cube(cost, self.size), cost, d2

    def update(self, labels: np.ndarray) -> np.ndarray:
        """New references (and face gains, spread) from a labelling."""
        gains = _face_gains(self.linear0, labels, self.size, self.clipped, self._expected(labels))
        self.linear = self.linear0 / gains[:, None]
        self.features = _features(self.linear)
        refs = _medians(self.features, labels)
        if self.prior_linear is not None:
            refs = self._with_prior(refs, labels)
        self.spread = _spread(self.features, refs, labels)
        if self.prior_spread is not None:  # a tighter split of two overlapping colours earns nothing
            self.spread = np.maximum(self.spread, SPREAD_FLOOR * self.prior_spread[self._palette_match(labels)])
        return refs

    def face_light(self, labels: np.ndarray) -> np.ndarray:
        """Each face's fitted brightness for a labelling, relative to the median face (1: lit like the rest).

        Clipped stickers, which keep their level (``_face_gains``), do not count.
        """
        gains = _face_gains(self.linear0, labels, self.size, self.clipped, self._expected(labels))
        log_gains = np.log(gains).reshape(6, self.per_face)
        shown = ~self.clipped.reshape(6, self.per_face)
        light = np.exp((log_gains * shown).sum(axis=1) / np.maximum(shown.sum(axis=1), 1))
        return light / small_median(light)

    def _expected(self, labels: np.ndarray) -> np.ndarray | None:
        """Each colour's luminance by the calibration, at the exposure seen now (None: no calibration).

        Where two colours sit only on two faces (red and orange on R and L),
        their stickers alone cannot tell a face's light from their colour;
        the calibration, which measured them on one solved cube, can.
        """
        if self.prior_linear is None:
            return None
        return luminance(self._calibrated(labels, self.linear0))

    def palette_drift(self, labels: np.ndarray) -> float:
        """How far a labelling's colours lie from the calibration: the largest distance in chromaticity
        (``_chromaticity``, percent of r and g) between a colour's median sticker and its calibrated colour.

        Chromaticity, because the brightness of each calibrated colour also
        holds the light of the face it was measured on, which a scrambled
        cube spreads over every face; white balance has taken out a global
        cast already, so what is left is light that changed in kind.
        """
        self.update(labels)
        seen = _chromaticity(_medians(self.linear, labels))
        calibrated = _chromaticity(self._calibrated(labels, self.linear))
        return float(np.max(np.linalg.norm(seen - calibrated, axis=1)))

    def _calibrated(self, labels: np.ndarray, linear: np.ndarray) -> np.ndarray:
        """The calibrated colour of each colour of a labelling, in linear light at the exposure seen now.

        Each colour of the scan is matched to the calibrated colour nearest
        in CIELAB (the cube may sit in any orientation, ``_palette_match``). The
        calibrated colours keep their lightness relative to each other (a
        dim red against an orange 1.35 times as light) and take one common
        exposure: the median over colours of the brightness now seen
        against the calibrated one.
        """
        assert self.prior_linear is not None
        seen = _medians(linear, labels)
        prior = self.prior_linear[self._palette_match(labels)]
        return prior * small_median(luminance(seen) / np.maximum(luminance(prior), 1e-6))

    def _palette_match(self, labels: np.ndarray) -> np.ndarray:
        """The calibrated colour nearest in CIELAB to each colour of this labelling (one each).

        A 2x2's colours are named by its DLB corner and the clusters around
        it, so two labellings may name them differently: each is matched
        again (matched once, a labelling that renames the colours was judged
        against the first one's names and cost far more than it does). A
        3x3's centres name its colours in every labelling, so it is matched
        once, on the first: matched again, two close colours (a dim red and
        orange) could trade calibrated colours along with their stickers.
        """
        assert self.prior_linear is not None
        if self._matched is None or (self.size == 2 and self._matched != labels.tobytes()):
            seen = _features(_medians(self.linear0, labels))
            d = ((seen[:, None, :] - _features(self.prior_linear)[None, :, :]) ** 2).sum(axis=2)
            self.prior_match, self._matched = assign(d)[1], labels.tobytes()
        assert self.prior_match is not None
        return self.prior_match

    def _with_prior(self, refs: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """References pulled towards the calibrated colours (``PRIOR_WEIGHT`` stickers' worth)."""
        prior = _features(self._calibrated(labels, self.linear))
        counts = np.bincount(labels, minlength=6)[:, None]
        return (refs * counts + prior * PRIOR_WEIGHT) / (counts + PRIOR_WEIGHT)

    def starts(self) -> Iterator[np.ndarray]:
        """Distinct starting labellings, each refined a little from a seeding of the references.

        Seeds are taken in two feature spaces: brightness-free chromaticity
        (faces lit very differently start right) and CIELAB (colours that
        differ mainly in lightness start apart). A 2x2 also has several
        seedings per space (its U, R and F colours are not known up front).
        The most promising start comes first; the caller settles as many as
        it needs, so one unlucky start cannot decide a doubtful reading.
        """
        seen: list[np.ndarray] = []
        for feature_fn, sigma in ((_chromaticity, CHROMA_SIGMA), (_features, LAB_START_SIGMA)):
            features = feature_fn(self.linear0)
            spread = np.full((6, features.shape[1]), sigma)

            def rough(refs, features=features, spread=spread, lab=feature_fn is _features):
                return best_cube(costs(features, refs, spread, lab)[0], self.size)

            seeds = self.seed_sets(features, feature_fn)
            tried = sorted((rough(refs).cost, i) for i, refs in enumerate(seeds))
            for _, i in tried[:ROUGH_REFINED]:
                labels = _refined(features, rough, seeds[i])
                if not any(np.array_equal(labels, other) for other in seen):
                    seen.append(labels)
                    yield labels

    def seed_sets(self, features: np.ndarray, feature_fn) -> list[np.ndarray]:
        """Candidate starting references: the centres (3x3); DLB corner plus U R F guesses (2x2)."""
        fixed = fixed_facelets(self.size)
        refs = np.zeros((6, features.shape[1]))
        for index, face in fixed.items():
            refs[face] = features[index]
        if self.size == 3:
            return [refs]
        return self._seed_opposites(features, feature_fn, refs, fixed)

    def _seed_opposites(
        self, features: np.ndarray, feature_fn, refs: np.ndarray, fixed: dict[int, int]
    ) -> list[np.ndarray]:
        """2x2: D, L, B come from the DLB corner; guesses for U, R, F (their opposites)."""
        known = [FACES.index(f) for f in "DLB"]
        if self.prior_linear is not None and self.calibration is not None:  # set together
            prior = feature_fn(self.prior_linear)
            d = ((refs[known][:, None, :] - prior[None, :, :]) ** 2).sum(axis=2)
            rows = assign(d)[1]
            for face, row in zip(known, rows):
                refs[FACES.index(OPPOSITE[FACES[face]])] = prior[self.calibration.opposite_colour(row)]
            return [refs]
        out = []
        for centres in _free_clusters(features, refs[known], fixed):
            trial = refs.copy()
            near = ((centres[:, None, :] - refs[known][None, :, :]) ** 2).sum(axis=2)
            for centre, k in enumerate(assign(near)[1]):
                trial[FACES.index(OPPOSITE[FACES[known[k]]])] = centres[centre]
            out.append(trial)
        return out


def _refined(features: np.ndarray, rough, refs: np.ndarray) -> np.ndarray:
    """A few rounds of labelling and medians from a seeding, in a start's own feature space."""
    labels = rough(refs).faces
    for _ in range(3):
        new = rough(_medians(features, labels)).faces
        if np.array_equal(labels, new):
            break
        labels = new
    return labels


def _free_clusters(features: np.ndarray, known: np.ndarray, fixed: dict[int, int]) -> list[np.ndarray]:
    """2x2: three more cluster centres, from farthest-first and from seeded random seedings.

    Each seeding is refined by balanced k-means: every colour takes exactly
    as many stickers as a cube shows of it, so an odd sticker (black
    plastic, a shadow) cannot become a cluster of its own and push two
    real colours into one.
    """
    free_index = [i for i in range(len(features)) if i not in fixed]
    free = features[free_index]
    rng = np.random.default_rng(0)  # the same input always reads the same
    results: list[np.ndarray] = []
    for attempt in range(CLUSTER_STARTS):
        centres = list(known)
        for _ in range(3):
            d = np.min([((free - c) ** 2).sum(axis=1) for c in centres], axis=0)
            if attempt == 0 or not d.sum() > 0:  # all stickers alike: nothing to sample by
                pick = int(np.argmax(d))
            else:
                pick = int(rng.choice(len(free), p=d / d.sum()))
            centres.append(free[pick])
        fitted = _balanced_kmeans(free, np.array(centres), len(known), len(features) // 6)
        if not any(np.allclose(fitted[len(known) :], r) for r in results):
            results.append(fitted[len(known) :])
    return results


def _balanced_kmeans(free: np.ndarray, centres: np.ndarray, known: int, per_colour: int) -> np.ndarray:
    """Centres after a few rounds of giving each colour its count of the free stickers (the first
    ``known`` centres stay, each owning one sticker already fixed elsewhere)."""
    slots = np.concatenate(
        [np.repeat(np.arange(known), per_colour - 1), np.repeat(np.arange(known, len(centres)), per_colour)]
    )
    for _ in range(4):
        d2 = ((free[:, None, :] - centres[None, slots, :]) ** 2).sum(axis=2)
        owner = slots[assign(d2)[1]]
        tail = free[np.argsort(owner, kind="stable")][known * (per_colour - 1) :]  # the free colours, in order
        centres[known:] = small_median(tail.reshape(len(centres) - known, per_colour, -1), axis=1)
    return centres
