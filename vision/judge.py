"""Confidence and doubt: when a classified scan can be trusted, and what to say when not.

Each sticker's own evidence is its colour probability against the six
references. Where that is not clear-cut, or the sticker fits no colour
well, the best cube in which it shows another colour is found
(``pieces.best_cube_without``); the cost difference is how firmly the
pieces around it pin the reading. A small difference makes the scan
ambiguous: ``ScanError`` then names every sticker that would change and the
colours competing for it. Two colour groups that look alike, many
stickers that fit no colour, or more than two stickers that the pieces
force against strong evidence of their own colour make the scan unusable
as a whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from solver.puzzles.cube.cubie import from_face_letters
from solver.puzzles.cube.geometry import FACES, sticker_name

from .errors import ScanError
from .pieces import Solution, best_cube_without, fixed_facelets
from .reader import closest_colours, colour_model, distances, log_likelihood

CHECK_BELOW = 0.995  # stickers whose own evidence is weaker than this are re-solved forced
MAX_CHECKS = 12
DOUBT_MARGIN = 2.0  # cost (negative log-likelihood) a competing reading must lose by
OUTLIER_D2 = 25.0  # squared distance to its colour, in sigmas: chi-square (3 dof) p < 2e-5
OUTLIER_MARGIN = 5.0  # a sticker that fits no colour is set by the stickers it forces to change, at 150:1 or more
MAX_OUTLIER_SHARE = 1 / 3  # more stickers than this fitting no colour: the scan itself is bad
STRONG_REPAIR_LOGP = 4.5  # own evidence at least e^4.5 (90:1) against the reading the pieces force
MAX_STRONG_REPAIRS = 0  # such a sticker that also fits its own colour well is a contradiction
# Stickers the pieces may read against their nearest colour. On a 2x2 (21 stickers free) a reading
# that needed three or more was wrong in 2 of 3 such stress-set readings (bench/vision_stress.py),
# one with two in 5 of 34; a 3x3's pieces pin each sticker from more sides, so it has no such limit.
MAX_REPAIRS = {2: 2, 3: 48}
CLEAR_FIT_D2 = 11.3  # fits its nearest colour well: chi-square (3 dof) p > 0.01
MIN_SEPARATION_D2 = 0.5  # references this close (in their pooled scatters) are one colour seen twice


@dataclass(frozen=True)
class Classification:
    """A classified scan: facelet string in face letters, a confidence per sticker (0..1).

    ``repaired`` names the stickers whose colour the cube's constraints set
    against their nearest reference (a misread the pieces corrected);
    ``turned`` maps a face whose image was turned to the quarter turns
    (clockwise) it was turned back by.
    """

    state: str
    confidence: np.ndarray
    repaired: tuple[str, ...] = ()
    turned: dict[str, int] = field(default_factory=dict)
    drift: float | None = None  # with a calibration: how far the colours seen lie from it (chromaticity)
    warnings: tuple[str, ...] = ()  # e.g. calibrate again

    @property
    def size(self) -> int:
        return 3 if len(self.state) == 54 else 2

    def as_dict(self) -> dict:
        return {
            "state": self.state,
            "confidence": [round(float(c), 4) for c in self.confidence],
            "min_confidence": round(float(self.confidence.min()), 4),
            "repaired": list(self.repaired),
            "turned": dict(self.turned),
            "drift": None if self.drift is None else round(self.drift, 2),
            "warnings": list(self.warnings),
        }


def judge(
    solution: Solution, cost: np.ndarray, d2: np.ndarray, refs: np.ndarray, spread: np.ndarray, features: np.ndarray
) -> Classification:
    """The final reading with confidences, or the ScanError for a scan that cannot be trusted.

    ``cost[sticker, face]``: the robust cost the cube was solved with;
    ``d2``: squared distances to the references, each in units of its colour's ``spread``;
    ``features``: the stickers' colours they were measured on.
    """
    size, labels = solution.size, solution.faces
    reading = plain_reading(solution, d2, spread)
    confidence, state = reading.confidence, reading.state
    repaired = d2.argmin(axis=1) != labels  # read against their nearest colour by the pieces
    repaired[list(fixed_facelets(size))] = False
    try:
        _check_doubts(solution, cost, d2, refs, spread, confidence)
        _check_repairs(labels, features, repaired, size)
    except ScanError as error:
        error.reading = Classification(state, confidence)
        raise
    from_face_letters(state)  # reachable by construction; a failure here is a bug, not a scan problem
    repaired = tuple(sticker_name(int(i), size) for i in np.flatnonzero(repaired))
    if len(repaired) > MAX_REPAIRS[size]:
        raise ScanError(
            f"the pieces had to override {len(repaired)} stickers ({', '.join(repaired)}) to make a "
            f"real {size}x{size}x{size}: too many to trust; check that each image shows the face it "
            "is named for, upright and evenly lit, and rescan",
            repaired,
            Classification(state, confidence),
        )
    return Classification(state, confidence, repaired)


def plain_reading(solution: Solution, d2: np.ndarray, spread: np.ndarray) -> Classification:
    """A solution as a reading, each sticker's confidence its own colour probability (nothing checked)."""
    logp = log_likelihood(d2, spread)
    local = np.exp(logp - logp.max(axis=1, keepdims=True))
    local /= local.sum(axis=1, keepdims=True)
    confidence = local[np.arange(len(solution.faces)), solution.faces].copy()
    for i in fixed_facelets(solution.size):
        confidence[i] = 1.0  # a centre (2x2: the DLB corner) names its face by definition
    return Classification("".join(FACES[f] for f in solution.faces), confidence)


