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
7. *Handedness*: a reading whose colours clearly run as the mirror image of
   the standard scheme (``vision.scheme``) is refused: face images swapped.
8. *Doubt*: ``vision.judge`` decides whether the reading can be trusted and
   names the stickers in doubt when it cannot.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import product

import numpy as np

from solver.puzzles.cube.geometry import FACES, OPPOSITE, sticker_name

from .calibration import Calibration, check_rgb
from .errors import ScanError
from .judge import DOUBT_MARGIN, Classification, doubt_error, judge, plain_reading
from .labelling import Fit, best_fit, cube_gap, is_clear
from .pieces import fixed_facelets
from .reader import SATURATED, Reader, features_to_lab
from .scheme import is_mirror_scheme

MAX_CUBE_GAP = 20.0  # nats the best real cube may cost above the same colours with pieces ignored
LIGHT_STEP = 2**0.5  # a face lit more than half a stop unlike the rest is read again with its light undone
LIGHT_DOUBT = 0.5  # confidence, at most, of a sticker whose reading changes with one face's light
TURN_MARGIN = 10.0  # nats by which one turned-back face must beat every other to be believed
MAX_DRIFT = 8.0  # chromaticity distance (percent of r, g) from the calibrated colour: the calibration is stale


def classify(rgb, calibration: Calibration | None = None) -> Classification:
    """Classify a whole cube's sticker colours into a valid facelet string.

    ``rgb``: 54 (3x3x3) or 24 (2x2x2) sRGB triples 0..255 in facelet order
    (U R F D L B, each face in net reading order). ``calibration``: an
    optional prior (``vision.calibration``), trusted while the colours lie
    within ``MAX_DRIFT`` of it (``drift``) and set aside, with a warning to
    calibrate again, beyond; its reading is checked against the reading
    without it (``_combined``). Raises
    ``ScanError`` for bad input or when the colours cannot be read for
    sure, naming the stickers in doubt and the colours competing for them.
    """
    rgb = check_rgb(rgb)
    if not np.all(np.isfinite(rgb)) or np.any((rgb < 0) | (rgb > 255)):
        bad = int(np.argwhere(~np.isfinite(rgb) | (rgb < 0) | (rgb > 255))[0, 0])
        raise ScanError(
            f"sticker {sticker_name(bad, 3 if len(rgb) == 54 else 2)} has colour "
            f"{rgb[bad].tolist()}: each value must be a number in 0..255"
        )
    if calibration is not None and calibration.size != (3 if len(rgb) == 54 else 2):
        raise ScanError(
            f"the calibration is for a {calibration.size}x{calibration.size}x{calibration.size} "
            f"but the scan has {len(rgb)} stickers"
        )
    if calibration is None:
        return _classified(rgb, None)
    return _combined(rgb, calibration)


def _classified(rgb: np.ndarray, calibration: Calibration | None) -> Classification:
    try:
        fit, gap = _read(rgb, calibration)
        if gap <= MAX_CUBE_GAP:
            _check_turned_faces(rgb, calibration, fit)
            return _light_checked(rgb, calibration, fit, gap, _judged(fit))
        return _turned_back(rgb, calibration, fit)
    except ScanError as error:
        raise _with_exposure_advice(error, rgb) from None


def _drift(rgb: np.ndarray, calibration: Calibration, state: str) -> float:
    return Reader(rgb, calibration).palette_drift(np.array([FACES.index(c) for c in state]))


def _drift_advice(drift: float) -> str:
    return (
        f"the colours seen differ from the colour calibration by up to {drift:.0f} points of chromaticity "
        f"(more than {MAX_DRIFT:.0f}): the light or the camera has changed since it was made; calibrate "
        "again with a solved cube"
    )


def _with_drift_advice(error: ScanError, drift: float | None) -> ScanError:
    """A refusal, told to calibrate again when its best reading's colours have drifted (``drift``) from the
    calibration."""
    if drift is None or drift <= MAX_DRIFT:
        return error
    return ScanError(f"{str(error).rstrip('.')}; {_drift_advice(drift)}", error.stickers, error.reading)


