"""Benchmark of the exact Skewb and Pyraminx tables; prints one JSON object.

    python bench/puzzles.py [--quick]

Cold builds run in fresh processes with fresh cache directories (the
user's cache is left alone): the time of ``load_table`` there includes the
move tables, the breadth-first search and writing the cache; a warm load is
a second fresh process reading that cache (it still makes the move tables,
whose fingerprint tells a stale cached table). Solve times
are per state: end to end from a facelet string (validation, tips, walk,
move names) and for the walk down the table alone.
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

REPO = Path(__file__).resolve().parent.parent
sys.path[0] = str(REPO)  # as a script this folder comes first, and bench/serial.py would shadow pyserial

from solver.puzzles import PUZZLES, get_puzzle  # noqa: E402
from solver.tables.exact import load_table  # noqa: E402
from solver.tables.solving import solve  # noqa: E402

LOAD = """
import json, sys, time
from solver.puzzles import get_puzzle
from solver.tables.exact import load_table
imported = time.perf_counter()
table = load_table(get_puzzle(sys.argv[1]))
print(json.dumps({"load_s": time.perf_counter() - imported, "cached": table.cached}))
"""


def load_s(name: str, cache: str, cached: bool) -> float:
    """Seconds ``load_table`` takes in a fresh process with this cache directory."""
    env = dict(os.environ, ROBOTD_CACHE_DIR=cache)
    out = subprocess.run(
        [sys.executable, "-c", LOAD, name], capture_output=True, text=True, env=env, cwd=REPO, check=True
    )
    result = json.loads(out.stdout)
    assert result["cached"] == cached
    return result["load_s"]


def cold_and_warm_s(name: str) -> tuple[float, float]:
    """(build with an empty cache, then load from the cache), each in a fresh process."""
    with tempfile.TemporaryDirectory() as cache:
        return load_s(name, cache, False), load_s(name, cache, True)


def median_us(seconds: list[float]) -> float:
    return round(float(np.median(seconds)) * 1e6, 1)


def bench_solves(name: str, count: int) -> dict:
    puzzle = get_puzzle(name)
    table = load_table(puzzle)
    rng = np.random.default_rng(2026)
    states = [puzzle.random_state(rng) for _ in range(count)]
    solve(name, states[0])  # warm the piece look-ups
    solve_s, walk_s, verified, lengths = [], [], True, []
    for state in states:
        start = time.perf_counter()
        solution = solve(name, state)
        solve_s.append(time.perf_counter() - start)
        index = puzzle.rank(state)
        start = time.perf_counter()
        table.walk(index)
        walk_s.append(time.perf_counter() - start)
        verified &= puzzle.apply(
            state, puzzle.parse_moves(solution.text)
        ) == puzzle.solved and solution.tracked == table.distance(index)
        lengths.append(solution.length)
    return {
        "solve_us_median": median_us(solve_s),
        "walk_us_median": median_us(walk_s),
        "solve_us_p99": round(float(np.percentile(solve_s, 99)) * 1e6, 1),
        "mean_length": round(float(np.mean(lengths)), 3),
        "states_solved": count,
        "verified": bool(verified),
    }


def bench_puzzle(name: str, builds: int, count: int) -> dict:
    cold, warm = zip(*(cold_and_warm_s(name) for _ in range(builds)))
    table = load_table(get_puzzle(name))
    return {
        "states": sum(table.counts),
        "gods_number": table.gods_number,
        "counts": table.counts,
        "cold_build_s_median": round(float(np.median(cold)), 3),
        "cold_build_s": [round(s, 3) for s in cold],
        "warm_load_s_median": round(float(np.median(warm)), 3),
        **bench_solves(name, count),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one cold build and 200 states instead of 3 and 1,000")
    args = parser.parse_args()
    builds, count = (1, 200) if args.quick else (3, 1000)
    with tempfile.TemporaryDirectory() as cache:
        os.environ["ROBOTD_CACHE_DIR"] = cache
        result = {name: bench_puzzle(name, builds, count) for name in PUZZLES}
    result["cpus"] = os.cpu_count()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
