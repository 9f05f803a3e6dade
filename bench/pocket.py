"""Benchmark of the optimal 2x2x2 solver; prints one JSON object.

    python bench/pocket.py [--quick]

Cold builds run in a fresh temporary cache directory, so the user's cache is
left alone. Solve times are per state, end to end from a facelet string
(validation included) and for the table descent alone.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from solver import apply, solve  # noqa: E402
from solver.batch import Puzzle, to_cubie  # noqa: E402
from solver.cubie import from_facelets, to_facelets  # noqa: E402
from solver.notation import move_length  # noqa: E402
from solver.pocket import build_table, load_table, metric_moves, neighbour_indices, unpack_mod3  # noqa: E402
from solver.pocket_coords import STATES, coordinate  # noqa: E402
from solver.scramble import random_states  # noqa: E402


def timed(fn, *args):
    start = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - start


def all_states_consistent(metric: str, distance: np.ndarray, packed: bytes) -> bool:
    """Every non-solved state has a neighbour one closer and none two closer; the packed table agrees."""
    everyone = np.arange(STATES, dtype=np.int64)
    closest = np.full(STATES, 255, dtype=np.uint8)
    for move in metric_moves(metric):
        np.minimum(closest, distance[neighbour_indices(everyone, move)], out=closest)
    others = distance > 0
    return bool((closest[others] == distance[others] - 1).all()
                and (unpack_mod3(packed) == distance % 3).all())


def percentiles_us(seconds: list[float]) -> dict:
    us = np.array(seconds) * 1e6
    return {"median": round(float(np.median(us)), 2), "p99": round(float(np.percentile(us, 99)), 2)}


def bench_metric(metric: str, states: list[str], cubes: list) -> dict:
    load_table.cache_clear()
    table, cold_s = timed(load_table, metric)
    assert not table.cached
    load_table.cache_clear()
    warm, warm_s = timed(load_table, metric)
    _, distance = build_table(metric)
    consistent, consistent_s = timed(all_states_consistent, metric, distance, table.packed)
    solve_s, descent_s, verified = [], [], True
    for state, cube in zip(states, cubes):
        solution, seconds = timed(solve, state, metric)
        solve_s.append(seconds)
        path, seconds = timed(warm.solve, cube)
        descent_s.append(seconds)
        finished = from_facelets(apply(state, solution.text)).is_solved()
        optimal = move_length(path, metric) == solution.length == distance[coordinate(cube)]
        verified &= finished and optimal
    return {
        "cold_build_s": round(cold_s, 3), "bfs_and_pack_s": round(table.build_s, 3),
        "warm_load_s": round(warm_s, 4), "warm_cached": warm.cached,
        "solve_us": percentiles_us(solve_s), "descent_us": percentiles_us(descent_s),
        "states_solved": len(states), "verified": bool(verified),
        "all_states_consistent": consistent, "consistency_check_s": round(consistent_s, 3),
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
