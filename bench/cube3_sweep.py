"""Sweep of the 3x3x3 neural A*'s weight and batch on scrambles of one depth; prints one JSON object.

    python bench/cube3_sweep.py [--depth K] [--cubes N] [--budget-s S] [--weights W,...] [--batches N,...]
        [--requeues M,...]

The cubes are scrambles of K random quarter turns (no turn undoing or
repeating its predecessor's face), or with ``--depth 0`` uniformly random
states; their seed differs from ``bench/cube3.py``'s, so parameters chosen
here are not fitted to that bench's cubes. Each row has the figures of
``bench/cube3.py`` for one (weight, batch, requeue margin); the margin counts only with a
per-child network (``none`` for no requeueing).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.cube3 import run_set  # noqa: E402
from solver.puzzles.cube.batch import Puzzle  # noqa: E402
from solver.puzzles.cube.scramble import random_scrambles, random_states  # noqa: E402
from solver.search.astar import DEFAULT_REQUEUE  # noqa: E402
from solver.search.heuristic import load_model  # noqa: E402
from solver.search.perimeter import DEFAULT_DEPTH, load_perimeter  # noqa: E402


def numbers(text: str, kind):
    return [kind(v) for v in text.split(",")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=16, help="scramble length, 0 for uniformly random states")
    parser.add_argument("--cubes", type=int, default=10)
    parser.add_argument("--budget-s", type=float, default=10.0)
    parser.add_argument("--weights", default="0.2,0.4,0.6,0.8,1.0")
    parser.add_argument("--batches", default="200")
    parser.add_argument("--perimeter", type=int, default=DEFAULT_DEPTH, help="perimeter depth, 0 for none")
    parser.add_argument("--requeues", default=str(DEFAULT_REQUEUE))
    args = parser.parse_args()
    rng = np.random.default_rng(20261123)
    if args.depth:
        states, _ = random_scrambles(Puzzle.cube3(), np.full(args.cubes, args.depth), rng, quarter_turns_only=True)
    else:
        states = random_states(Puzzle.cube3(), args.cubes, rng)
    model = load_model()
    perimeter = load_perimeter(args.perimeter) if args.perimeter else None
    rows = []
    requeues = numbers(args.requeues, lambda v: None if v == "none" else float(v))
    for batch, weight, requeue in itertools.product(numbers(args.batches, int), numbers(args.weights, float), requeues):
        row = run_set(states, model, weight, batch, args.budget_s, perimeter, requeue=requeue)
        rows.append({"weight": weight, "batch": batch, "requeue": requeue, **row})
        print(json.dumps(rows[-1]), file=sys.stderr)
    print(
        json.dumps(
            {
                "model_sha256": model.card["sha256"],
                "depth": args.depth,
                "budget_s": args.budget_s,
                "perimeter": args.perimeter,
                "rows": rows,
            }
        )
    )


if __name__ == "__main__":
    main()
