"""Searching for the best labelling: settle from a start, re-split overlapping colours, test the cube.

The piece solver (``vision.pieces``) finds the best reachable cube for given
references; references follow the labelling. Alternating the two settles
in a local optimum, so colours that drift together get re-split along each
direction they may differ in, and the best settled fit wins. ``cube_gap``
compares with the same colours labelled with the pieces ignored: a clean
scan costs the same, a face photo turned or swapped does not.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .assignment import assign
from .judge import CLEAR_FIT_D2, STRONG_REPAIR_LOGP
from .pieces import Solution, best_cube_without, fixed_facelets
from .reader import MAX_PASSES, Reader, closest_colours, colour_separation, costs, log_likelihood

MAX_SPLITS = 2  # overlapping colour pairs split again
RESPLIT_BELOW_D2 = 16.0  # pairs closer than this (in their pooled scatters) are split again
MAX_REFITS = 3  # rounds of forcing the least certain stickers and settling again
MAX_FLIPS = 6  # stickers forced per round
FLIP_BELOW = 6.0  # own evidence (log odds against the runner-up colour) below which a sticker is forced


def best_fit(reader: Reader) -> tuple[Fit, list[Fit]]:
    """The best-settled fit of a scan and every other distinct fit found on the way.

    The most promising start is settled first; a fit in which every sticker
    clearly shows the colour it is given and no two colours overlap is
    taken as it is (nothing is left for another start to decide). Otherwise
    fits are settled from every start, overlapping colours are split again
    and the least certain stickers are forced to their runner-up. The
    others let the caller see whether a different reading of the whole
    cube is nearly as good, which no single sticker's doubt reveals.
    """
    starts = reader.starts()
    first = settle(reader, next(starts))
    if is_clear(first):
        return first, []
    fits = [first] + [settle(reader, labels) for labels in starts]
    tried = set()
    for _ in range(MAX_SPLITS):
        best = min(fits, key=lambda f: f.solution.cost)
        pair = _merged_pair(best)
        if pair is None or pair in tried:
            break
        tried.add(pair)
        fits += [settle(reader, labels) for labels in _resplits(reader.features, best.solution.faces, pair)]
    for _ in range(MAX_REFITS):
        best = min(fits, key=lambda f: f.solution.cost)
        trials = [settle(reader, labels) for labels in _flipped(best)]
        fits += trials
        if not trials or min(t.solution.cost for t in trials) >= best.solution.cost - 1e-9:
            break
    fits.sort(key=lambda f: f.solution.cost)
    distinct = [fits[0]]
    for fit in fits[1:]:
        if not any(np.array_equal(fit.solution.faces, d.solution.faces) for d in distinct):
            distinct.append(fit)
    return distinct[0], distinct[1:]


def is_clear(fit: Fit) -> bool:
    """Every sticker shows its own colour clearly (centres aside) and no two colours overlap.

    Each sticker's colour is its cheapest one and beats the runner-up by
    ``FLIP_BELOW`` nats, so no labelling of these colours costs less at
    these references, pieces respected or not: the colours form a real
    cube (``cube_gap`` is 0). The extra starts, splits and refits are for
    doubtful readings.
    """
    fixed = list(fixed_facelets(fit.solution.size))
    cheapest = fit.cost.argmin(axis=1) == fit.solution.faces
    cheapest[fixed] = True
    return bool(cheapest.all()) and not _unsure(fit) and _merged_pair(fit) is None


@dataclass
class Fit:
    solution: Solution
    cost: np.ndarray
    d2: np.ndarray
    refs: np.ndarray
    spread: np.ndarray
    features: np.ndarray
    rivals: list = field(default_factory=list)  # other whole-cube readings nearly as good


def settle(reader: Reader, labels: np.ndarray) -> Fit:
    """Alternate references and the best cube from ``labels`` until the labels stop changing."""
    refs = reader.update(labels)
    for _ in range(MAX_PASSES):
        solution, cost, d2 = reader.solve(refs)
        if np.array_equal(solution.faces, labels):
            break
        labels = solution.faces
        refs = reader.update(labels)
    else:
        solution, cost, d2 = reader.solve(refs)
    return Fit(solution, cost, d2, refs, reader.spread, reader.features)


def cube_gap(reader: Reader, fit: Fit) -> float:
    """How much the best real cube costs above the best labelling with pieces ignored (centres kept).

    The free labelling gives each colour n^2 stickers and nothing else; both
    are judged by *its* colours, so a reachable reading that lumps unlike
    stickers into one colour (and so widens that colour until they fit)
    pays for it. This is a likelihood-ratio test of "these colours form a
    real cube": a clean scan costs the same either way, while a turned or
    swapped face photo clusters cleanly into six colours that no real cube
    shows. A sticker that clearly shows one colour of the free labelling
    (``CLEAR_FIT_D2``) but must be read as another, well apart from it
    (not an overlapping pair, whose split the free labelling may have got
    wrong), at odds of 90:1 or more (``STRONG_REPAIR_LOGP``), is a
    contradiction rather than a misread: the gap is then infinite.
    """
    labels = fit.solution.faces
    fixed = fixed_facelets(reader.size)
    free = np.array([i for i in range(len(labels)) if i not in fixed])
    slots = np.repeat(np.arange(6), reader.per_face)
    for face in fixed.values():
        slots = np.delete(slots, np.flatnonzero(slots == face)[0])
    everyone = np.arange(len(labels))
    for _ in range(MAX_PASSES):
        refs = reader.update(labels)
        cost, d2 = costs(reader.features, refs, reader.spread)
        columns = assign(cost[free][:, slots])[1]
        new = labels.copy()
        new[free] = slots[columns]
        if np.array_equal(new, labels):
            break
        labels = new
    reading = fit.solution.faces
    logp = log_likelihood(d2, reader.spread)
    against = logp[everyone, labels] - logp[everyone, reading]
    apart = colour_separation(refs, reader.spread)[labels, reading] >= RESPLIT_BELOW_D2
    if np.any(apart & (d2[everyone, labels] <= CLEAR_FIT_D2) & (against > STRONG_REPAIR_LOGP)):
        return float("inf")
    return float(cost[everyone, reading].sum() - cost[everyone, labels].sum())


def _flipped(fit: Fit) -> list[np.ndarray]:
    """Labellings in which one of the least certain stickers shows its runner-up colour.

    Each is the best cube with that sticker forced away from its colour, at
    the fit's references; settling it lets the references follow. A reading
    held in place only by references fitted to itself gives way here.
    """
    unsure = _unsure(fit)[:MAX_FLIPS]
    out: list[np.ndarray] = []
    for i in unsure:
        labels = best_cube_without(fit.cost, fit.solution, i).faces
        if not any(np.array_equal(labels, o) for o in out):
            out.append(labels)
    return out


def _unsure(fit: Fit) -> list[int]:
    """Stickers (centres aside) whose colour beats their runner-up by less than ``FLIP_BELOW``, least sure first."""
    logp = log_likelihood(fit.d2, fit.spread)
    own = logp[np.arange(len(logp)), fit.solution.faces]
    logp[np.arange(len(logp)), fit.solution.faces] = -np.inf
    margin = own - logp.max(axis=1)
    fixed = fixed_facelets(fit.solution.size)
    return [int(i) for i in np.argsort(margin) if int(i) not in fixed and margin[i] < FLIP_BELOW]


def _merged_pair(fit: Fit) -> tuple[int, int] | None:
    """The two colours that overlap most, if they overlap enough to be one colour read as two."""
    a, b, d2 = closest_colours(fit.refs, fit.spread)
    return (a, b) if d2 < RESPLIT_BELOW_D2 else None


def _resplits(features: np.ndarray, labels: np.ndarray, pair: tuple[int, int]) -> list[np.ndarray]:
    """Two overlapping colours' stickers split again, along each direction they might differ in.

    Two colours that drift together under warm or dim light (red and
    orange, white and yellow when overexposed) still differ along *some*
    direction: lightness for a dim red against orange, yellowness for a
    cream yellow against white. Each colour shows on the same number of
    stickers, so the union is cut in half along each feature axis and along
    its main axis of variation; the half nearer a colour's previous
    reference takes that colour. The caller keeps whichever settles best.
    """
    a, b = pair
    members = np.flatnonzero((labels == a) | (labels == b))
    x = features[members]
    scale = np.median(np.abs(x - np.median(x, axis=0)), axis=0) + 1e-6
    z = (x - np.median(x, axis=0)) / scale
    directions = list(np.eye(features.shape[1])) + [np.linalg.svd(z, full_matrices=False)[2][0]]
    ref_a = (np.median(features[labels == a], axis=0) - np.median(x, axis=0)) / scale
    out = []
    for direction in directions:
        order = np.argsort(z @ direction)
        low, high = members[order[: len(members) // 2]], members[order[len(members) // 2 :]]
        split = labels.copy()
        split[high], split[low] = (a, b) if ref_a @ direction > 0 else (b, a)
        out.append(split)
    return out
