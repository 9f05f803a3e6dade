"""Flip/spin rig plans: the optimal planner against the naive baseline; prints one JSON object.

    python bench/flipspin.py [--quick] [--states N]

Seeded random states (``solver.scramble(size, seed=k)``) are solved, the
3x3x3 by the two-phase solver with a short budget, the 2x2x2 optimally
(HTM); each solution is planned by both planners from the same start pose
(where the default scan leaves the cube) with the default timing. Robot
moves are flips, spins and layer turns (cover moves are not counted);
robot time is the plan's estimate, cover moves and settling included.
Also given: each kind of robot move per solver move, and the count with
a run of consecutive flips taken as one movement (robot scripts often
write "flip twice" as one command), to show how much the figure depends
on what is counted; and ``fewest_robot_moves_per_solver_move``, the
optimal planner's answer when every robot move costs the same and cover
moves nothing: the floor of the count under this rig's physics.
``anchor`` is the 1.85 robot moves per solver move published for CUBOTino
(the figure quoted in the project brief), for comparison only: its count
and its solutions differ from ours.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# bench/serial.py would shadow pyserial: take this folder off the path, put the repo first
sys.path[:] = [str(REPO)] + [p for p in sys.path if Path(p or ".").resolve() != REPO / "bench"]

import solver  # noqa: E402
from robot.flipspin.pose import ROBOT_MOVES  # noqa: E402
from robot.flipspin import HOME, FlipSpinTiming, plan_naive, plan_optimal, plan_scan  # noqa: E402
from solver.cubie import from_facelets  # noqa: E402
from solver.notation import format_moves  # noqa: E402
from solver.twophase import prepare, solve_two_phase  # noqa: E402

ANCHOR_ROBOT_MOVES_PER_MOVE = 1.85
TWO_PHASE_BUDGET_S = 0.5  # it stops at 22 moves or fewer, mostly within 0.1 s
PLANNERS = {"optimal": plan_optimal, "naive": plan_naive}
# every robot move 1 s, cover moves free: the optimal planner then finds the fewest robot moves
UNIT_MOVES = FlipSpinTiming(flip_s=1, spin_quarter_s=1, spin_half_s=1, turn_quarter_s=1, turn_half_s=1,
                            hold_s=0, release_s=0, settle_s=0)


def solutions(size: int, count: int) -> list[list[int]]:
    """Checked solutions of ``count`` seeded random states."""
    out = []
    for seed in range(count):
        state = solver.scramble(size, seed=seed)["state"]
        if size == 3:
            moves = solve_two_phase(from_facelets(state), TWO_PHASE_BUDGET_S)
        else:
            moves = solver.solve(state).moves
        assert moves is not None and from_facelets(solver.apply(state, format_moves(moves))).is_solved()
        out.append(moves)
    return out


def plan_figures(moves_list: list[list[int]], planner, start, timing: FlipSpinTiming) -> dict:
    per_move, seconds, plan_ms, runs_as_one = [], [], [], []
    kinds = dict.fromkeys(ROBOT_MOVES, 0)
    for moves in moves_list:
        began = time.perf_counter()
        steps, _ = planner(moves, start, timing)
        plan_ms.append((time.perf_counter() - began) * 1e3)
        ops = [op for step in steps for op in step.ops if op.is_robot_move]
        for op in ops:
            kinds[op.kind] += 1
        per_move.append(len(ops) / max(len(moves), 1))
        merged = sum(1 for k, op in enumerate(ops) if op.kind != "flip" or k == 0 or ops[k - 1].kind != "flip")
        runs_as_one.append(merged / max(len(moves), 1))
        seconds.append(sum(step.seconds for step in steps))
    solver_moves = sum(len(m) for m in moves_list)
    return {"robot_moves_per_solver_move": {"mean": _r(statistics.fmean(per_move)),
                                            "median": _r(statistics.median(per_move))},
            "per_solver_move": {kind: _r(count / solver_moves) for kind, count in kinds.items()},
            "robot_moves_per_solver_move_flip_runs_as_one": {"mean": _r(statistics.fmean(runs_as_one)),
                                                             "median": _r(statistics.median(runs_as_one))},
            "robot_time_s": {"mean": _r(statistics.fmean(seconds)), "median": _r(statistics.median(seconds))},
            "planning_ms": {"median": _r(statistics.median(plan_ms)), "max": _r(max(plan_ms))},
            "_per_move": per_move, "_seconds": seconds, "_solver_moves": solver_moves}


def compare(moves_list: list[list[int]], start, timing: FlipSpinTiming) -> dict:
    figures = {name: plan_figures(moves_list, planner, start, timing) for name, planner in PLANNERS.items()}
    fast, slow = figures["optimal"], figures["naive"]
    improvement = {
        "robot_moves_saved_pct": _r(100 * (1 - sum(fast["_per_move"]) / sum(slow["_per_move"]))),
        "robot_time_saved_pct": _r(100 * (1 - sum(fast["_seconds"]) / sum(slow["_seconds"]))),
        "time_ratio_naive_over_optimal_median": _r(statistics.median(
            s / f for s, f in zip(slow["_seconds"], fast["_seconds"]))),
    }
    for entry in figures.values():
        for key in [k for k in entry if k.startswith("_")]:
            del entry[key]
    floor = plan_figures(moves_list, plan_optimal, start, UNIT_MOVES)["robot_moves_per_solver_move"]
    return {"solves": len(moves_list), "solver_moves_mean": _r(statistics.fmean(len(m) for m in moves_list)),
            **figures, "improvement_over_naive": improvement, "fewest_robot_moves_per_solver_move": floor}


def _r(value: float) -> float:
    return round(float(value), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 states per puzzle instead of 100")
    parser.add_argument("--states", type=int, default=None, help="states per puzzle")
    args = parser.parse_args()
    count = args.states or (20 if args.quick else 100)
    began = time.perf_counter()
    timing = FlipSpinTiming()
    scan = plan_scan(HOME, timing)
    prepare()
    report = {"bench": "flipspin", "states_per_puzzle": count, "timing": timing.as_dict(),
              "two_phase_budget_s": TWO_PHASE_BUDGET_S,
              "anchor": {"robot_moves_per_solver_move": ANCHOR_ROBOT_MOVES_PER_MOVE,
                         "source": "CUBOTino, as published (figure quoted in the project brief)"},
              "start_pose": {"faces": scan.end.faces, "spinner": scan.end.spinner, "cover": scan.end.cover},
              "scan": {"captures": len(scan.captures), "robot_moves": scan.robot_moves,
                       "seconds": _r(scan.seconds), "ops": " ".join(op.text for op in scan.ops)}}
    for size, name in ((3, "3x3x3"), (2, "2x2x2")):
        solve_began = time.perf_counter()
        moves_list = solutions(size, count)
        solve_s = time.perf_counter() - solve_began
        report[name] = {**compare(moves_list, scan.end, timing), "solving_s": _r(solve_s),
                        "solver": "two-phase" if size == 3 else "optimal table (HTM)"}
    report["wall_s"] = _r(time.perf_counter() - began)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
