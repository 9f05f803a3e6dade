"""Benchmark of the optimal 2x2x2 solver; prints one JSON object.

    python bench/pocket.py [--quick]

Cold builds run in a fresh temporary cache directory, so the user's cache is
left alone. Solve times are per state, end to end from a facelet string
(validation included) and for the walk down the table alone.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "tests"))  # puzzle_checks: the exact-table check the Skewb and Pyraminx tests use

from puzzle_checks import all_states_consistent  # noqa: E402
from solver import apply, solve  # noqa: E402
from solver.puzzles.cube.batch import Puzzle, to_cubie  # noqa: E402
from solver.puzzles.cube.cubie import from_facelets, to_facelets  # noqa: E402
from solver.puzzles.cube.scramble import random_states  # noqa: E402
from solver.puzzles.pocket import coordinate, model  # noqa: E402
from solver.tables.exact import load_table  # noqa: E402


def timed(fn, *args):
    start = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - start


def percentiles_us(seconds: list[float]) -> dict:
    us = np.array(seconds) * 1e6
    return {"median": round(float(np.median(us)), 2), "p99": round(float(np.percentile(us, 99)), 2)}


def bench_metric(metric: str, states: list[str], cubes: list) -> dict:
    puzzle = model(metric)
    load_table.cache_clear()
    table, cold_s = timed(load_table, puzzle)
    assert not table.cached
    load_table.cache_clear()
    warm, warm_s = timed(load_table, puzzle)
    consistent, consistent_s = timed(all_states_consistent, warm)
    solve_s, walk_s, verified = [], [], True
    for state, cube in zip(states, cubes):
        solution, seconds = timed(solve, state, metric)
        solve_s.append(seconds)
        index = coordinate(cube)
        path, seconds = timed(warm.walk, index)
        walk_s.append(seconds)
        finished = from_facelets(apply(state, solution.text)).is_solved()
        optimal = len(path) == solution.length == warm.distance(index)
        verified &= finished and optimal
    return {
        "cold_build_s": round(cold_s, 3),
        "move_tables_and_bfs_s": round(table.build_s, 3),
        "warm_load_s": round(warm_s, 4),
        "warm_cached": warm.cached,
        "solve_us": percentiles_us(solve_s),
        "walk_us": percentiles_us(walk_s),
        "states_solved": len(states),
        "verified": bool(verified),
        "all_states_consistent": consistent,
        "consistency_check_s": round(consistent_s, 3),
        "counts": table.counts,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 states instead of 10,000")
    args = parser.parse_args()
    count = 1000 if args.quick else 10000
    rows = random_states(Puzzle.cube2(), count, np.random.default_rng(2026))
    cubes = [to_cubie(r) for r in rows]
    states = [to_facelets(c) for c in cubes]
    with tempfile.TemporaryDirectory() as cache:
        os.environ["ROBOTD_CACHE_DIR"] = cache
        result = {metric: bench_metric(metric, states, cubes) for metric in ("htm", "qtm")}
    result["cold_build_both_s"] = round(result["htm"]["cold_build_s"] + result["qtm"]["cold_build_s"], 3)
    result["verified"] = result["htm"]["verified"] and result["qtm"]["verified"]
    result["all_states_consistent"] = result["htm"]["all_states_consistent"] and result["qtm"]["all_states_consistent"]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
