"""Flip/spin dry runs on servos the host pulses itself (gpio, pca9685): the plan's estimate against the motor time
the simulated servos really take, and robot time per solve with and without ``rig_solution``. One JSON object.

    python bench/flipspin_dry_time.py [--quick] [--runs N] [--states N]

``dry_runs``: ``robotd --sim`` runs at the default servo speed (``servo_us_per_ms`` 2, settle 0.05 s,
as on a real MG996R-class rig), each controller and puzzle, seeded scrambles; ``actual_s`` is the
measured execution, ``estimated_s`` the plan's estimate from the same setting (its ratio should be
within 5 %). ``plans``: for seeded states, the robot time (plan estimate, the servo-derived timing) of
the solver's solution from the scan's end pose, and of ``rig_solution``'s choice.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:] = [str(REPO)] + [p for p in sys.path if Path(p or ".").resolve() != REPO / "bench"]

import solver  # noqa: E402
from robot import assemble  # noqa: E402
from robot.flipspin import FlipSpinRig, rig_solution  # noqa: E402
from robot.flipspin.rig import SUITED_CANDIDATES  # noqa: E402
from solver.puzzles.cube.cubie import from_facelets  # noqa: E402
from solver.search.twophase import prepare, solve_two_phase  # noqa: E402


def config(folder: Path, controller: str) -> Path:
    path = folder / "robotd.toml"
    path.write_text(
        f'[robotd]\ndata_dir = "{folder / "data"}"\n[solver]\nbudget_s = 20\n[rig]\nkind = "flip-spin"\n'
        f'[controller]\nkind = "{controller}"\n'
    )
    return path


def dry_runs(controller: str, puzzle: int, runs: int, suited: bool) -> dict:
    ratios, actual, estimated = [], [], []
    with tempfile.TemporaryDirectory() as folder:
        built = assemble.build(config(Path(folder), controller), sim=True, web=False)
        if not suited:
            built.parts.sections["rig"].suited_budget_s = 0
        try:
            for seed in range(runs):
                summary = built.once(puzzle=puzzle, seed=100 + seed, moves=None if puzzle == 2 else 20)
                assert summary["outcome"] == "done" and summary["solved"], summary["error"]
                actual.append(summary["actual_s"])
                estimated.append(summary["estimated_s"])
                ratios.append(summary["actual_s"] / summary["estimated_s"])
        finally:
            built.close()
    return {
        "runs": runs,
        "rig_solution": suited,
        "robot_time_s": {"median": _r(statistics.median(actual)), "mean": _r(statistics.fmean(actual))},
        "estimated_s": {"median": _r(statistics.median(estimated)), "mean": _r(statistics.fmean(estimated))},
        "actual_over_estimate": {"median": _r(statistics.median(ratios)), "max": _r(max(ratios))},
    }


def plans(states: int) -> dict:
    """Plan estimates with the servo-derived timing (the gpio defaults) from the default scan's end pose."""
    with tempfile.TemporaryDirectory() as folder:
        rig = assemble.load_parts(config(Path(folder), "gpio"), sim=True).sections["rig"]
    start = rig.scan_plan().end
    out = {"timing": rig.timing.as_dict()}
    for size in (2, 3):
        solver_s, suited_s = [], []
        rig = FlipSpinRig(timing=rig.timing, pose=start, size=size)
        for seed in range(states):
            state = solver.scramble(size, seed=seed)["state"]
            first = solver.solve(state).moves if size == 2 else solve_two_phase(from_facelets(state), 0.5, 20)
            solver_s.append(rig.planned_s(first))
            suited_s.append(rig_solution(state, rig, SUITED_CANDIDATES[size], 1.0, first=first).seconds)
        out[f"{size}x{size}x{size}"] = {
            "states": states,
            "robot_time_s_solver": _r(statistics.fmean(solver_s)),
            "robot_time_s_rig_solution": _r(statistics.fmean(suited_s)),
            "saved_pct": _r(100 * (1 - sum(suited_s) / sum(solver_s))),
        }
    return out


def _r(value: float) -> float:
    return round(float(value), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 dry runs per case, 10 states")
    parser.add_argument("--runs", type=int, default=None, help="dry runs per controller and puzzle (0: none)")
    parser.add_argument("--states", type=int, default=None, help="states for the plan estimates")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    runs = args.runs if args.runs is not None else 2 if args.quick else 3
    states = args.states or (10 if args.quick else 20)
    began = time.perf_counter()
    prepare()
    report: dict = {"bench": "flipspin_dry_time", "plans": plans(states), "dry_runs": {}}
    for controller in ("gpio", "pca9685") if runs else ():
        for puzzle in (2, 3):
            for suited in (True, False) if controller == "gpio" else (True,):
                key = f"{controller} {puzzle}x{puzzle}x{puzzle}" + ("" if suited else " solver's solution")
                report["dry_runs"][key] = dry_runs(controller, puzzle, runs, suited)
    report["wall_s"] = _r(time.perf_counter() - began)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
