"""Benchmark of the scanner on synthetic cubes; prints one JSON object.

    python bench/vision.py [--quick] [--states N] [--seed S]

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
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from solver.batch import Puzzle, to_facelet_array  # noqa: E402
from solver.scramble import random_states  # noqa: E402
from vision import PRESETS, ScanError, classify, default_views, render_views, scan_photos, scan_views  # noqa: E402
from vision.lighting import sticker_colours  # noqa: E402

WAYS = ("corners", "flip", "phone", "colours")
VERBOSE = False


def random_face_states(size: int, count: int, rng: np.random.Generator) -> list[str]:
    faces = to_facelet_array(random_states(Puzzle.of_size(size), count, rng))
    return ["".join("URFDLB"[f] for f in row) for row in faces]


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
        out[way] = {"exact": round(exact / count, 4), "refused": refused, "wrong": wrong,
                    "ms_median": round(1e3 * float(np.median(seconds)), 2),
                    "cpu_ms_median": round(1e3 * float(np.median(cpu_seconds)), 2)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="4 states per preset and size (under a minute)")
    parser.add_argument("--verbose", action="store_true", help="list refused and wrong scans on stderr")
    parser.add_argument("--states", type=int, default=200, help="states per preset and size (default 200)")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    count = 4 if args.quick else args.states
    started = time.perf_counter()
    results = {}
    for size in (2, 3):
        for k, light in enumerate(PRESETS):
            cell = bench_cell(size, light, count, args.seed + 10 * size + k)
            results.setdefault(f"{size}x{size}x{size}", {})[light] = cell
    summary = {}
    for way in WAYS:
        cells = [cell[way] for per_size in results.values() for cell in per_size.values()]
        summary[way] = {"exact_min": min(c["exact"] for c in cells),
                        "wrong_total": sum(c["wrong"] for c in cells),
                        "refused_total": sum(c["refused"] for c in cells),
                        "ms_median_worst_cell": max(c["ms_median"] for c in cells),
                        "ms_median_all": round(float(np.median([c["ms_median"] for c in cells])), 2),
                        "cpu_ms_median_worst_cell": max(c["cpu_ms_median"] for c in cells)}
    print(json.dumps({"states_per_cell": count, "presets": list(PRESETS), "results": results,
                      "summary": summary,
                      "targets": {"exact": 1.0, "corners_ms": 30.0, "flip_ms": 30.0, "phone_ms": 150.0},
                      "wall_s": round(time.perf_counter() - started, 1)}))


if __name__ == "__main__":
    main()
