"""Benchmark of the 3x3x3 neural A* solver; prints one JSON object.

    python bench/cube3.py [--quick] [--weight W] [--batch N] [--budget-s S] [--perimeter D] [--requeue M]
        [--cores N] [--write-card]

Two seeded test sets: ``short``, scrambles of 5 to 12 random quarter turns
(each drawn uniformly from the 12, so some cancel, as in the published test),
and ``random``, uniformly random states. For ``short`` it also reports the
proven optimal lengths (meet in the middle with the depth-7 perimeter table)
and the fraction of solutions that are optimal. The perimeter table is loaded
before timing starts, as the daemon does at start-up. --write-card stores the
result as the metrics of models/cube3.json (the ONNX file and its sha256 are
untouched). For searches that ran out of time it reports how far past the
budget they returned (``overrun_ms_*``). ``--cores N`` pins the bench (and
so onnxruntime's threads) to the first N cores; the machine's load average
at the start and the end is in the JSON, as the figures depend on it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from solver.puzzles.cube.batch import Puzzle, to_cubie  # noqa: E402
from solver.puzzles.cube.cubie import apply_moves_cubie  # noqa: E402
from solver.puzzles.cube.notation import move_length, simplify_moves  # noqa: E402
from solver.puzzles.cube.scramble import random_scrambles, random_states  # noqa: E402
from solver.search.astar import DEFAULT_BATCH, DEFAULT_REQUEUE, DEFAULT_WEIGHT, search  # noqa: E402
from solver.search.heuristic import load_model, model_dir  # noqa: E402
from solver.search.perimeter import DEFAULT_DEPTH, MAX_DEPTH, exact_distance, load_perimeter  # noqa: E402


def test_sets(short: int, uniform: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20261122)
    puzzle = Puzzle.cube3()
    scrambled, _ = random_scrambles(puzzle, rng.integers(5, 13, short), rng, quarter_turns_only=True, redundant=True)
    return {"short": scrambled, "random": random_states(puzzle, uniform, rng)}


def run_set(
    states: np.ndarray,
    model,
    weight: float,
    batch: int,
    budget_s: float,
    perimeter,
    optimal: list | None = None,
    requeue: float | None = DEFAULT_REQUEUE,
) -> dict:
    solved, qtm, htm, seconds, nodes, is_optimal, overrun = [], [], [], [], [], [], []
    for i, row in enumerate(states):
        cube = to_cubie(row)
        start = time.perf_counter()
        result = search(
            cube, model, weight=weight, batch=batch, budget_s=budget_s, perimeter=perimeter, requeue=requeue
        )
        seconds.append(time.perf_counter() - start)
        nodes.append(result.nodes_generated)
        if result.budget_exhausted:
            overrun.append(1e3 * (seconds[-1] - budget_s))
        ok = result.found and apply_moves_cubie(cube, result.moves).is_solved()
        solved.append(ok)
        if ok:
            moves = simplify_moves(result.moves)
            qtm.append(move_length(moves, "qtm"))
            htm.append(move_length(moves, "htm"))
            if optimal is not None:
                is_optimal.append(qtm[-1] == optimal[i])

    def stat(values, fn):
        return round(float(fn(values)), 3) if values else None

    report = {
        "cubes": len(states),
        "solved_fraction": stat(solved, np.mean),
        "mean_qtm": stat(qtm, np.mean),
        "median_qtm": stat(qtm, np.median),
        "mean_htm": stat(htm, np.mean),
        "median_htm": stat(htm, np.median),
        "median_s": stat(seconds, np.median),
        "p90_s": stat(seconds, lambda v: np.percentile(v, 90)),
        "mean_nodes": stat(nodes, np.mean),
        "out_of_budget": len(overrun),
        "overrun_ms_median": stat(overrun, np.median),
        "overrun_ms_max": stat(overrun, np.max),
    }
    if optimal is not None:
        report.update(optimal_mean_qtm=stat(optimal, np.mean), optimal_fraction=stat(is_optimal, np.mean))
    return report


def optimal_lengths(states: np.ndarray) -> list[int]:
    """Proven optimal QTM length of each short scramble (at most 12), by meeting the depth-7 table."""
    if not len(states):
        return []  # the depth-7 table takes gigabytes: not loaded for nothing
    table = load_perimeter(MAX_DEPTH)
    return [exact_distance(row, table, max_forward=5) for row in states]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="30 short and 3 random cubes, 10 s budget")
    parser.add_argument("--weight", type=float, default=DEFAULT_WEIGHT)
    parser.add_argument("--batch", type=int, default=DEFAULT_BATCH)
    parser.add_argument("--budget-s", type=float, default=60.0)
    parser.add_argument("--perimeter", type=int, default=DEFAULT_DEPTH, help="perimeter depth, 0 for none")
    parser.add_argument("--requeue", type=float, default=DEFAULT_REQUEUE, help="a per-child network's requeue margin")
    parser.add_argument("--short", type=int, default=200)
    parser.add_argument("--random", type=int, default=100)
    parser.add_argument("--cores", type=int, default=None, help="pin to the first N cores (default: all)")
    parser.add_argument("--write-card", action="store_true")
    args = parser.parse_args()
    if args.cores:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[: args.cores])  # before onnxruntime starts
    if args.quick:
        args.short, args.random, args.budget_s = 30, 3, 10.0
    model = load_model()
    perimeter = load_perimeter(args.perimeter) if args.perimeter else None
    sets = test_sets(args.short, args.random)
    result = {
        "model_sha256": model.card["sha256"],
        "weight": args.weight,
        "batch": args.batch,
        "budget_s": args.budget_s,
        "perimeter": args.perimeter,
        "requeue": args.requeue if model.per_child else None,
        "cores": len(os.sched_getaffinity(0)),
        "load_at_start": round(os.getloadavg()[0], 2),
    }
    optimal = optimal_lengths(sets["short"])
    for name, states in sets.items():
        result[name] = run_set(
            states,
            model,
            args.weight,
            args.batch,
            args.budget_s,
            perimeter,
            optimal if name == "short" else None,
            args.requeue,
        )
    result["load_at_end"] = round(os.getloadavg()[0], 2)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(json.dumps(result))
    if args.write_card:
        card_path = model_dir() / "cube3.json"
        card = json.loads(card_path.read_text())
        card["metrics"] = dict(result, command=" ".join(["python bench/cube3.py", *sys.argv[1:]]))
        card_path.write_text(json.dumps(card, indent=2) + "\n")


if __name__ == "__main__":
    main()
