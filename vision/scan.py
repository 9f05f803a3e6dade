"""Full-cube scans: images in, a validated facelet string with confidences out."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from itertools import combinations

import numpy as np

from solver.puzzles.cube.geometry import FACES, sticker_name

from .calibration import Calibration
from .classify import Classification, classify, forms_a_cube, turn_face
from .errors import ScanError
from .exposure import at_one_exposure
from .grid import detect_grid, turn_in_doubt
from .sampling import sample_views
from .views import FaceView, ViewConfig


def scan_views(
    images: dict[str, np.ndarray],
    config: ViewConfig,
    calibration: Calibration | None = None,
    exposures: dict[str, float] | None = None,
) -> Classification:
    """Scan a fixed-camera rig: sample each face where the view config says, classify the cube.

    ``exposures``: the exposure each image was taken at, relative to the
    locked one, where a bracketed scan (``vision.exposure``) took some again.
    """
    rgb = sample_views(images, config)
    if exposures:
        rgb = at_one_exposure(rgb, config, exposures)
    return classify(rgb, calibration)


def locate_faces(photos: dict[str, np.ndarray], size: int | None = None) -> ViewConfig:
    """Find the sticker grid in six photos of one face each (keys U R F D L B, net orientation).

    The answer is a view config whose image names are the face letters, so a
    photo scan goes down the same path as a calibrated rig. With ``size``
    None the size is what most photos show, and photos that disagree are
    searched again for that size.
    """
    missing = [f for f in FACES if f not in photos]
    extra = sorted(set(photos) - set(FACES))
    if missing or extra:
        raise ScanError(
            "need one photo of each face U R F D L B; "
            + (f"missing {', '.join(missing)}" if missing else f"unknown face {extra[0]!r}")
        )
    grids = {f: detect_grid(photos[f], size, f"face {f}") for f in FACES}
    if size is None:
        counts = Counter(g.size for g in grids.values())
        size = max(counts, key=lambda s: (counts[s], s))
        grids.update({f: detect_grid(photos[f], size, f"face {f}") for f in FACES if grids[f].size != size})
    return ViewConfig(size, tuple(FaceView(f, f, grids[f].corners) for f in FACES))


def sample_photos(photos: dict[str, np.ndarray], size: int | None = None) -> np.ndarray:
    """(6 n^2, 3) RGB from six photos of one face each, by automatic grid detection."""
    return sample_views(photos, locate_faces(photos, size))


def scan_photos(
    photos: dict[str, np.ndarray], size: int | None = None, calibration: Calibration | None = None
) -> Classification:
    """Scan six photos, one per face (keys U R F D L B), by automatic grid detection.

    ``classify`` turns back one face whose photo was turned. Photos turned
    by about 45 degrees may have been taken turned either way: when the
    scan reads as no cube and two or more faces look that way, those faces
    are also read turned the other way, in every combination (``_read_turned``).
    """
    config = locate_faces(photos, size)
    rgb = sample_views(photos, config)
    try:
        return classify(rgb, calibration)
    except ScanError as error:
        doubt = {FACES.index(view.face): turn_in_doubt(view.corners) for view in config.views}
        doubt = {face: quarter for face, quarter in doubt.items() if quarter}
        if len(doubt) < 2:
            raise
        return _read_turned(rgb, calibration, doubt, error)


def _read_turned(
    rgb: np.ndarray, calibration: Calibration | None, doubt: dict[int, int], error: ScanError
) -> Classification:
    """The one cube that faces of doubtful orientation, turned the other way, read as; else ``error``.

    Every combination of two or more of them is tried (one face alone
    ``classify`` tries already). Different cubes from different
    combinations refuse the scan: which photo was turned which way cannot
    be told.
    """
    size = 3 if len(rgb) == 54 else 2
    found: list[Classification] = []
    for count in range(2, len(doubt) + 1):
        for faces in combinations(sorted(doubt), count):
            trial = rgb
            for face in faces:
                trial = turn_face(trial, size, face, doubt[face])
            if not forms_a_cube(trial, calibration):  # one quick read per combination; the few left in full
                continue
            try:
                reading = classify(trial, calibration)
            except ScanError:
                continue
            turned = dict(reading.turned)
            for face in faces:
                turned[FACES[face]] = (turned.get(FACES[face], 0) + doubt[face]) % 4
            found.append(replace(reading, turned={f: q for f, q in turned.items() if q}))
    if len({reading.state for reading in found}) == 1:
        return min(found, key=lambda reading: len(reading.turned))
    if found:
        names = " ".join(FACES[face] for face in sorted(doubt))
        raise ScanError(
            f"faces {names} are seen turned by about 45 degrees, and read turned one way or the other "
            "they make different real cubes: retake those photos with the face upright (net orientation)",
            tuple(sticker_name(face * size * size + k, size) for face in sorted(doubt) for k in range(size * size)),
        )
    raise error
