"""Benchmark of the scanner on synthetic cubes; prints one JSON object.

    python bench/vision.py [--quick] [--states N] [--seed S] [--parts ways,bins,devset,bracket,palette]
                           [--bin-cubes N] [--devset PATH] [--all-cores]

Scans run pinned to one core (OpenCV single-threaded too), the figure a
Raspberry Pi core is closest to, unless ``--all-cores``.

For every lighting preset and size (2x2x2, 3x3x3), N seeded uniformly random
states are rendered and scanned four ways:

- ``corners``: the six-motor rig's two corner cameras, calibrated views;
- ``flip``: the flip rig's six one-face frames, calibrated views;
- ``phone``: six handheld one-face photos (640x480), automatic grid detection;
- ``colours``: classification alone, on sticker colours perturbed by the
  preset's cast, shading and noise (no image).

Per way: the fraction of states recovered exactly, how many scans were
refused with a ScanError and how many came out wrong (never acceptable), and
the median milliseconds of one full-cube scan (sampling + classification;
for ``phone`` grid detection too; rendering is not timed), wall-clock and
CPU time of the process (the latter is steadier on a busy machine).

``bins`` (``--parts``): grid detection by pose, on one-face renders
(``vision.render.render_face_photo``) whose pose is drawn inside a bin of
each dimension: in-plane rotation (|angle| 0-15, 15-30, 30-45 degrees, either
sign), fill (the face spans 25-50, 50-75, 75-100% of the shorter image side),
perspective tilt (0-10, 10-20, 20-30 degrees) and light (the presets). Each
cube's six photos share its bins (light, and a bin per dimension, balanced
over the cubes); the values inside a bin, the tilt's direction and where the
face sits in the frame differ per photo. Per bin: the detection rate
(``detect_grid`` with no size given finds the right size and all four
corners within a quarter of a sticker pitch of the true ones; failures are
``no_grid``, ``wrong_size``, ``quarter_turned``: the right grid with its
corners named a quarter or half turn off, and ``corners_off``) and the
exact-cube rate (``scan_photos`` returns the true state), with the cubes'
verdicts (bench/vision_cases.py).

``devset`` (``--parts``): the real dev set (``--devset PATH``, default
../shared/vision-devset; read where it lies, never copied): per item its
verdict, minimum confidence and message; per photo whether a grid of the
right size was found (the true corners of real photos are not known).

``palette`` (``--parts``): classification alone of the corner rig's sampled
colours, each size and light, with a colour calibration (a solved cube
rendered under the same light) and without: verdicts and median milliseconds
(a calibrated scan is also read without the calibration, to check it).

``bracket`` (``--parts``): exposure bracketing on the corner rig (3x3,
daylight, a cream yellow): the median scan, the clipping check that comes
before it (nothing clips), and, with both images clipping at three times
the exposure and taken again darker, the vision's cost per re-take (the
frames rendered beforehand, so the camera's own time for a frame is not
in it) and the scan of the frames kept.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.vision_cases import DEFAULT_DEVSET, judge, load_devset, random_face_states, tally  # noqa: E402
from solver.puzzles.cube.geometry import FACES  # noqa: E402
from vision import (  # noqa: E402
    PRESETS,
    Calibration,
    ScanError,
    calibrate,
    classify,
    default_views,
    detect_grid,
    render_views,
    sample_views,
    scan_photos,
    scan_views,
)
from vision.exposure import bracket  # noqa: E402
from vision.lighting import sticker_colours  # noqa: E402
from vision.render import face_photo_corners, render_face_photo  # noqa: E402

WAYS = ("corners", "flip", "phone", "colours")
PARTS = ("ways", "bins", "devset", "bracket", "palette")
PALETTE_TRIES = 5  # solved-cube shots before a calibration is given up
CREAM = {"D": (0.80, 0.78, 0.62)}  # a cream yellow: overexposed, it clips at white's level
BINS = {
    "rotation_deg": ((0, 15), (15, 30), (30, 45)),
    "fill": ((0.25, 0.5), (0.5, 0.75), (0.75, 1.0)),
    "tilt_deg": ((0, 10), (10, 20), (20, 30)),
}
CORNER_TOLERANCE = 0.25  # of a sticker pitch: the sampler reads the middle half of each sticker
VERBOSE = False


def scan_once(way: str, state: str, light: str, rng: np.random.Generator, configs: dict):
    """(result state or None if refused, wall seconds, CPU seconds spent scanning)."""
    if way == "colours":
        rgb = sticker_colours(state, light, rng)
        start, cpu = time.perf_counter(), time.process_time()
        call = lambda: classify(rgb)  # noqa: E731
    else:
        images = render_views(state, way, light, rng)
        start, cpu = time.perf_counter(), time.process_time()
        if way == "phone":
            call = lambda: scan_photos(images)  # noqa: E731
        else:
            call = lambda: scan_views(images, configs[way])  # noqa: E731
    try:
        found = call().state
    except ScanError as error:
        found = None
        if VERBOSE:
            print(f"refused {way} {light} {state}: {error}", file=sys.stderr)
    spent, cpu_spent = time.perf_counter() - start, time.process_time() - cpu
    if VERBOSE and found not in (None, state):
        print(f"WRONG {way} {light} {state} -> {found}", file=sys.stderr)
    return found, spent, cpu_spent


def bench_cell(size: int, light: str, count: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    states = random_face_states(size, count, rng)
    configs = {rig: default_views(rig, size) for rig in ("corners", "flip")}
    out = {}
    for way in WAYS:
        exact = refused = wrong = 0
        seconds, cpu_seconds = [], []
        for state in states:
            found, spent, cpu_spent = scan_once(way, state, light, rng, configs)
            seconds.append(spent)
            cpu_seconds.append(cpu_spent)
            if found is None:
                refused += 1
            elif found == state:
                exact += 1
            else:
                wrong += 1
        out[way] = {
            "exact": round(exact / count, 4),
            "refused": refused,
            "wrong": wrong,
            "ms_median": round(1e3 * float(np.median(seconds)), 2),
            "cpu_ms_median": round(1e3 * float(np.median(cpu_seconds)), 2),
        }
    return out


def bench_ways(count: int, seed: int) -> dict:
    """The four ways on every preset and size (see the docstring)."""
    results = {}
    for size in (2, 3):
        for k, light in enumerate(PRESETS):
            cell = bench_cell(size, light, count, seed + 10 * size + k)
            results.setdefault(f"{size}x{size}x{size}", {})[light] = cell
    summary = {}
    for way in WAYS:
        cells = [cell[way] for per_size in results.values() for cell in per_size.values()]
        summary[way] = {
            "exact_min": min(c["exact"] for c in cells),
            "wrong_total": sum(c["wrong"] for c in cells),
            "refused_total": sum(c["refused"] for c in cells),
            "ms_median_worst_cell": max(c["ms_median"] for c in cells),
            "ms_median_all": round(float(np.median([c["ms_median"] for c in cells])), 2),
            "cpu_ms_median_worst_cell": max(c["cpu_ms_median"] for c in cells),
        }
    return {
        "states_per_cell": count,
        "presets": list(PRESETS),
        "results": results,
        "summary": summary,
        "targets": {"exact": 1.0, "corners_ms": 15.0, "flip_ms": 15.0, "phone_ms": 30.0},
    }


def _bin_label(low: float, high: float, percent: bool = False) -> str:
    return f"{round(100 * low)}-{round(100 * high)}%" if percent else f"{low}-{high}"


def detection_check(image: np.ndarray, size: int, corners: np.ndarray) -> tuple[str, float | None]:
    """('ok' | 'no-grid' | 'wrong-size' | 'quarter-turned' | 'corners-off', corner error in sticker
    pitches) of one photo; 'quarter-turned': the right grid, its corners named a quarter or half turn off."""
    try:
        grid = detect_grid(image)
    except ScanError:
        return "no-grid", None
    if grid.size != size:
        return "wrong-size", None
    pitch = float(np.mean(np.linalg.norm(corners - np.roll(corners, 1, axis=0), axis=1))) / size
    errors = [float(np.linalg.norm(grid.corners - np.roll(corners, k, axis=0), axis=1).max()) / pitch for k in range(4)]
    if errors[0] <= CORNER_TOLERANCE:
        return "ok", errors[0]
    return ("quarter-turned" if min(errors) <= CORNER_TOLERANCE else "corners-off"), errors[0]


def bench_bins(count: int, seed: int) -> dict:
    """Detection and exact-cube rates per pose bin and light on one-face renders (see the docstring)."""
    rng = np.random.default_rng(seed)
    plan = {dim: rng.permutation(np.resize(np.arange(len(bins)), count)) for dim, bins in BINS.items()}
    plan["light"] = rng.permutation(np.resize(np.arange(len(PRESETS)), count))
    cells: dict[str, dict[str, dict]] = {dim: {} for dim in (*BINS, "light")}
    errors = []
    for i in range(count):
        size = 2 + i % 2
        state = random_face_states(size, 1, rng)[0]
        light = list(PRESETS)[plan["light"][i]]
        labels = {dim: _bin_label(*BINS[dim][plan[dim][i]], percent=dim == "fill") for dim in BINS}
        labels["light"] = light
        photos, checks = {}, []
        for face in FACES:
            rot = BINS["rotation_deg"][plan["rotation_deg"][i]]
            pose = {
                "rotation_deg": float(rng.choice((-1, 1)) * rng.uniform(*rot)),
                "fill": float(rng.uniform(*BINS["fill"][plan["fill"][i]])),
                "tilt_deg": float(rng.uniform(*BINS["tilt_deg"][plan["tilt_deg"][i]])),
                "tilt_towards_deg": float(rng.uniform(0, 360)),
                "offset": tuple(float(v) for v in rng.uniform(-0.8, 0.8, 2)),
            }
            photos[face] = render_face_photo(state, face, light=light, rng=rng, **pose)
            check, error = detection_check(photos[face], size, face_photo_corners(size, face, **pose))
            checks.append(check)
            if check == "ok":
                errors.append(error)
            if VERBOSE and check != "ok":
                print(f"detection {check}: {size}x{size} {light} face {face} {pose}", file=sys.stderr)
        outcome = judge(lambda photos=photos: scan_photos(photos), state)
        if VERBOSE and outcome.verdict != "right":
            print(
                f"bins {outcome.verdict} {size}x{size} {labels}: {outcome.message or outcome.differ}", file=sys.stderr
            )
        for dim, label in labels.items():
            cell = cells[dim].setdefault(
                label,
                {
                    "photos": 0,
                    "ok": 0,
                    "no-grid": 0,
                    "wrong-size": 0,
                    "quarter-turned": 0,
                    "corners-off": 0,
                    "outcomes": [],
                },
            )
            cell["photos"] += len(checks)
            for check in checks:
                cell[check] += 1
            cell["outcomes"].append(outcome)
    out = {}
    for dim, per_bin in cells.items():
        out[dim] = {}
        for label in sorted(per_bin, key=lambda x: (len(x), x)) if dim != "light" else list(PRESETS):
            if label not in per_bin:
                continue
            cell = per_bin[label]
            counts = tally(cell.pop("outcomes"))
            out[dim][label] = {
                "photos": cell["photos"],
                "detected": round(cell["ok"] / cell["photos"], 4),
                "no_grid": cell["no-grid"],
                "wrong_size": cell["wrong-size"],
                "quarter_turned": cell["quarter-turned"],
                "corners_off": cell["corners-off"],
                "cubes": counts["cases"],
                "exact": round((counts["right"] + counts["right-flagged"]) / counts["cases"], 4),
                "verdicts": {k: v for k, v in counts.items() if k != "cases"},
            }
    rates = [c for per_dim in out.values() for c in per_dim.values()]
    return {
        "cubes": count,
        "photos": 6 * count,
        "corner_tolerance_pitch": CORNER_TOLERANCE,
        "bins": out,
        "summary": {
            "detected_worst_bin": min(c["detected"] for c in rates),
            "exact_worst_bin": min(c["exact"] for c in rates),
            "detected_all": round(sum(c["detected"] * c["photos"] for c in out["light"].values()) / (6 * count), 4),
            "exact_all": round(sum(c["exact"] * c["cubes"] for c in out["light"].values()) / count, 4),
            "wrong_all": sum(c["verdicts"]["wrong"] for c in out["light"].values()),
            "corner_error_median_pitch_detected": round(float(np.median(errors)), 3) if errors else None,
        },
    }


def bench_devset(path: Path) -> dict:
    """Every item of the real dev set: verdict, confidence, message; per photo set, the grids found."""
    try:
        items = load_devset(path)
    except FileNotFoundError as error:
        return {"skipped": f"no dev set: {error}"}
    table, photos_found, photos_total = [], 0, 0
    for item in items:
        row = {"id": item.id, "kind": item.kind, "size": item.size}
        if item.photos is not None:
            found = []
            for face in FACES:
                try:
                    grid = detect_grid(item.photos[face])
                    found.append(face if grid.size == item.size else f"{face}:{grid.size}x{grid.size}")
                except ScanError:
                    found.append(f"{face}:none")
            row["grids"] = " ".join(found)
            row["detected"] = sum(len(f) == 1 for f in found)
            photos_found += row["detected"]
            photos_total += len(FACES)
            outcome = judge(lambda item=item: scan_photos(item.photos), item.answer)
        else:
            outcome = judge(lambda item=item: classify(item.rgb.tolist()), item.answer)
        row["result"] = outcome.verdict
        row["min_confidence"] = None if outcome.min_confidence is None else round(outcome.min_confidence, 4)
        row["message"] = (outcome.message or (f"differs at {' '.join(outcome.differ)}" if outcome.differ else ""))[:90]
        row["ms"] = round(1e3 * outcome.seconds, 1)
        table.append(row)
    sets = [r for r in table if r["kind"] == "photos"]
    exact = lambda rows: sum(r["result"] in ("right", "right-flagged") for r in rows)  # noqa: E731
    return {
        "path": str(path),
        "items": table,
        "summary": {
            "photo_detection_rate": round(photos_found / photos_total, 4) if photos_total else None,
            "photo_sets_exact": f"{exact(sets)}/{len(sets)}",
            "rgb_scans_exact": f"{exact([r for r in table if r['kind'] != 'photos'])}/{len(table) - len(sets)}",
            "wrong": sum(r["result"] == "wrong" for r in table),
        },
    }


def _timed(call) -> tuple[object, float]:
    start = time.perf_counter()
    try:
        return call(), time.perf_counter() - start
    except ScanError:
        return None, time.perf_counter() - start


def _bracketed_once(state: str, frame_seed: int, config) -> dict[str, float | int]:
    """One state's bracketing times (seconds), re-takes and whether the kept frames read right."""

    def shot(exposure: float) -> dict:
        rng = np.random.default_rng(frame_seed)  # the same scene and noise at every exposure
        return render_views(state, "corners", "daylight", rng, exposure=exposure, stickers=CREAM)

    normal, over = shot(1.0), shot(3.0)
    darker = {k: shot(3.0 * k) for k in (0.5, 0.25)}
    out: dict[str, float | int] = {"scan": _timed(lambda: scan_views(normal, config))[1]}
    out["check"] = _timed(lambda: bracket(normal, config, lambda name, k: None))[1]
    taken, out["bracket"] = _timed(lambda: bracket(over, config, lambda name, k: darker[k][name]))
    found, out["scan_after"] = _timed(lambda: scan_views(taken.images, config, None, taken.exposures))
    out["retakes"] = len(taken.retakes)
    out["right"] = int(found is not None and found.state == state)
    return out


