"""What a user waits for on a 3x3x3: solve time plus motor time, the daemon's solvers against kociemba.

    python bench/robot_time.py [--cubes N] [--seed S] [--budget-s S] [--quick]

On the same N seeded, uniformly random states (default 100), with the
default ``[rig]`` (a six-motor rig: quarter turn 0.15 s, half turn 0.25 s,
settle 0.02 s, opposite faces together):

- ``daemon``: the daemon's solving with its defaults (``robot.solving``:
  neural A* and two-phase at once, the quickest on the rig kept);
- ``neural``: neural A* alone with the same budget;
- ``kociemba``: the ``kociemba`` package (Kociemba's two-phase in C; a
  bench-only dependency, ``pip install kociemba``), planned on the same rig.

Per solver: the fraction answered, which solver the daemon kept, mean and
median solve wall time, planned motor time and their sum, mean HTM and QTM.
Prints one JSON object; the machine's load average at start and end is
included, as the figures depend on it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from robot.config import Config  # noqa: E402
from robot.rig import rig_from_config  # noqa: E402
from robot.run import RunSettings  # noqa: E402
from robot.solving import RigSolver, candidate  # noqa: E402
from solver.api import solve  # noqa: E402
from solver.puzzles.cube.batch import Puzzle, to_cubie  # noqa: E402
from solver.puzzles.cube.cubie import to_facelets  # noqa: E402
from solver.puzzles.cube.notation import parse_moves  # noqa: E402
from solver.puzzles.cube.scramble import random_states  # noqa: E402


def run_daemon(states: list[str], settings: RunSettings, rig) -> list[dict]:
    solving = RigSolver(settings, rig)
    solving.prepare()
    solve(states[0], budget_s=0.05, fallback=None)  # the daemon warms the network at start-up too
    rows = []
    try:
        for state in states:
            start = time.perf_counter()
            solution = solving.solve(state)
            row = candidate(rig, "daemon", solution.moves if solution.found else None, time.perf_counter() - start)[0]
            row["kept"] = solution.details.get("solver")
            rows.append(row)
    finally:
        solving.close()
    return rows


def run_neural(states: list[str], settings: RunSettings, rig) -> list[dict]:
    rows = []
    for state in states:
        start = time.perf_counter()
        solution = solve(state, budget_s=settings.solve_budget_s, fallback=None)
        seconds = time.perf_counter() - start
        rows.append(candidate(rig, "neural", solution.moves if solution.found else None, seconds)[0])
    return rows


def run_kociemba(states: list[str], rig) -> list[dict]:
    import kociemba

    kociemba.solve(states[0])  # its tables load on first use
    rows = []
    for state in states:
        start = time.perf_counter()
        text = kociemba.solve(state)
        rows.append(candidate(rig, "kociemba", parse_moves(text), time.perf_counter() - start)[0])
    return rows


def summarise(rows: list[dict]) -> dict:
    found = [r for r in rows if r["found"]]
    mean = lambda key: round(float(np.mean([r[key] for r in found])), 3) if found else None  # noqa: E731
    out = {
        "cubes": len(rows),
        "answered": round(len(found) / len(rows), 3),
        "solve_s_mean": round(float(np.mean([r["solve_s"] for r in rows])), 3),
        "solve_s_median": round(float(np.median([r["solve_s"] for r in rows])), 3),
        "planned_s_mean": mean("planned_s"),
        "htm_mean": mean("htm"),
        "qtm_mean": mean("qtm"),
    }
    if found:
        out["total_s_mean"] = round(float(np.mean([r["solve_s"] + r["planned_s"] for r in found])), 3)
    kept = [r.get("kept") for r in rows if r.get("kept")]
    if kept:
        out["kept"] = {name: kept.count(name) for name in sorted(set(kept))}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cubes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=20261124)
    parser.add_argument("--budget-s", type=float, default=None, help="neural A* budget (default: the daemon's)")
    parser.add_argument("--quick", action="store_true", help="10 cubes")
    args = parser.parse_args()
    cubes = 10 if args.quick else args.cubes
    rows = random_states(Puzzle.cube3(), cubes, np.random.default_rng(args.seed))
    states = [to_facelets(to_cubie(row)) for row in rows]
    settings = RunSettings() if args.budget_s is None else RunSettings(solve_budget_s=args.budget_s)
    rig = rig_from_config(Config({}).section("rig"))
    load = os.getloadavg()[0]
    started = time.perf_counter()
    report = {
        "cubes": cubes,
        "seed": args.seed,
        "budget_s": settings.solve_budget_s,
        "fallback": settings.solve_fallback,
        "fallback_budget_s": settings.fallback_budget_s,
        "rig": rig.status(),
        "load_at_start": round(load, 2),
    }
    report["daemon"] = summarise(run_daemon(states, settings, rig))
    report["neural"] = summarise(run_neural(states, settings, rig))
    report["kociemba"] = summarise(run_kociemba(states, rig))
    if report["daemon"].get("total_s_mean") and report["kociemba"].get("total_s_mean"):
        report["daemon_over_kociemba"] = round(report["daemon"]["total_s_mean"] / report["kociemba"]["total_s_mean"], 3)
    report["load_at_end"] = round(os.getloadavg()[0], 2)
    report["wall_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
