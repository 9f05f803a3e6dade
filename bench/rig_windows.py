"""The rig-time neural A* on windows of two-phase's first answers, as the daemon's refiner searches them;
prints one JSON object.

    python bench/rig_windows.py [--states N] [--window K] [--budget-s S] [--seed N]

For N uniformly random states, two-phase's first answer (0.05 s, least motor time on robotd's default
rig, as the daemon asks it) is cut into every window of K consecutive rig commands; each window is searched
as the cube its commands solve (``solver.search.rig_astar.rig_search``, the rig perimeter at the daemon's
depth). A window answered within the budget is *quicker* when its motor time beats the commands it would
replace. Counts, the motor time saved and the median search time come out; with ``--value-network`` the
network is asked per state even when it is a per-child one (the search before it used the per-child
outputs), for a comparison on the same windows.
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
from solver.puzzles.cube.batch import Puzzle, from_cubie, to_cubie  # noqa: E402
from solver.puzzles.cube.cubie import CubieCube, apply_moves_cubie  # noqa: E402
from solver.puzzles.cube.notation import inverse_moves  # noqa: E402
from solver.puzzles.cube.scramble import random_states  # noqa: E402
from solver.search.heuristic import load_heuristic  # noqa: E402
from solver.search.rig_astar import rig_search  # noqa: E402
from solver.search.rig_metric import DEFAULT_RIG_DEPTH, Commands, RigPerimeter  # noqa: E402
from solver.search.twophase import prepare, solve_two_phase  # noqa: E402

FIRST_ANSWER_S = 0.05  # the daemon's first two-phase answer


def windows(states: np.ndarray, rig, length: int) -> list[tuple[CubieCube, int]]:
    """(the cube a window's commands solve, their motor time in ms) for every window of each first answer."""
    out = []
    for row in states:
        moves = solve_two_phase(to_cubie(row), budget_s=FIRST_ANSWER_S, max_length=0, cost=rig.planned_s, slack=1)
        plan = rig.plan(moves or [])
        for start in range(len(plan) - length + 1):
            part = plan[start : start + length]
            solved_by = apply_moves_cubie(CubieCube.solved(3), inverse_moves([m for c in part for m in c.moves]))
            out.append((solved_by, round(1000 * sum(c.seconds for c in part))))
    return out


class PerState:
    """A network asked one estimate per state (a per-child one through its own 1 + best child)."""

    def __init__(self, network):
        self.network = network

    def __call__(self, states: np.ndarray) -> np.ndarray:
        return self.network(states)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=10)
    parser.add_argument("--window", type=int, default=7, help="rig commands per window")
    parser.add_argument("--budget-s", type=float, default=0.3, help="per window (the daemon's RigShortcut)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--value-network", action="store_true", help="one network call per state")
    args = parser.parse_args()
    rig = rig_from_config(Config({}).section("rig"))
    commands = Commands.of_rig(rig.planned_s)
    perimeter = RigPerimeter(commands, DEFAULT_RIG_DEPTH)
    network = load_heuristic()
    heuristic = PerState(network) if args.value_network else network
    prepare()
    cases = windows(random_states(Puzzle.cube3(), args.states, np.random.default_rng(args.seed)), rig, args.window)
    rig_search(from_cubie(cases[0][0]), commands, perimeter, heuristic, args.budget_s)  # warm-up
    seconds, answered, quicker, saved_ms = [], 0, 0, 0
    for cube, ms in cases:
        begun = time.perf_counter()
        moves = rig_search(from_cubie(cube), commands, perimeter, heuristic, args.budget_s)
        seconds.append(time.perf_counter() - begun)
        if moves is not None:
            answered += 1
            found = round(1000 * rig.planned_s(moves))
            quicker += found < ms
            saved_ms += max(0, ms - found)
    report = {
        "states": args.states,
        "window": args.window,
        "budget_s": args.budget_s,
        "per_state_network": args.value_network,
        "load": os.getloadavg()[0],
        "windows": len(cases),
        "answered": answered,
        "quicker": quicker,
        "saved_ms": saved_ms,
        "median_s": round(float(np.median(seconds)), 4),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