def bench_bracket(count: int, seed: int) -> dict:
    """Exposure bracketing on the corner rig (3x3, daylight, cream yellow): what the check costs a scan that
    needs no re-take, and what a re-take costs where both images clip at 3 times the exposure (the frames at
    other exposures rendered beforehand: the camera's own time for a frame is not counted)."""
    rng = np.random.default_rng(seed)
    config = default_views("corners", 3)
    runs = [_bracketed_once(state, int(rng.integers(1 << 31)), config) for state in random_face_states(3, count, rng)]
    median = {key: 1e3 * float(np.median([r[key] for r in runs])) for key in ("scan", "check", "bracket", "scan_after")}
    retakes = sum(int(r["retakes"]) for r in runs) / count
    return {
        "scans": count,
        "ms_median_scan": round(median["scan"], 2),
        "ms_median_clipping_check": round(median["check"], 2),
        "ms_per_retake": round((median["bracket"] - median["check"]) / max(retakes, 1e-9), 2),
        "retakes_per_scan": round(retakes, 2),
        "ms_median_scan_after_retakes": round(median["scan_after"], 2),
        "right_after_retakes": sum(int(r["right"]) for r in runs),
    }


def bench_palette(count: int, seed: int) -> dict:
    """Classification of the corner rig's sampled colours with a palette (a solved cube rendered under the
    same light, its own seed) and without, per size and light: verdicts and median milliseconds."""
    cells: dict = {}
    medians: dict = {"with": [], "without": []}
    for size in (2, 3):
        config = default_views("corners", size)
        solved = "".join(face * size * size for face in FACES)
        for k, light in enumerate(PRESETS):
            rng = np.random.default_rng([seed, size, k])
            calibration = _palette(solved, light, rng, config)
            outcomes: dict = {"with": [], "without": []}
            for state in random_face_states(size, count, rng):
                rgb = sample_views(render_views(state, "corners", light, rng), config)
                for key, palette in (("with", calibration), ("without", None)):
                    outcomes[key].append(judge(lambda rgb=rgb, palette=palette: classify(rgb, palette), state))
            cell = cells[f"{size}x{size}x{size}-{light}"] = {}
            for key, rows in outcomes.items():
                ms = 1e3 * float(np.median([o.seconds for o in rows]))
                medians[key].append(ms)
                cell[key] = {**tally(rows), "ms_median": round(ms, 2)}
    return {
        "states_per_cell": count,
        "cells": cells,
        "ms_median_all": {key: round(float(np.median(ms)), 2) for key, ms in medians.items()},
        "ms_median_worst_cell": {key: round(max(ms), 2) for key, ms in medians.items()},
    }


