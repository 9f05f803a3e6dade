"""robotd's vision: camera frames to sticker colours to a validated facelet string.

- ``scan_views(images, config)``: fixed-camera rigs, from a view config
  (``load_view_config``; ``vision.views`` documents the format);
- ``scan_photos({"U": img, ...})``: one photo per face, automatic grid detection;
- ``classify(rgb)``: 54 (24) sRGB triples in facelet order to a ``Classification``;
- ``calibrate`` / ``load_calibration``: a colour prior from a solved cube;
- ``render_views`` / ``default_views``: the synthetic camera (tests, simulator);
- ``draw_overlay``: what a scan saw, as one picture (grids, colours read, confidences, doubts).

Every problem with a scan raises ``ScanError``, whose message names the
stickers (face and position, e.g. ``F3``) and colours in doubt.
"""

from .calibration import Calibration, calibrate, load_calibration
from .classify import Classification, classify
from .errors import ScanError
from .grid import Grid, detect_grid
from .lighting import PRESETS
from .overlay import draw_overlay
from .render import RIGS, default_views, render_views, top_face_corners
from .sampling import sample_face, sample_views
from .scan import sample_photos, scan_photos, scan_views
from .views import FaceView, ViewConfig, load_view_config, view_config_from_dict

__all__ = [
    "Calibration",
    "Classification",
    "FaceView",
    "Grid",
    "PRESETS",
    "RIGS",
    "ScanError",
    "ViewConfig",
    "calibrate",
    "classify",
    "default_views",
    "detect_grid",
    "draw_overlay",
    "load_calibration",
    "load_view_config",
    "render_views",
    "sample_face",
    "sample_photos",
    "sample_views",
    "scan_photos",
    "scan_views",
    "top_face_corners",
    "view_config_from_dict",
]
