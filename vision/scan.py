"""Full-cube scans: images in, a validated facelet string with confidences out."""

from __future__ import annotations

from collections import Counter

import numpy as np

from solver.puzzles.cube.geometry import FACES

from .calibration import Calibration
from .classify import Classification, classify
from .errors import ScanError
from .grid import detect_grid
from .sampling import sample_views
from .views import FaceView, ViewConfig


def scan_views(
    images: dict[str, np.ndarray], config: ViewConfig, calibration: Calibration | None = None
) -> Classification:
    """Scan a fixed-camera rig: sample each face where the view config says, classify the cube."""
    return classify(sample_views(images, config), calibration)


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
    """Scan six photos, one per face (keys U R F D L B), by automatic grid detection."""
    return scan_views(photos, locate_faces(photos, size), calibration)
