"""``python -m vision``: classify sticker colours, scan photos, render synthetic views, calibrate.

    python -m vision classify --rgb FILE.json [--json] [--calibration CAL.json]
    python -m vision scan --faces U=u.png R=r.png F=f.png D=d.png L=l.png B=b.png \
        [--size N] [--json] [--overlay OUT.png]
    python -m vision scan --views RIG.toml --image ufr=a.png --image dlb=b.png [--json] [--overlay OUT.png]
    python -m vision render --state S --view RIG[:IMAGE] --light PRESET -o out.png [--seed N]
    python -m vision calibrate (--rgb FILE.json | --faces ... | --views RIG.toml --image ...) [-o CAL.json]

``calibrate --views RIG.toml`` keeps the palette next to the view config (``RIG.palette.json``),
and ``scan --views RIG.toml`` reads it by itself. Errors print one ``error: ...`` line and exit with
status 2. ``--overlay`` draws what the scan saw (``vision.overlay``), also for a scan that is refused
once the faces were found.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2
import numpy as np

from .calibration import Calibration, calibrate, colours_from_json, load_calibration
from .classify import classify
from .errors import ScanError
from .lighting import PRESETS
from .overlay import draw_overlay, encode_png
from .render import RIGS, default_views, render_views
from .sampling import sample_views
from .scan import locate_faces, scan_views
from .views import ViewConfig, load_view_config


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m vision", description="robotd cube scanner")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("classify", help="classify 54 (or 24) [r, g, b] sticker colours into a facelet string")
    p.add_argument(
        "--rgb",
        required=True,
        metavar="FILE.json",
        help="JSON list of [r, g, b] (0..255) in facelet order U R F D L B, or an object numbering the "
        'stickers "1".."54" face by face in the order U L F R B D (rubiks-color-resolver\'s layout)',
    )
    _common(p)
    p = sub.add_parser("scan", help="scan six face photos (automatic grid) or a rig's images (view config)")
    _image_inputs(p)
    _common(p)
    p.add_argument(
        "--overlay",
        metavar="OUT.png",
        help="also write a PNG of each face with its grid, the colours read, their confidences "
        "and the stickers in doubt (written for a refused scan too)",
    )
    p = sub.add_parser("render", help="draw a cube state as a rig's cameras see it")
    p.add_argument("--state", required=True, help="facelet string (54 or 24 letters)")
    p.add_argument(
        "--view",
        required=True,
        metavar="RIG[:IMAGE]",
        help=f"rig ({', '.join(RIGS)}), optionally one of its images, e.g. corners:ufr or phone:F",
    )
    p.add_argument("--light", default="daylight", choices=list(PRESETS))
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT.png",
        help="image file; for several images each is written as OUT_<image>.png",
    )
    p.add_argument("--seed", type=int, default=None, help="random seed (pose, noise, background)")
    p.add_argument("--blur", type=float, default=0.0, help="extra Gaussian blur in pixels")
    p.add_argument("--jpeg", type=int, default=None, metavar="QUALITY", help="add JPEG artefacts (1..100)")
    p.add_argument("--views-out", metavar="VIEWS.json", help="also write the rig's view config")
    p = sub.add_parser("calibrate", help="record a colour reference from a solved cube")
    p.add_argument("--rgb", metavar="FILE.json", help="sticker colours of the solved cube, as for classify")
    _image_inputs(p, required=False)
    p.add_argument("--no-positions", action="store_true", help="store per-colour references only")
    p.add_argument(
        "-o",
        "--output",
        metavar="CAL.json",
        help="where to write it (default with --views: the palette file next to the view config, "
        "RIG.palette.json, which `scan --views RIG.toml` then reads by itself)",
    )
    return parser


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the state, confidences and repaired stickers as JSON")
    p.add_argument(
        "--calibration",
        metavar="CAL.json",
        help="colour reference from `calibrate` (optional; with --views, RIG.palette.json next to it is read "
        "when it exists)",
    )


def _image_inputs(p: argparse.ArgumentParser, required: bool = True) -> None:
    p.add_argument("--faces", nargs="+", metavar="FACE=FILE", help="one photo per face, in net orientation")
    p.add_argument("--size", type=int, choices=(2, 3), help="puzzle size (default: from the photos)")
    p.add_argument("--views", metavar="RIG.toml", help="view config of a fixed-camera rig")
    p.add_argument(
        "--image", action="append", default=[], metavar="NAME=FILE", help="an image named in the view config (repeat)"
    )


def _pairs(items: list[str], what: str) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise ScanError(f"{what} must look like NAME=FILE, got {item!r}")
        if name in out:
            raise ScanError(f"{what} {name!r} given twice")
        out[name] = path
    return out


def _read_image(path: str) -> np.ndarray:
    image = cv2.imread(path, cv2.IMREAD_COLOR)
    if image is None:
        raise ScanError(f"cannot read image {path!r}")
    return image


def _read_rgb(path: str) -> np.ndarray:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise ScanError(f"cannot read sticker colours from {path}: {error}") from None
    try:
        return colours_from_json(data)
    except ScanError as error:
        raise ScanError(f"{path}: {error}") from None


def _images_and_views(args: argparse.Namespace) -> tuple[dict[str, np.ndarray], ViewConfig]:
    """The images and where each face is in them: found in the photos (--faces) or from the view config."""
    if args.faces and args.views:
        raise ScanError("give either --faces (photos) or --views with --image, not both")
    if args.faces:
        photos = {face.upper(): _read_image(path) for face, path in _pairs(args.faces, "--faces").items()}
        return photos, locate_faces(photos, args.size)
    if args.views:
        config = load_view_config(args.views)
        if args.size and args.size != config.size:
            raise ScanError(f"--size {args.size} but the view config is for size {config.size}")
        return {name: _read_image(path) for name, path in _pairs(args.image, "--image").items()}, config
    raise ScanError("nothing to scan: give --faces U=u.png ... or --views RIG.toml --image NAME=FILE ...")


def _scan(args: argparse.Namespace, calibration: Calibration | None) -> None:
    images, views = _images_and_views(args)
    try:
        result = scan_views(images, views, calibration)
    except ScanError as error:
        if args.overlay:  # the faces were found: show what was read of them
            _write_overlay(args.overlay, draw_overlay(images, views, error.reading, error.stickers))
            raise ScanError(f"{error} (overlay written to {args.overlay})") from None
        raise
    if args.overlay:
        _write_overlay(args.overlay, draw_overlay(images, views, result))
    _print_result(result, args.json)


def _write_overlay(path: str, image: np.ndarray) -> None:
    try:
        Path(path).write_bytes(encode_png(image))
    except OSError as error:
        raise ScanError(f"cannot write the overlay to {path}: {error.strerror}") from None


def _print_result(result, as_json: bool) -> None:
    print(json.dumps(result.as_dict()) if as_json else result.state)
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)


def _render(args: argparse.Namespace) -> None:
    rig, _, only = args.view.partition(":")
    rng = np.random.default_rng(args.seed)
    images = render_views(args.state, rig, args.light, rng, blur=args.blur, jpeg=args.jpeg)
    if only and only not in images:
        raise ScanError(f"rig {rig!r} has images {', '.join(images)}, not {only!r}")
    if only:
        images = {only: images[only]}
    out = Path(args.output)
    for name, image in images.items():
        target = out if len(images) == 1 else out.with_name(f"{out.stem}_{name}{out.suffix or '.png'}")
        if not cv2.imwrite(str(target), image):
            raise ScanError(f"cannot write {target}")
        print(target)
    if args.views_out:
        size = 3 if len(args.state) == 54 else 2
        default_views(rig, size).save(args.views_out)


def _run(args: argparse.Namespace) -> int:
    if args.command == "render":
        _render(args)
        return 0
    if args.command == "calibrate":
        output = args.output or (palette_path(args.views) if args.views else None)
        if output is None:
            raise ScanError("say where to write the calibration: -o CAL.json (or give --views)")
        colours = _read_rgb(args.rgb) if args.rgb else sample_views(*_images_and_views(args))
        calibrate(colours, per_position=not args.no_positions).save(output)
        print(output)
        return 0
    calibration = _calibration_for(args)
    if args.command == "scan":
        _scan(args, calibration)
    else:
        _print_result(classify(_read_rgb(args.rgb), calibration), args.json)
    return 0


def palette_path(views: str | Path) -> Path:
    """The palette file kept next to a view config: ``rig.toml`` -> ``rig.palette.json``."""
    views = Path(views)
    return views.with_name(f"{views.stem}.palette.json")


def _calibration_for(args: argparse.Namespace) -> Calibration | None:
    """``--calibration``, else with ``--views`` the palette kept next to the view config, else none."""
    if args.calibration:
        return load_calibration(args.calibration)
    views = getattr(args, "views", None)
    if views and palette_path(views).is_file():
        return load_calibration(palette_path(views))
    return None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except ScanError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
