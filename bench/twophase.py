"""Benchmark of the two-phase 3x3x3 solver (the neural A* fallback); prints one JSON object.

    python bench/twophase.py [--quick]

Tables are built cold in a fresh temporary cache directory (the user's cache
is left alone); a fresh process then starts from that cache (what a daemon
start costs). Seeded uniformly random states are
solved at budgets of 1.0 s and 0.3 s with the default target (stop at 22
moves or fewer), and with no target (``max_length=0``: the whole budget goes
to finding shorter solutions). Every answer is checked by applying it. Times
are per solve, tables already loaded.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from solver.puzzles.cube.batch import Puzzle, to_cubie  # noqa: E402
from solver.puzzles.cube.cubie import apply_moves_cubie  # noqa: E402
from solver.puzzles.cube.scramble import random_states  # noqa: E402
from solver.search.twophase import DEFAULT_MAX_LENGTH, prepare, solve_two_phase  # noqa: E402
from solver.search.twophase import coords as twophase_coords  # noqa: E402
from solver.search.twophase.tables import CACHE_NAME, load_tables  # noqa: E402


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - start


WARM_START = """
import time
start = time.perf_counter()
from solver.search.twophase import prepare
from solver.search.twophase.tables import load_tables
prepare()
print(time.perf_counter() - start, load_tables().cached)
"""


def table_times() -> dict:
    """Cold build (move tables included) into an empty cache, then a fresh process starting from that cache."""
    for cached in vars(twophase_coords).values():  # move tables too: a cold build starts from nothing
        if hasattr(cached, "cache_clear"):
            cached.cache_clear()
    load_tables.cache_clear()
    tables, cold_s = timed(load_tables)
    assert not tables.cached
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run(
        [sys.executable, "-c", WARM_START], cwd=root, env=dict(os.environ), capture_output=True, text=True, check=True
    ).stdout.split()
    return {
        "cold_build_s": round(cold_s, 3),
        "bfs_s": round(tables.build_s, 3),
        "warm_start_s": round(float(out[0]), 3),
        "warm_start_from_cache": out[1] == "True",
        "cache_bytes": (Path(os.environ["ROBOTD_CACHE_DIR"]) / CACHE_NAME).stat().st_size,
        "table_counts": tables.counts,
    }


def run(cubes: list, budget_s: float, max_length: int) -> dict:
    lengths, seconds, solved = [], [], []
    for cube in cubes:
        moves, s = timed(solve_two_phase, cube, budget_s, max_length)
        seconds.append(s)
        ok = moves is not None and apply_moves_cubie(cube, moves).is_solved()
        solved.append(ok)
        if ok:
            lengths.append(len(moves))
    lengths_array = np.array(lengths)
    return {
        "budget_s": budget_s,
        "max_length": max_length,
        "cubes": len(cubes),
        "solved_fraction": round(float(np.mean(solved)), 4),
        "within_22_fraction": round(float(np.mean(lengths_array <= 22)) if lengths else 0.0, 4),
        "mean_htm": round(float(lengths_array.mean()), 3) if lengths else None,
        "median_htm": float(np.median(lengths_array)) if lengths else None,
        "max_htm": int(lengths_array.max()) if lengths else None,
        "htm_counts": {str(k): int(v) for k, v in zip(*np.unique(lengths_array, return_counts=True))},
        "median_s": round(float(np.median(seconds)), 4),
        "p90_s": round(float(np.percentile(seconds, 90)), 4),
        "max_s": round(float(np.max(seconds)), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="40 states (10 without a target) instead of 300 (40)")
    args = parser.parse_args()
    count, untargeted = (40, 10) if args.quick else (300, 40)
    rows = random_states(Puzzle.cube3(), count, np.random.default_rng(20261122))
    cubes = [to_cubie(row) for row in rows]
    with tempfile.TemporaryDirectory() as cache:
        os.environ["ROBOTD_CACHE_DIR"] = cache
        result = {"tables": table_times()}
        prepare()  # solve times below are for loaded tables
    result["runs"] = [run(cubes, budget, DEFAULT_MAX_LENGTH) for budget in (1.0, 0.3)]
    result["runs"] += [run(cubes[:untargeted], budget, 0) for budget in (1.0, 0.3)]
    result["all_solved"] = all(r["solved_fraction"] == 1.0 for r in result["runs"])
    print(json.dumps(result))


if __name__ == "__main__":
    main()