def _check_doubts(
    solution: Solution, cost: np.ndarray, d2: np.ndarray, refs: np.ndarray, spread: np.ndarray, confidence: np.ndarray
) -> None:
    """Raise the ScanError for an untrustworthy reading; ``confidence`` is refined where checked."""
    size, labels = solution.size, solution.faces
    _check_colours_differ(refs, spread, labels, size)
    everyone = np.arange(len(labels))
    fit = d2[everyone, labels]
    fixed = fixed_facelets(size)
    _check_outliers([int(i) for i in everyone if i not in fixed and fit[i] > OUTLIER_D2], len(labels), size)
    doubts: dict[int, set[int]] = {}
    candidates = [
        i for i in np.argsort(confidence) if i not in fixed and (confidence[i] < CHECK_BELOW or fit[i] > OUTLIER_D2)
    ]
    for i in candidates[:MAX_CHECKS]:
        other = best_cube_without(cost, solution, int(i))
        margin = other.cost - solution.cost
        confidence[i] = 1.0 / (1.0 + np.exp(-margin))
        if margin < (OUTLIER_MARGIN if fit[i] > OUTLIER_D2 else DOUBT_MARGIN):
            for j in np.flatnonzero(other.faces != labels):
                doubts.setdefault(int(j), set()).update({int(labels[j]), int(other.faces[j])})
    if doubts:
        raise doubt_error(doubts, size)


def _check_colours_differ(refs: np.ndarray, spread: np.ndarray, labels: np.ndarray, size: int) -> None:
    """Two colour groups that look alike: the cube has fewer than six colours in view."""
    a, b, d2 = closest_colours(refs, spread)
    if d2 >= MIN_SEPARATION_D2:
        return
    names = tuple(sticker_name(int(i), size) for i in np.flatnonzero((labels == a) | (labels == b)))
    raise ScanError(
        f"the colours of faces {FACES[min(a, b)]} and {FACES[max(a, b)]} look the same "
        f"(stickers {', '.join(names)}): a cube shows six different colours; "
        "check the lighting and that every sticker is in view",
        names,
    )


def _check_repairs(labels: np.ndarray, features: np.ndarray, repaired: np.ndarray, size: int) -> None:
    """Stickers read against clear evidence of their own colour: a face seen wrongly, not misreads.

    A sticker that fits one colour well but has to be read as another is a
    contradiction, not a misread: a face photo turned or swapped, a grid
    found in the wrong place. Stickers that fit no colour well (glare,
    shadow) may be set by the pieces around them. Centres (the 2x2's DLB
    corner) name their colour by definition and are never evidence against it.
    The colours are measured again without the repaired stickers: a colour
    whose spread they inflate would otherwise seem to fit them.
    ``repaired``: the stickers (centres aside) read against their nearest colour.
    """
    fixed = list(fixed_facelets(size))
    if not repaired.any():
        return
    refs, spread = colour_model(features, labels, ~repaired)
    d2 = distances(features, refs, spread)
    logp = log_likelihood(d2, spread)
    everyone = np.arange(len(labels))
    against = logp.max(axis=1) - logp[everyone, labels]
    against[fixed] = 0.0
    clear = d2.min(axis=1) <= CLEAR_FIT_D2
    strong = np.flatnonzero((against > STRONG_REPAIR_LOGP) & clear)
    if len(strong) <= MAX_STRONG_REPAIRS:
        return
    nearest = logp.argmax(axis=1)
    parts = [f"{sticker_name(int(i), size)} looks {FACES[nearest[i]]} but only {FACES[labels[i]]} fits" for i in strong]
    raise ScanError(
        f"{len(strong)} stickers had to be read against their own colour ({', '.join(parts)}): "
        "too many for misreads; is every face in view and its grid found where it is?",
        tuple(sticker_name(int(i), size) for i in strong),
    )


def _check_outliers(outliers: list[int], count: int, size: int) -> None:
    if len(outliers) > MAX_OUTLIER_SHARE * count:
        names = tuple(sticker_name(i, size) for i in outliers)
        raise ScanError(
            f"{len(outliers)} stickers match none of the six colours well ({', '.join(names)}): "
            "is the whole cube in view, evenly lit and free of glare?",
            names,
        )


def doubt_error(doubts: dict[int, set[int]], size: int) -> ScanError:
    names = [sticker_name(i, size) for i in sorted(doubts)]
    parts = [
        f"{sticker_name(i, size)} could be {' or '.join(FACES[f] for f in sorted(faces, key=FACES.__getitem__))}"
        for i, faces in sorted(doubts.items())
    ]
    shown = ", ".join(parts[:12]) + (f" and {len(parts) - 12} more" if len(parts) > 12 else "")
    return ScanError(
        f"cannot read the cube for sure: {shown} (letters name the face whose centre colour is meant; "
        "these stickers' colours are too close to tell apart: rescan with more even light, or calibrate)",
        tuple(names),
    )