def _combined(rgb: np.ndarray, calibration: Calibration) -> Classification:
    """The scan read with the calibration, checked against the reading without it.

    The calibration decides: its refusal stands (told to calibrate again when
    its colours have drifted), because it is what tells red from orange by
    lightness where the plain reading cannot (a plain reading taken where the
    calibrated one refuses was wrong more often than right,
    bench/vision_lightness_pair.py). Its reading stands where the plain one
    reads the same cube, or refuses and the calibrated reading did not have
    to override most stickers of a face (``_check_face_fits_calibration``);
    where the plain one reads another cube,
    the scan is refused, naming the stickers they differ on: a calibration
    can be misled by light that changed since it was made (a face relit in
    another colour), and a reading it alone gives is then not to be trusted.
    Beyond ``MAX_DRIFT`` the calibration is stale: the reading returned is
    the plain one, warned to calibrate again.
    """
    calibrated = _attempt(rgb, calibration)
    if isinstance(calibrated, ScanError):
        drift = None if calibrated.reading is None else _drift(rgb, calibration, calibrated.reading.state)
        raise _with_drift_advice(calibrated, drift)
    drift = _drift(rgb, calibration, calibrated.state)
    plain = _attempt(rgb, None)
    if isinstance(plain, ScanError):
        if drift > MAX_DRIFT:
            raise ScanError(f"{_drift_advice(drift)}; without it: {plain}", plain.stickers, calibrated)
        _check_face_fits_calibration(calibrated, plain)
        return replace(calibrated, drift=drift)
    if plain.state != calibrated.state:
        size = 3 if len(rgb) == 54 else 2
        differ = tuple(sticker_name(i, size) for i, (a, b) in enumerate(zip(plain.state, calibrated.state)) if a != b)
        advice = _drift_advice(drift) if drift > MAX_DRIFT else "the light may have changed since it was made"
        raise ScanError(
            f"with and without the colour calibration the cube reads differently at {', '.join(differ)}: "
            f"{advice}; rescan with even light, or calibrate again",
            differ,
            calibrated,
        )
    return _with_drift(rgb, calibration, plain, drift) if drift > MAX_DRIFT else replace(calibrated, drift=drift)


def _check_face_fits_calibration(calibrated: Classification, plain: ScanError) -> None:
    """Refuse a calibrated reading that overrides most stickers of one face, where the plain reading refuses.

    A repair (a sticker read against its nearest colour, ``judge``) is a
    misread the pieces correct. Most of one face repaired says instead that
    the calibrated colours do not describe that face's light (lit in
    another colour since the calibration was made: a warm lamp turns its
    orange stickers red); with no reading of the scan alone to confirm it,
    such a reading is not to be trusted.
    """
    size = calibrated.size
    for face in FACES:
        repaired = [name for name in calibrated.repaired if name[0] == face]
        if len(repaired) > size * size / 2:
            raise ScanError(
                f"with the colour calibration most stickers of face {face} ({', '.join(repaired)}) had to be "
                f"read against their nearest colour, and without it: {plain}. The light on face {face} may "
                "have changed since the calibration was made: rescan with even light, or calibrate again",
                tuple(repaired),
                calibrated,
            )


def _attempt(rgb: np.ndarray, calibration: Calibration | None) -> Classification | ScanError:
    try:
        return _classified(rgb, calibration)
    except ScanError as error:
        return error


def _with_drift(
    rgb: np.ndarray, calibration: Calibration, plain: Classification, drift: float | None = None
) -> Classification:
    """A reading made without the calibration, with how far its colours lie from it, warned beyond ``MAX_DRIFT``."""
    drift = _drift(rgb, calibration, plain.state) if drift is None else drift
    if drift <= MAX_DRIFT:
        return replace(plain, drift=drift)
    return replace(
        plain, drift=drift, warnings=(*plain.warnings, f"{_drift_advice(drift)}; this scan was read without it")
    )


def forms_a_cube(rgb, calibration: Calibration | None = None) -> bool:
    """Whether the colours as given read as a real cube (``MAX_CUBE_GAP``), without turning any face
    back or judging doubt: a quick first test of a candidate, which ``classify`` then reads in full."""
    return _read(check_rgb(rgb), calibration)[1] <= MAX_CUBE_GAP


