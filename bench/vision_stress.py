"""Stress set of the scanner: is it ever wrong with confidence? Prints one JSON object.

    python bench/vision_stress.py [--quick] [--devset PATH] [--renders N] [--seed S] [--confident C]
                                  [--verbose] [--jobs N] [--palette] [--cases PATH] [--sources A,B]

``--jobs N`` runs N worker processes, each taking whole sources (seeded per
source), so the verdicts do not depend on N.

Sources (``source_kinds``):

- ``devset-photos``: the 7 photo sets of the real dev set (``--devset``,
  default ../shared/vision-devset, read where it lies, never copied);
- ``devset-rgb``: its 4 RGB scans (colour-level kinds only);
- ``render``: ``--renders`` seeded one-face renders of random cubes, both
  sizes in turn, at handheld poses (rotation within +-20 degrees, the face
  filling 45-90% of the frame, tilt up to 15 degrees; ``render_face_photo``)
  under the lighting presets in turn, so the true face corners are known.

Kinds, each applied to a clean source (``none`` is the source as it is):

- ``turned``: one face's photo turned by 90, 180 or 270 degrees (``np.rot90``,
  counter-clockwise k quarter turns); for RGB scans the face's stickers
  permuted the same way;
- ``swapped``: the photos (RGB blocks) of two faces exchanged;
- ``relit``: one face re-shot under other light: a per-channel gain in linear
  RGB then a gamma on the encoded values (``RELIGHTS``);
- ``white-balance``: all photos as if lit by a black body of 2500..7500 K with
  the camera's white balance fixed for 5500 K (``kelvin_gains``);
- ``blur``: Gaussian blur of all photos, sigma in pixels of a 480-pixel-high
  frame (scaled with the photo's shorter side);
- ``jpeg``: all photos re-encoded at JPEG quality 10, 20, 40;
- ``occluded``: a skin-coloured or dark blob (a fingertip, a gripper) covering
  30-60% of one sticker's area, placed through the face's corners (known for
  renders, found by ``detect_grid`` on the clean dev photo; a dev face whose
  grid is not found is skipped and listed under ``skipped``).

The truth of every case is the clean cube. A turned or swapped photo is
labelled wrongly, so the only acceptable answers there are a refusal or the
clean cube itself (recognised and put back). Verdicts (bench/vision_cases.py):
right, right-flagged (some sticker below ``--confident``), refused,
wrong-flagged (every differing sticker below ``--confident``) and wrong (a
differing sticker read confidently). The product's target: ``wrong`` = 0.
``named_suspect`` counts the refusals and flags that point at the perturbed
part (name one of its stickers, or say ``face X`` of its face). A wrong
turned or swapped case says whether the mislabelled stickers happen to show
a legal cube (``shown_is_a_legal_cube``: then colours alone cannot tell it
from the truth) and whether that cube is what came back.

``--palette`` reads every case with a colour calibration of its source's
rig: for a render, a solved cube rendered under the same light preset at
poses drawn the same way (its own seed, so the cases are the same as
without); for a dev item, whose robot's solved-cube scan is not in the dev
set, its own clean colours grouped as the scanner reads them
(``reading_calibration``; never from the answer; none where the clean item
is not read as given).

``--quick`` keeps a seeded subset of each kind (the extremes of white balance,
blur and JPEG) and 2 renders: one to two minutes on 2 cores. The full run
(about 2,000 cases) takes 10-15 minutes there, depending on how long the
scanner spends on the cases it refuses.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.vision_cases import (  # noqa: E402
    CONFIDENT,
    DEFAULT_DEVSET,
    VERDICTS,
    judge,
    load_devset,
    random_face_states,
    reading_calibration,
    tally,
)
from solver import InvalidState  # noqa: E402
from solver.puzzles.cube.cubie import from_facelets  # noqa: E402
from solver.puzzles.cube.facelets import to_face_letters  # noqa: E402
from solver.puzzles.cube.geometry import FACES, sticker_name  # noqa: E402
from vision import PRESETS, Calibration, ScanError, calibrate, classify, detect_grid, sample_photos, scan_photos  # noqa: E402
from vision.lighting import recolour, recolour_image  # noqa: E402
from vision.render import face_photo_corners, render_face_photo  # noqa: E402

KELVINS = (2500, 3500, 4500, 5500, 6500, 7500)
REFERENCE_KELVIN = 5500
RELIGHTS = {  # name: (linear gain R, G, B; gamma on the encoded values)
    "warm": ((1.0, 0.72, 0.42), 1.0),
    "cool": ((0.68, 0.9, 1.18), 1.0),
    "dark": ((0.3, 0.3, 0.3), 1.15),
    "bright": ((2.2, 2.2, 2.2), 0.9),
}
BLURS = (1.0, 2.5, 5.0)
JPEGS = (10, 20, 40)
SKIN = (224, 172, 140)  # sRGB
DARK = (40, 34, 30)
STICKER_SHARE = 0.86  # a sticker's side as a share of its cell (the renderer's, near a real cube's)
QUICK = {"turned": 3, "swapped": 2, "relit": 3, "occluded": 2}
QUICK_VALUES = {"white-balance": (2500, 7500), "blur": (5.0,), "jpeg": (10,)}


# ---------------------------------------------------------------- colour


def _planck_xyz(kelvin: float) -> np.ndarray:
    """CIE XYZ of a black body (Planck's law, 360-830 nm in 1 nm steps).

    Colour matching functions: the multi-lobe piecewise-Gaussian fit of the
    CIE 1931 2-degree observer by Wyman, Sloan and Shirley, "Simple Analytic
    Approximations to the CIE XYZ Color Matching Functions", JCGT 2(2), 2013
    (their equation 2 and table 1). It puts the black body at 2500 K at
    x, y = 0.4755, 0.4151 (tabulated Planckian locus: 0.4770, 0.4137).
    """
    lam = np.arange(360.0, 831.0)

    def lobe(mu, low, high):
        return np.exp(-0.5 * ((lam - mu) / np.where(lam < mu, low, high)) ** 2)

    x = 1.056 * lobe(599.8, 37.9, 31.0) + 0.362 * lobe(442.0, 16.0, 26.7) - 0.065 * lobe(501.1, 20.4, 26.2)
    y = 0.821 * lobe(568.8, 46.9, 40.5) + 0.286 * lobe(530.9, 16.3, 31.1)
    z = 1.217 * lobe(437.0, 11.8, 36.0) + 0.681 * lobe(459.0, 26.0, 13.8)
    radiance = lam**-5.0 / np.expm1(1.4388e7 / (lam * kelvin))  # c2 = hc/k = 1.4388e-2 m K, in nm K
    return np.array([(radiance * x).sum(), (radiance * y).sum(), (radiance * z).sum()])


XYZ_TO_LINEAR_SRGB = np.array(
    [
        [3.2406, -1.5372, -0.4986],  # IEC 61966-2-1 (sRGB), D65
        [-0.9689, 1.8758, 0.0415],
        [0.0557, -0.2040, 1.0570],
    ]
)


def kelvin_gains(kelvin: float, reference: float = REFERENCE_KELVIN) -> np.ndarray:
    """Von Kries gains (linear R, G, B) of a black-body light of ``kelvin`` seen by a camera balanced for
    ``reference``: the illuminant's linear sRGB over the reference's, each at equal luminance (Y)."""

    def white(t: float) -> np.ndarray:
        xyz = _planck_xyz(t)
        return XYZ_TO_LINEAR_SRGB @ (xyz / xyz[1])

    return white(kelvin) / white(reference)


# ---------------------------------------------------------------- perturbations


def _scale(image: np.ndarray) -> float:
    return min(image.shape[:2]) / 480.0


def occlude(
    image: np.ndarray, corners: np.ndarray, n: int, cell: int, colour, coverage: float, rng: np.random.Generator
) -> np.ndarray:
    """A soft elliptic blob of ``colour`` (sRGB) over ``coverage`` of sticker ``cell``'s area (reading order)."""
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    to_image = cv2.getPerspectiveTransform(square, np.asarray(corners, np.float32))
    area = coverage * (STICKER_SHARE / n) ** 2
    ratio = rng.uniform(0.6, 1.0)
    a = np.sqrt(area / (np.pi * ratio))
    angle, t = rng.uniform(0, np.pi), np.linspace(0, 2 * np.pi, 48, endpoint=False)
    turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    centre = (np.array([cell % n, cell // n]) + 0.5) / n + rng.uniform(-0.12, 0.12, 2) / n
    outline = centre + np.stack([a * np.cos(t), a * ratio * np.sin(t)], axis=1) @ turn.T
    points = cv2.perspectiveTransform(outline[None].astype(np.float32), to_image)[0]
    mask = np.zeros(image.shape[:2], np.float32)
    cv2.fillPoly(mask, [np.round(points * 16).astype(np.int32)], 1.0, lineType=cv2.LINE_AA, shift=4)
    mask = cv2.GaussianBlur(mask, (0, 0), 0.8 * _scale(image))[:, :, None]
    paint = np.array(colour[::-1], np.float32) * rng.uniform(0.9, 1.1)
    paint = paint + rng.normal(0, 3, image.shape).astype(np.float32)
    return np.clip(image * (1 - mask) + paint * mask, 0, 255).astype(np.uint8)


def face_stickers(face: str, n: int) -> tuple[str, ...]:
    k = FACES.index(face)
    return tuple(sticker_name(k * n * n + i, n) for i in range(n * n))


@dataclass
class Source:
    name: str
    kind: str  # devset-photos | devset-rgb | render
    size: int
    truth: str
    photos: dict | None = None
    corners: dict = field(default_factory=dict)  # face -> true or clean-detected corners (photos only)
    rgb: np.ndarray | None = None
    calibration: Calibration | None = None


@dataclass
class Case:
    kind: str
    params: dict
    suspect: tuple[str, ...] = ()


def plan_cases(source: Source, rng: np.random.Generator, quick: bool) -> list[Case]:
    """Every case of a source (a seeded subset with ``quick``)."""
    n = source.size
    kinds: dict[str, list[Case]] = {"none": [Case("none", {})]}
    kinds["turned"] = [
        Case("turned", {"face": f, "quarter_turns_ccw": k}, face_stickers(f, n)) for f in FACES for k in (1, 2, 3)
    ]
    kinds["swapped"] = [
        Case("swapped", {"faces": a + b}, face_stickers(a, n) + face_stickers(b, n)) for a, b in combinations(FACES, 2)
    ]
    kinds["relit"] = [
        Case("relit", {"face": f, "light": name}, face_stickers(f, n)) for f in FACES for name in RELIGHTS
    ]
    kinds["white-balance"] = [Case("white-balance", {"kelvin": k}) for k in KELVINS]
    if source.photos is not None:
        kinds["blur"] = [Case("blur", {"sigma_px_at_480": s}) for s in BLURS]
        kinds["jpeg"] = [Case("jpeg", {"quality": q}) for q in JPEGS]
        kinds["occluded"] = []
        for k, face in enumerate(FACES):
            cell = int(rng.integers(n * n))
            kinds["occluded"].append(
                Case(
                    "occluded",
                    {
                        "face": face,
                        "sticker": sticker_name(FACES.index(face) * n * n + cell, n),
                        "blob": ("skin", "dark")[k % 2],
                        "coverage": round(float(rng.uniform(0.3, 0.6)), 2),
                    },
                    (sticker_name(FACES.index(face) * n * n + cell, n),),
                )
            )
    if quick:
        for kind, cases in kinds.items():
            if kind in QUICK:
                keep = sorted(rng.choice(len(cases), min(QUICK[kind], len(cases)), replace=False))
                kinds[kind] = [cases[i] for i in keep]
            elif kind in QUICK_VALUES:
                kinds[kind] = [c for c in cases if next(iter(c.params.values())) in QUICK_VALUES[kind]]
    return [case for cases in kinds.values() for case in cases]


def perturb_photos(source: Source, case: Case, rng: np.random.Generator) -> dict | None:
    """The six photos of a case, or None when it cannot be built (an occluded face without corners)."""
    photos = dict(source.photos)
    p = case.params
    if case.kind == "turned":
        photos[p["face"]] = np.ascontiguousarray(np.rot90(photos[p["face"]], p["quarter_turns_ccw"]))
    elif case.kind == "swapped":
        a, b = p["faces"]
        photos[a], photos[b] = photos[b], photos[a]
    elif case.kind == "relit":
        photos[p["face"]] = recolour_image(photos[p["face"]], *RELIGHTS[p["light"]])
    elif case.kind == "white-balance":
        gain = kelvin_gains(p["kelvin"])
        photos = {f: recolour_image(img, gain) for f, img in photos.items()}
    elif case.kind == "blur":
        photos = {f: cv2.GaussianBlur(img, (0, 0), p["sigma_px_at_480"] * _scale(img)) for f, img in photos.items()}
    elif case.kind == "jpeg":
        photos = {
            f: cv2.imdecode(cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, p["quality"]])[1], cv2.IMREAD_COLOR)
            for f, img in photos.items()
        }
    elif case.kind == "occluded":
        face = p["face"]
        if source.corners.get(face) is None:
            return None
        cell = int(p["sticker"][1:]) - 1
        photos[face] = occlude(
            photos[face],
            source.corners[face],
            source.size,
            cell,
            SKIN if p["blob"] == "skin" else DARK,
            p["coverage"],
            rng,
        )
    return photos


def _block(face: str, n: int) -> slice:
    return slice(FACES.index(face) * n * n, (FACES.index(face) + 1) * n * n)


def move_stickers(values: np.ndarray, n: int, case: Case) -> np.ndarray:
    """Per-sticker values (facelet order, any trailing shape) moved as a turned or swapped case moves them."""
    out, p = values.copy(), case.params
    block = lambda f: _block(f, n)  # noqa: E731
    if case.kind == "turned":
        face = values[block(p["face"])]
        out[block(p["face"])] = np.rot90(face.reshape(n, n, *face.shape[1:]), p["quarter_turns_ccw"]).reshape(
            face.shape
        )
    elif case.kind == "swapped":
        a, b = p["faces"]
        out[block(a)], out[block(b)] = values[block(b)], values[block(a)]
    return out


def shown_cube(truth: str, n: int, case: Case) -> str | None:
    """For a turned or swapped case: the cube the mislabelled stickers show, in face letters, if that is a
    legal cube (then no reading of colours alone can tell it from the truth), else None."""
    shown = "".join(move_stickers(np.array(list(truth)), n, case))
    try:
        from_facelets(shown)
        return to_face_letters(shown)
    except InvalidState:
        return None


def perturb_rgb(source: Source, case: Case) -> np.ndarray:
    """The sticker colours of a case (facelet order), for an RGB scan."""
    n, p = source.size, case.params
    rgb = move_stickers(source.rgb, n, case)
    if case.kind == "relit":
        face = _block(p["face"], n)
        rgb[face] = recolour(rgb[face], *RELIGHTS[p["light"]])
    elif case.kind == "white-balance":
        rgb = recolour(rgb, kelvin_gains(p["kelvin"]))
    return rgb


# ---------------------------------------------------------------- sources


def dev_sources(path: Path) -> tuple[list[Source], str | None]:
    try:
        items = load_devset(path)
    except FileNotFoundError as error:
        return [], f"no dev set: {error}"
    sources = []
    for item in items:
        if item.photos is None:
            sources.append(Source(item.id, "devset-rgb", item.size, item.answer, rgb=item.rgb))
            continue
        corners = {}
        for face, image in item.photos.items():
            try:
                corners[face] = detect_grid(image, item.size).corners
            except ScanError:
                corners[face] = None
        sources.append(Source(item.id, "devset-photos", item.size, item.answer, item.photos, corners))
    return sources, None


def _handheld_pose(rng: np.random.Generator) -> dict:
    return {
        "rotation_deg": float(rng.uniform(-20, 20)),
        "fill": float(rng.uniform(0.45, 0.9)),
        "tilt_deg": float(rng.uniform(0, 15)),
        "tilt_towards_deg": float(rng.uniform(0, 360)),
        "offset": tuple(float(v) for v in rng.uniform(-0.7, 0.7, 2)),
    }


def render_sources(count: int, seed: int) -> list[Source]:
    rng = np.random.default_rng(seed)
    sources = []
    for k in range(count):
        size, light = 2 + k % 2, list(PRESETS)[(k // 2) % len(PRESETS)]
        state = random_face_states(size, 1, rng)[0]
        photos, corners = {}, {}
        for face in FACES:
            pose = _handheld_pose(rng)
            photos[face] = render_face_photo(state, face, light=light, rng=rng, **pose)
            corners[face] = face_photo_corners(size, face, **pose)
        sources.append(Source(f"render-{k:02d}-{size}x{size}-{light}", "render", size, state, photos, corners))
    return sources


def render_calibration(source: Source, seed: int, number: int) -> Calibration:
    """What a user of a render's rig does: scan a solved cube once under the same light (its own seed)."""
    rng = np.random.default_rng([seed, number, 1])
    light = source.name.rsplit("-", 1)[1]
    solved = "".join(face * source.size**2 for face in FACES)
    photos = {face: render_face_photo(solved, face, light=light, rng=rng, **_handheld_pose(rng)) for face in FACES}
    return calibrate(sample_photos(photos, source.size), per_position=False)


def with_calibrations(sources: list[Source], seed: int) -> None:
    """Give each source the calibration of its rig (``--palette``)."""
    for number, source in enumerate(sources):
        if source.kind == "render":
            source.calibration = render_calibration(source, seed, number)
        elif source.rgb is not None:
            source.calibration = reading_calibration(source.rgb)
        elif source.photos is not None:
            try:
                source.calibration = reading_calibration(sample_photos(source.photos, source.size))
            except ScanError:
                source.calibration = None


# ---------------------------------------------------------------- run


_RUN: tuple = ()  # (sources, args), set before workers fork so the photos are not sent to them


def run_source(number: int) -> tuple[list, list]:
    """Every case of one source: ((case, outcome) rows, skipped). Seeded per source, so any number of
    jobs gives the same."""
    sources, args = _RUN
    source = sources[number]
    rows, skipped = [], []
    rng = np.random.default_rng([args.seed, number])
    for case in plan_cases(source, rng, args.quick):
        if source.photos is not None:
            photos = perturb_photos(source, case, rng)
            if photos is None:
                skipped.append(
                    {
                        "source": source.name,
                        "kind": case.kind,
                        "params": case.params,
                        "reason": "no grid found on the clean photo to place the blob",
                    }
                )
                continue
            call = lambda photos=photos: scan_photos(photos, calibration=source.calibration)  # noqa: E731
        else:
            rgb = perturb_rgb(source, case)
            call = lambda rgb=rgb: classify(rgb.tolist(), source.calibration)  # noqa: E731
        outcome = judge(call, source.truth, case.suspect, args.confident)
        rows.append((case, outcome))
        if args.verbose and outcome.verdict != "right":
            print(
                f"{outcome.verdict:13s} {source.name} {case.kind} {case.params}: "
                f"{outcome.message[:100] or ' '.join(outcome.differ)}",
                file=sys.stderr,
            )
    return rows, skipped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a seeded subset of each kind, 2 renders (~1 min)")
    parser.add_argument("--devset", type=Path, default=DEFAULT_DEVSET, help="the real dev set's folder")
    parser.add_argument("--renders", type=int, default=None, help="rendered cubes (default 16; --quick 2)")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument(
        "--confident",
        type=float,
        default=CONFIDENT,
        help=f"confidence a sticker needs to count as sure (default {CONFIDENT})",
    )
    parser.add_argument("--verbose", action="store_true", help="one line per case that is not right, on stderr")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes, one source at a time each")
    parser.add_argument("--palette", action="store_true", help="read with a calibration of each source's rig")
    parser.add_argument("--cases", type=Path, help="also write every case's verdict to this file (JSON lines)")
    parser.add_argument("--sources", help="only these sources, comma-separated names (seeded as in the full run)")
    args = parser.parse_args()
    started = time.perf_counter()
    renders = args.renders if args.renders is not None else (2 if args.quick else 16)
    sources, devset_note = dev_sources(args.devset)
    sources += render_sources(renders, args.seed)
    if args.palette:
        with_calibrations(sources, args.seed)
    global _RUN
    _RUN = (sources, args)
    numbers = [n for n, s in enumerate(sources) if not args.sources or s.name in args.sources.split(",")]
    if args.jobs > 1:
        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            results = pool.map(run_source, numbers, chunksize=1)
    else:
        results = [run_source(number) for number in numbers]
    rows, skipped = [], []
    for source, (source_rows, source_skipped) in zip([sources[n] for n in numbers], results):
        rows += [(source, case, outcome) for case, outcome in source_rows]
        skipped += source_skipped
    if args.cases:
        args.cases.write_text(
            "".join(
                json.dumps({"source": s.name, "kind": c.kind, "params": c.params, "verdict": o.verdict}) + "\n"
                for s, c, o in rows
            )
        )
    print(json.dumps(report(rows, skipped, sources, args, renders, devset_note, started)))


def _counts(rows) -> dict:
    counts = tally([o for _, _, o in rows])
    counts["named_suspect"] = sum(
        bool(o.names_suspect) for _, _, o in rows if o.verdict in ("refused", "right-flagged", "wrong-flagged")
    )
    counts["scan_s"] = round(sum(o.seconds for _, _, o in rows), 1)
    return counts


def report(rows, skipped, sources, args, renders, devset_note, started) -> dict:
    kinds = list(dict.fromkeys(c.kind for _, c, _ in rows))
    source_kinds = list(dict.fromkeys(s.kind for s in sources))
    wrong = []
    for s, c, o in rows:
        if o.verdict != "wrong":
            continue
        relabelled = c.kind in ("turned", "swapped")
        shown = shown_cube(s.truth, s.size, c) if relabelled else None
        wrong.append(
            {
                "source": s.name,
                "kind": c.kind,
                "params": c.params,
                "confident_differ": o.confident_differ
                if len(o.confident_differ) <= 12
                else o.confident_differ[:12] + [f"... {len(o.confident_differ)} in all"],
                "min_confidence": round(o.min_confidence, 4),
                "shown_is_a_legal_cube": (shown is not None) if relabelled else None,
                "returned_what_was_shown": (o.state == shown) if relabelled else None,
            }
        )
    turned = [(o, c) for _, c, o in rows if c.kind == "turned"]
    return {
        "quick": args.quick,
        "palette": args.palette,
        "calibrated_sources": sum(s.calibration is not None for s in sources),
        "seed": args.seed,
        "confident": args.confident,
        "devset": str(args.devset),
        "devset_note": devset_note,
        "sources": {k: sum(s.kind == k for s in sources) for k in source_kinds},
        "verdicts": list(VERDICTS),
        "totals": _counts(rows),
        "per_kind": {k: _counts([r for r in rows if r[1].kind == k]) for k in kinds},
        "per_source_kind": {
            sk: {
                k: _counts([r for r in rows if r[0].kind == sk and r[1].kind == k])
                for k in kinds
                if any(r[0].kind == sk and r[1].kind == k for r in rows)
            }
            for sk in source_kinds
        },
        "per_source": {s.name: _counts([r for r in rows if r[0] is s]) for s in sources},
        "scan_ms_median": {
            sk: round(1e3 * float(np.median([o.seconds for s, _, o in rows if s.kind == sk])), 1)
            for sk in source_kinds
            if any(s.kind == sk for s, _, _ in rows)
        },
        "turned_faces": {
            "cases": len(turned),
            "turned_back": sum(o.verdict in ("right", "right-flagged") for o, _ in turned),
            "refused": sum(o.verdict == "refused" for o, _ in turned),
            "refused_naming_face": sum(o.verdict == "refused" and bool(o.names_suspect) for o, _ in turned),
            "wrong": sum(o.verdict in ("wrong", "wrong-flagged") for o, _ in turned),
        },
        "wrong_confident": len(wrong),
        "wrong_where_shown_is_a_legal_cube": sum(bool(w["shown_is_a_legal_cube"]) for w in wrong),
        "wrong_cases": wrong,
        "wrong_flagged_cases": [
            {
                "source": s.name,
                "kind": c.kind,
                "params": c.params,
                "differ": o.differ[:12],
                "min_confidence": round(o.min_confidence, 4),
            }
            for s, c, o in rows
            if o.verdict == "wrong-flagged"
        ],
        "skipped": skipped,
        "target": {"wrong_confident": 0},
        "wall_s": round(time.perf_counter() - started, 1),
    }


if __name__ == "__main__":
    main()
