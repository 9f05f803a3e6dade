"""Steps per second of the Gymnasium environments (solver.learning.envs): vectorised (N puzzles) and single.

Prints one JSON object. Random actions; the vectorised figure counts puzzle
steps (N per call), autoresets included; median of 5 runs.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from solver.learning.envs import ENV_IDS, PuzzleEnv, PuzzleVectorEnv


def _vector_rate(puzzle: str, count: int, steps: int) -> float:
    env = PuzzleVectorEnv(count, puzzle)
    env.reset(seed=0)
    actions = np.random.default_rng(0).integers(len(env.puzzle.move_names), size=(steps, count))
    start = time.perf_counter()
    for row in actions:
        env.step(row)
    return count * steps / (time.perf_counter() - start)


def _single_rate(puzzle: str, steps: int) -> float:
    env = PuzzleEnv(puzzle)
    env.reset(seed=0)
    actions = np.random.default_rng(0).integers(len(env.puzzle.move_names), size=steps).tolist()
    start = time.perf_counter()
    for a in actions:
        if env.step(a)[2]:
            env.reset()
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer steps (under a minute)")
    parser.add_argument("--envs", type=int, default=4096)
    args = parser.parse_args()
    steps = 100 if args.quick else 500  # 500 > 250: every puzzle autoresets at least once
    out = {
        "num_envs": args.envs,
        "steps_per_run": steps,
        "runs": 5,
        "cpus": len(os.sched_getaffinity(0)),
        "vector_steps_per_s": {},
        "single_steps_per_s": {},
    }
    for puzzle in ENV_IDS:
        out["vector_steps_per_s"][puzzle] = round(np.median([_vector_rate(puzzle, args.envs, steps) for _ in range(5)]))
        out["single_steps_per_s"][puzzle] = round(np.median([_single_rate(puzzle, 20_000) for _ in range(5)]))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
