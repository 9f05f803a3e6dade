"""Benchmark of vectorised batch moves on 3x3x3 states; prints one JSON object.

    python bench/batch.py [--quick]

Times every one of the 18 moves applied to 100,000 random states (one call),
the 12 quarter turns alone, one-hot encoding and hash keys; medians of
several repeats. A plain Python loop over cubie states is the baseline,
measured in the same run on a small sample and scaled per state.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from solver.puzzles.cube.batch import Puzzle, apply_all_moves, one_hot, state_keys, to_cubie  # noqa: E402
from solver.puzzles.cube.cubie import move_cube  # noqa: E402
from solver.puzzles.cube.scramble import random_states  # noqa: E402


def median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 9")
    args = parser.parse_args()
    repeats = 3 if args.quick else 9
    puzzle = Puzzle.cube3()
    states = random_states(puzzle, 100_000, np.random.default_rng(0))
    apply_all_moves(puzzle, states[:10])  # warm-up
    all_s = median_seconds(lambda: apply_all_moves(puzzle, states), repeats)
    quarter_s = median_seconds(lambda: apply_all_moves(puzzle, states, puzzle.quarter_turns), repeats)
    one_hot_s = median_seconds(lambda: one_hot(states), repeats)
    keys_s = median_seconds(lambda: state_keys(states), repeats)
    sample = [to_cubie(r) for r in states[:500]]
    moves = [move_cube(m) for m in range(18)]
    loop_s = median_seconds(lambda: [c.multiply(m) for c in sample for m in moves], repeats) * len(states) / len(sample)
    print(
        json.dumps(
            {
                "states": len(states),
                "all_18_moves_s": round(all_s, 4),
                "states_per_s": round(len(states) * 18 / all_s),
                "quarter_turns_12_s": round(quarter_s, 4),
                "one_hot_s": round(one_hot_s, 4),
                "keys_s": round(keys_s, 4),
                "python_loop_baseline_s": round(loop_s, 2),
                "speedup_vs_loop": round(loop_s / all_s, 1),
                "repeats": repeats,
            }
        )
    )


if __name__ == "__main__":
    main()