def _palette(solved: str, light: str, rng: np.random.Generator, config) -> Calibration:
    """A calibration from the solved cube rendered in the rig, shot again (as a user would) while a sticker's
    glare makes ``calibrate`` refuse it."""
    for _ in range(PALETTE_TRIES - 1):
        try:
            return calibrate(sample_views(render_views(solved, "corners", light, rng), config))
        except ScanError:
            continue
    return calibrate(sample_views(render_views(solved, "corners", light, rng), config))


def _use_cores(every: bool) -> int:
    """Pin the process (and OpenCV's threads) to one core unless ``every``; the cores it may use."""
    if not every:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        cv2.setNumThreads(1)
    return len(os.sched_getaffinity(0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run of every part (under a minute)")
    parser.add_argument("--verbose", action="store_true", help="list refused and wrong scans on stderr")
    parser.add_argument("--states", type=int, default=200, help="states per preset and size (default 200)")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument(
        "--parts", default=",".join(PARTS), help=f"comma-separated parts to run: {', '.join(PARTS)} (default all)"
    )
    parser.add_argument(
        "--bin-cubes",
        type=int,
        default=None,
        help="cubes (six photos each) for the pose bins (default 150; --quick 15)",
    )
    parser.add_argument("--devset", type=Path, default=DEFAULT_DEVSET, help="the real dev set's folder")
    parser.add_argument(
        "--all-cores",
        action="store_true",
        help="let the scans use every core (default: pinned to one, the issue's figure)",
    )
    args = parser.parse_args()
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        parser.error(f"unknown part {unknown[0]!r} (parts: {', '.join(PARTS)})")
    global VERBOSE
    VERBOSE = args.verbose
    started = time.perf_counter()
    report: dict = {"parts": parts, "cores": _use_cores(args.all_cores)}
    if "ways" in parts:
        report.update(bench_ways(4 if args.quick else args.states, args.seed))
    if "bins" in parts:
        cubes = args.bin_cubes if args.bin_cubes is not None else (15 if args.quick else 150)
        report["bins"] = bench_bins(cubes, args.seed + 7)
    if "devset" in parts:
        report["devset"] = bench_devset(args.devset)
    if "bracket" in parts:
        report["bracket"] = bench_bracket(4 if args.quick else args.states, args.seed + 11)
    if "palette" in parts:
        report["palette"] = bench_palette(4 if args.quick else args.states, args.seed + 13)
    report["wall_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
