"""Flip/spin rig plans: naive, optimal, either-layer (2x2x2) and rig-suited solutions; prints one JSON object.

    python bench/flipspin.py [--quick] [--states N]

Seeded random states (``solver.scramble(size, seed=k)``) are solved, the
3x3x3 by the two-phase solver with a short budget, the 2x2x2 optimally
(HTM); each solution is planned from the same start pose (where the
default scan leaves the cube) with the default timing. The variants:

- ``naive``: the one-move-at-a-time baseline;
- ``optimal``: the optimal planner, each move's face on the spinner;
- ``optimal_either_layer`` (2x2x2): a move may turn the opposite layer;
- ``optimal_rig_suited``: ``rig_solution`` solves the state seen in
  several orientations and keeps, of those solutions and the first one,
  the one the optimal planner performs quickest (2x2x2: with either
  layer); ``extra_solving_s`` is what that costs on top of the first
  solve, candidates' planning included. For the 3x3x3 its first search
  aims at 19 moves (the first solve stops at 22), so two controls
  separate its parts: ``optimal_one_longer_search`` (one two-phase
  search, the same aim and budget, no choice) and
  ``optimal_rig_suited_aim_22`` (rig_solution aiming at 22 moves like the
  first solve: the choice among equally short solutions alone).

Robot moves are flips, spins and layer turns (cover moves are not
counted); robot time is the plan's estimate, cover moves and settling
included. Also given: each kind of robot move per solver move, the count
with a run of consecutive flips taken as one movement, and
``fewest_robot_moves_per_solver_move``, the optimal planner's answer
when every robot move costs the same and cover moves nothing. ``anchor``
is the 1.85 robot moves per solver move published for CUBOTino (the
figure quoted in the project brief), for comparison only: its count and
its solutions differ from ours.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# bench/serial.py would shadow pyserial: take this folder off the path, put the repo first
sys.path[:] = [str(REPO)] + [p for p in sys.path if Path(p or ".").resolve() != REPO / "bench"]

import solver  # noqa: E402
from robot.flipspin import HOME, FlipSpinRig, FlipSpinTiming, plan_naive, plan_optimal, plan_scan, rig_solution  # noqa: E402
from robot.flipspin.pose import ROBOT_MOVES  # noqa: E402
from solver.puzzles.cube.cubie import from_facelets  # noqa: E402
from solver.puzzles.cube.notation import format_moves  # noqa: E402
from solver.search.twophase import prepare, solve_two_phase  # noqa: E402

ANCHOR_ROBOT_MOVES_PER_MOVE = 1.85
TWO_PHASE_BUDGET_S = 0.5  # it stops at 22 moves or fewer, mostly within 0.1 s
SUITED = {3: {"candidates": 4, "budget_s": 1.0, "max_length": 19}, 2: {"candidates": 24, "budget_s": 1.0}}
SAME_AIM = {"candidates": 8, "budget_s": 1.0, "max_length": 22}  # the first solve's aim: choice alone
LONGER_SEARCH = {"budget_s": 1.0, "max_length": 19}  # rig_solution's aim and budget, one search
# every robot move 1 s, cover moves free: the optimal planner then finds the fewest robot moves
UNIT_MOVES = FlipSpinTiming(
    flip_s=1, spin_quarter_s=1, spin_half_s=1, turn_quarter_s=1, turn_half_s=1, hold_s=0, release_s=0, settle_s=0
)
EITHER_LAYER = partial(plan_optimal, either_layer=True)


def _checked(state: str, moves) -> list[int]:
    assert moves is not None and from_facelets(solver.apply(state, format_moves(moves))).is_solved()
    return list(moves)


def solutions(size: int, states: list[str]) -> list[list[int]]:
    """The first solve of each state: two-phase (3x3x3, short budget) or the optimal table (2x2x2)."""
    if size == 3:
        return [_checked(s, solve_two_phase(from_facelets(s), TWO_PHASE_BUDGET_S)) for s in states]
    return [_checked(s, solver.solve(s).moves) for s in states]


def suited(
    size: int, states: list[str], firsts: list[list[int]], start, timing: FlipSpinTiming, options: dict
) -> tuple[list[list[int]], dict]:
    """``rig_solution`` for each state from the rig at ``start``; the solutions and what choosing cost."""
    rig = FlipSpinRig(timing=timing, pose=start, size=size)
    chosen, extra_s, candidates = [], [], []
    for state, first in zip(states, firsts):
        answer = rig_solution(state, rig, first=first, **options)
        chosen.append(_checked(state, answer.moves))
        extra_s.append(answer.solve_s)
        candidates.append(answer.candidates)
    return chosen, {
        "extra_solving_s": _stats(extra_s, with_max=True),
        "options": options,
        "candidates_planned_mean": _r(statistics.fmean(candidates)),
    }


def one_longer_search(states: list[str], budget_s: float, max_length: int) -> tuple[list[list[int]], dict]:
    """A control for ``suited``: one two-phase search per state with the same aim and a like budget."""
    moves, seconds = [], []
    for state in states:
        began = time.perf_counter()
        moves.append(_checked(state, solve_two_phase(from_facelets(state), budget_s, max_length)))
        seconds.append(time.perf_counter() - began)
    options = {"budget_s": budget_s, "max_length": max_length}
    return moves, {"solving_s": _stats(seconds, with_max=True), "options": options}  # instead of the first solve


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
    return {
        "solver_moves_mean": _r(solver_moves / len(moves_list)),
        "robot_moves_per_solver_move": _stats(per_move),
        "per_solver_move": {kind: _r(count / solver_moves) for kind, count in kinds.items()},
        "robot_moves_per_solver_move_flip_runs_as_one": _stats(runs_as_one),
        "robot_time_s": _stats(seconds),
        "planning_ms": {"median": _r(statistics.median(plan_ms)), "max": _r(max(plan_ms))},
        "_seconds": seconds,
    }


def _stats(values: list[float], with_max: bool = False) -> dict:
    out = {"mean": _r(statistics.fmean(values)), "median": _r(statistics.median(values))}
    return {**out, "max": _r(max(values))} if with_max else out


def _saved(fast: dict, slow: dict) -> dict:
    return {
        "robot_time_saved_pct": _r(100 * (1 - sum(fast["_seconds"]) / sum(slow["_seconds"]))),
        "time_ratio_median": _r(statistics.median(s / f for s, f in zip(slow["_seconds"], fast["_seconds"]))),
    }


def variants(size: int, states: list[str], firsts: list[list[int]], start, timing: FlipSpinTiming) -> dict:
    """Name -> (solutions, what finding them cost beyond the first solve, planner)."""
    best = EITHER_LAYER if size == 2 else plan_optimal
    out = {"naive": (firsts, {}, plan_naive), "optimal": (firsts, {}, plan_optimal)}
    if size == 2:
        out["optimal_either_layer"] = (firsts, {}, EITHER_LAYER)
    out["optimal_rig_suited"] = (*suited(size, states, firsts, start, timing, SUITED[size]), best)
    if size == 3:
        out["optimal_one_longer_search"] = (*one_longer_search(states, **LONGER_SEARCH), plan_optimal)
        out["optimal_rig_suited_aim_22"] = (*suited(size, states, firsts, start, timing, SAME_AIM), plan_optimal)
    return out


def compare(size: int, states: list[str], firsts: list[list[int]], start, timing: FlipSpinTiming) -> dict:
    figures = {
        name: {**plan_figures(moves, planner, start, timing), **extra}
        for name, (moves, extra, planner) in variants(size, states, firsts, start, timing).items()
    }
    improvement = {
        name: {"over_naive": _saved(entry, figures["naive"]), "over_optimal": _saved(entry, figures["optimal"])}
        for name, entry in figures.items()
        if name != "naive"
    }
    summary = {
        name: {
            "robot_moves_per_solver_move": entry["robot_moves_per_solver_move"],
            "robot_time_s": entry["robot_time_s"],
            "solver_moves_mean": entry["solver_moves_mean"],
            **{f"{key}_mean": entry[key]["mean"] for key in ("extra_solving_s", "solving_s") if key in entry},
        }
        for name, entry in figures.items()
    }
    for entry in figures.values():
        del entry["_seconds"]
    floors = {"optimal": plan_optimal, **({"optimal_either_layer": EITHER_LAYER} if size == 2 else {})}
    floor = {
        name: plan_figures(firsts, planner, start, UNIT_MOVES)["robot_moves_per_solver_move"]
        for name, planner in floors.items()
    }
    return {
        "solves": len(states),
        "summary": summary,
        **figures,
        "improvement": improvement,
        "fewest_robot_moves_per_solver_move": floor,
    }


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
    report = {
        "bench": "flipspin",
        "states_per_puzzle": count,
        "timing": timing.as_dict(),
        "two_phase_budget_s": TWO_PHASE_BUDGET_S,
        "anchor": {
            "robot_moves_per_solver_move": ANCHOR_ROBOT_MOVES_PER_MOVE,
            "source": "CUBOTino, as published (figure quoted in the project brief)",
        },
        "start_pose": {"faces": scan.end.faces, "spinner": scan.end.spinner, "cover": scan.end.cover},
        "scan": {
            "captures": len(scan.captures),
            "robot_moves": scan.robot_moves,
            "seconds": _r(scan.seconds),
            "ops": " ".join(op.text for op in scan.ops),
        },
    }
    for size, name in ((3, "3x3x3"), (2, "2x2x2")):
        states = [solver.scramble(size, seed=seed)["state"] for seed in range(count)]
        solve_began = time.perf_counter()
        firsts = solutions(size, states)
        solve_s = time.perf_counter() - solve_began
        report[name] = {
            **compare(size, states, firsts, scan.end, timing),
            "first_solving_s_total": _r(solve_s),
            "solver": "two-phase" if size == 3 else "optimal table (HTM)",
        }
    report["wall_s"] = _r(time.perf_counter() - began)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
