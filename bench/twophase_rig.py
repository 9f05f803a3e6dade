"""Two-phase's least motor time on the default rig within a budget, compiled loops against Python loops.

    python bench/twophase_rig.py [--cubes N] [--seed S] [--budgets-s 0.05,0.1,0.3,1] [--slack K]
        [--loops compiled,python]

For N seeded, uniformly random states, ``solve_two_phase(cube, budget,
0, rig.planned_s, slack)`` (as the daemon's worker asks it: the solution
of least planned motor time found within the budget, weighing solutions
up to ``slack`` moves longer than the shortest found) with the compiled
search loops (``solver.search.twophase.native``) and with the Python ones.
Prints one JSON object: per loops and budget, the mean planned motor time,
mean HTM, and how many states got no answer within the budget; with the
load average at the start and end, since the figures depend on it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # bench/serial.py would shadow pyserial

from robot.config import Config  # noqa: E402
from robot.rig import rig_from_config  # noqa: E402
from solver.puzzles.cube.batch import Puzzle, to_cubie  # noqa: E402
from solver.puzzles.cube.scramble import random_states  # noqa: E402
from solver.search.twophase import native, prepare, solve_two_phase  # noqa: E402


def _row(cubes, rig, budget_s: float, slack: int, compiled: bool) -> dict:
    motor, htm, unanswered = [], [], 0
    for cube in cubes:
        moves = solve_two_phase(cube, budget_s, 0, rig.planned_s, slack, native=compiled)
        if moves is None:
            unanswered += 1
            continue
        motor.append(rig.planned_s(moves))
        htm.append(len(moves))
    return {
        "budget_s": budget_s,
        "motor_s_mean": round(float(np.mean(motor)), 3) if motor else None,
        "htm_mean": round(float(np.mean(htm)), 2) if htm else None,
        "unanswered": unanswered,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cubes", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--budgets-s", default="0.05,0.1,0.3,1")
    parser.add_argument("--slack", type=int, default=1)
    parser.add_argument("--loops", default="compiled,python")
    args = parser.parse_args()
    rig = rig_from_config(Config({}).section("rig"))
    prepare()
    states = random_states(Puzzle.cube3(), args.cubes, np.random.default_rng(args.seed))
    cubes = [to_cubie(row) for row in states]
    load_at_start = os.getloadavg()[0]
    started = time.perf_counter()
    out: dict = {"cubes": args.cubes, "seed": args.seed, "slack": args.slack, "compiled_loops": native.status()}
    for loops in args.loops.split(","):
        if loops == "compiled" and native.library() is None:
            out[loops] = None
            continue
        budgets = [float(b) for b in args.budgets_s.split(",")]
        out[loops] = [_row(cubes, rig, b, args.slack, loops == "compiled") for b in budgets]
    out.update(load_at_start=load_at_start, load_at_end=os.getloadavg()[0], wall_s=round(time.perf_counter() - started))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