def _with_exposure_advice(error: ScanError, rgb: np.ndarray) -> ScanError:
    """The error, told that the picture is overexposed when most stickers in doubt are nearly saturated.

    Clipped channels flatten the small difference between white and a
    cream yellow (two or three levels of 255 are all that is left); more
    light or another reading cannot bring it back, less exposure can.
    """
    size = 3 if len(rgb) == 54 else 2
    index = {sticker_name(i, size): i for i in range(len(rgb))}
    doubted = [index[name] for name in error.stickers if name in index]
    if not doubted or np.mean(rgb[doubted].max(axis=1) >= SATURATED) < 0.5:
        return error
    return ScanError(
        f"{str(error).rstrip('.')}. The stickers in doubt are nearly saturated "
        f"(a channel at {SATURATED:.0f} or more of 255): the picture is overexposed, which hides "
        "the difference between white and yellow; lower the camera's exposure or the light.",
        error.stickers,
        error.reading,
    )


def _read(rgb: np.ndarray, calibration: Calibration | None, relight: np.ndarray | None = None) -> tuple[Fit, float]:
    """The best fit of a scan and how much worse it is than the same colours with pieces ignored
    (``relight``: a brightness factor per face, applied to the colours first)."""
    reader = Reader(rgb, calibration, relight)
    fit, others = best_fit(reader)
    fit.rivals = [o for o in others if o.solution.cost - fit.solution.cost < DOUBT_MARGIN]
    if is_clear(fit):
        return fit, 0.0
    return fit, cube_gap(reader, fit)


def _light_checked(
    rgb: np.ndarray, calibration: Calibration | None, fit: Fit, gap: float, reading: Classification
) -> Classification:
    """The reading, with every sticker that changes once a face's light is undone marked in doubt.

    Each face's brightness is fitted along with the colours (``Reader``),
    and where two colours differ mainly in lightness (red and orange) and
    sit mostly on the faces lit unlike the rest, the fit can trade a face's
    light for its labels: a brighter face with more orange explains the
    stickers as well as a face lit like the others. The cost margins of
    one reading then overstate how sure it is. So each face found lit more
    than half a stop (``LIGHT_STEP``) unlike the median face is read again
    with its light undone in the colours given; a sticker that reading
    shows differently, when it forms a real cube at least as well (its
    ``gap`` no larger), gets confidence ``LIGHT_DOUBT`` at most. A clear
    fit (``is_clear``) leaves nothing to trade.
    """
    if is_clear(fit):
        return reading
    light = Reader(rgb, calibration).face_light(fit.solution.faces)
    changed = np.zeros(len(rgb), dtype=bool)
    for face in np.flatnonzero(np.abs(np.log2(light)) > np.log2(LIGHT_STEP)):
        undone = np.ones(6)
        undone[face] = 1.0 / light[face]
        other, other_gap = _read(rgb, calibration, undone)
        if other_gap <= gap + 1e-9:
            changed |= other.solution.faces != fit.solution.faces
    confidence = reading.confidence.copy()
    confidence[changed] = np.minimum(confidence[changed], LIGHT_DOUBT)
    return replace(reading, confidence=confidence)


def _judged(fit: Fit) -> Classification:
    """The fit's reading with confidences, refused when another whole-cube reading is nearly as good."""
    if fit.rivals:
        doubts: dict[int, set[int]] = {}
        for rival in fit.rivals:
            for i in np.flatnonzero(rival.solution.faces != fit.solution.faces):
                doubts.setdefault(int(i), set()).update({int(fit.solution.faces[i]), int(rival.solution.faces[i])})
        error = doubt_error(doubts, fit.solution.size)
        error.reading = plain_reading(fit.solution, fit.d2, fit.spread)
        raise error
    if is_mirror_scheme(features_to_lab(fit.refs)):
        raise ScanError(
            "the colours read form the mirror image of the standard colour scheme (with white up "
            "and green in front, red shows on the left): no real cube looks like this, so two face "
            "images are probably swapped (e.g. R with L) or an image is mirrored. Check that each "
            "image shows the face it is named for, upright, and rescan",
            reading=plain_reading(fit.solution, fit.d2, fit.spread),
        )
    return judge(fit.solution, fit.cost, fit.d2, fit.refs, fit.spread, fit.features)


def _turned_back(rgb: np.ndarray, calibration: Calibration | None, given: Fit) -> Classification:
    """A scan whose colours form no real cube: find the one face that, turned back, makes one.

    A face image turned by a quarter or half turn (a handheld photo, a flip
    rig presenting a face turned) keeps its colours but not their places.
    Every face and turn is tried; exactly one that reads as a real cube is
    taken and reported in ``turned``. None, or several, is refused; when
    none fits and another reading of the scan as it is comes close to
    ``given`` (its best), the stickers in doubt are named instead.
    """
    size = 3 if len(rgb) == 54 else 2
    fits = []
    for face, quarter in product(range(6), (1, 2, 3)):
        fit, gap = _read(turn_face(rgb, size, face, quarter), calibration)
        if gap <= MAX_CUBE_GAP:
            fits.append((fit.solution.cost, FACES[face], quarter, fit, gap))
    fits.sort(key=lambda f: f[0])
    if len(fits) == 1 or (len(fits) > 1 and fits[1][0] - fits[0][0] > TURN_MARGIN):
        _, turned_face, quarter, fit, gap = fits[0]
        reading = _judged(fit)
        if reading.repaired and given.solution.cost - fit.solution.cost < TURN_MARGIN:
            raise ScanError(
                "the colours read form no real cube as the faces were given; "
                f"face {turned_face} turned back by {90 * quarter} degrees makes one only with stickers "
                f"{', '.join(reading.repaired)} read "
                "against their own colour, and explains the colours hardly better: a face is probably "
                "lit differently rather than turned. Check that each image shows the face it is named "
                "for, upright and evenly lit, and rescan",
                reading.repaired,
            )
        turned_rgb = turn_face(rgb, size, FACES.index(turned_face), quarter)
        return replace(_light_checked(turned_rgb, calibration, fit, gap, reading), turned={turned_face: quarter})
    if fits:
        options = ", ".join(f"face {f} turned {90 * q} degrees" for _, f, q, _, _ in fits[:4])
        raise ScanError(
            f"the colours read form no real cube as the faces were given, and more than one "
            f"face turned back would make one ({options}): check each face's image is "
            "upright (net orientation) and rescan"
        )
    if given.rivals:
        _judged(given)  # raises, naming the stickers two readings disagree on
    raise ScanError(
        "the colours read form no real cube: no single face turned back makes one either; "
        "is a face image swapped with another, mirrored, or its grid found in the wrong "
        "place? Check that each image shows the face it is named for, upright"
    )


def _check_turned_faces(rgb: np.ndarray, calibration: Calibration | None, fit: Fit) -> None:
    """2x2: refuse a doubtful reading when a face turned back reads as another, cheaper real cube.

    A 2x2 has no centres to show how a face image is turned, and a turned
    face often still reads as a real cube, with a repair or two; a D, L or B
    face turned also brings another sticker into the DLB corner, which names
    the colours, and can rename them into another real cube that passes
    every other test. A clear reading (every sticker its own colour by a
    margin) is left alone; for the others each turn that changes what the
    stickers show (and, for D, L and B, keeps a plausible DLB corner: the
    sticker brought there shows that face's colour or its opposite's) is
    read afresh. A different real cube that costs less refuses the scan.
    """
    if fit.solution.size != 2 or is_clear(fit):
        return
    labels = fit.solution.faces
    corners = {face: i for i, face in fixed_facelets(2).items()}
    cheaper = []
    for face, quarter in product(range(6), (1, 2, 3)):
        order = turn_face(np.arange(24), 2, face, quarter)
        opposite = FACES.index(OPPOSITE[FACES[face]])
        if np.array_equal(labels[order], labels) or (
            face in corners and labels[order[corners[face]]] not in (face, opposite)
        ):
            continue
        turned, gap = _read(turn_face(rgb, 2, face, quarter), calibration)
        if (
            gap <= MAX_CUBE_GAP
            and turned.solution.cost < fit.solution.cost
            and not np.array_equal(turned.solution.faces, labels)
        ):
            cheaper.append((turned.solution.cost, face, quarter))
    if cheaper:
        _, face, quarter = min(cheaper)
        raise ScanError(
            f"face {FACES[face]} may be turned: turned by {90 * quarter} degrees it reads as another "
            "real cube, better than as it was given, and on a 2x2 the pieces cannot tell which is "
            "meant. Check that each image is upright (net orientation) and rescan",
            tuple(sticker_name(face * 4 + k, 2) for k in range(4)),
        )


def turn_face(values: np.ndarray, size: int, face: int, quarter: int) -> np.ndarray:
    """Per-sticker values (colours, or sticker indices) with one face turned clockwise by ``quarter``
    quarter turns, as an image would be."""
    out = values.copy()
    block = slice(face * size * size, (face + 1) * size * size)
    face_values = values[block].reshape(size, size, *values.shape[1:])
    out[block] = np.rot90(face_values, -quarter).reshape(values[block].shape)
    return out
