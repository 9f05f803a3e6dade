"""What a user waits for on a 3x3x3: solve time plus motor time, the daemon's solvers against kociemba.

    python bench/robot_time.py [--cubes N] [--seed S] [--budget-s S] [--quick] [--no-splice] [--skip-neural]
        [--first-answer-s S] [--refine-budgets-s 0.15,0.3,0.6,1]

On the same N seeded, uniformly random states (default 100), with the
default ``[rig]`` (a six-motor rig: quarter turn 0.15 s, half turn 0.25 s,
settle 0.02 s, opposite faces together):

- ``daemon``: the daemon's solving with its defaults (``robot.solving``:
  two-phase's least motor time in ``FIRST_ANSWER_S``), then, while a
  simulated robot executes the plan at the rig's planned pace, the refiner
  splicing in quicker completions (``solver.search.splice``; not with
  ``--no-splice``). As ``LinkMotion.run_feed`` does, the robot takes each
  command ``feed_lead_s`` before it begins, and a completion counts only if
  it was found before the robot took the command where it starts: the
  daemon's time is the solve wall time plus the motor time of the commands
  as executed;
- ``neural``: neural A* alone with the same budget;
- ``two_phase``: two-phase alone as the daemon's worker runs it, in this process;
- ``kociemba``: the ``kociemba`` package (Kociemba's two-phase in C; a
  bench-only dependency, ``pip install -e ".[bench]"``), planned on the same rig.

Per solver: the fraction answered, which solver the daemon kept, mean,
median and p90 solve wall time, planned motor time and their sum, mean HTM
and QTM; for the daemon also the share of runs with moves from the neural
search, the splices by solver and the motor time they saved, and whether
every executed sequence solves its cube. Prints one JSON object; the
machine's load average at start and end is included, as the figures depend
on it, and the bench process's peak RSS.
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

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # bench/serial.py would shadow pyserial

from robot.config import Config  # noqa: E402
from robot.motion import feed_lead_s  # noqa: E402
from robot.rig import rig_from_config  # noqa: E402
from robot.run import RunSettings, is_solved  # noqa: E402
from robot.solving import FIRST_ANSWER_S, REFINE_BUDGETS_S, RigSolver, candidate  # noqa: E402
from solver.api import apply, solve  # noqa: E402
from solver.puzzles.cube.batch import Puzzle, to_cubie  # noqa: E402
from solver.puzzles.cube.cubie import from_facelets, to_facelets  # noqa: E402
from solver.puzzles.cube.notation import format_moves, parse_moves  # noqa: E402
from solver.puzzles.cube.scramble import random_states  # noqa: E402
from solver.search.splice import SplicedPlan  # noqa: E402
from solver.search.twophase import prepare, solve_two_phase  # noqa: E402


class RobotPace:
    """A robot that executes a plan at the rig's planned pace from ``started_at`` on, and takes each
    command ``lead_s`` before it begins (``LinkMotion.run_feed`` keeps the next command queued)."""

    def __init__(self, started_at: float, lead_s: float):
        self.started_at, self.lead_s = started_at, lead_s
        self.plan: SplicedPlan | None = None

    def taken(self) -> int:
        """Moves of the commands the robot has taken by now."""
        assert self.plan is not None
        return self.plan.moves_begun_by(time.perf_counter() - self.started_at + self.lead_s)


def run_daemon(
    states: list[str],
    settings: RunSettings,
    rig,
    splice: bool,
    first_answer_s: float,
    budgets: tuple | None,
    rig_depth: int | None = None,
) -> list[dict]:
    solving = RigSolver(settings, rig)
    solving.rig_depth = rig_depth or solving.rig_depth
    solving.first_answer_s = first_answer_s
    solving.refine_budgets_s = budgets or solving.refine_budgets_s
    solving.prepare()
    if splice:
        solving.prepare_refiner()
    solve(states[0], budget_s=0.05, fallback=None)  # the daemon warms the network at start-up too
    rows = []
    try:
        for state in states:
            start = time.perf_counter()
            solution = solving.solve(state)
            solve_s = time.perf_counter() - start
            robot = RobotPace(time.perf_counter(), feed_lead_s(rig))
            robot.plan = plan = solving.spliced_plan(solution, robot.taken)
            plan.lead_s = robot.lead_s
            if splice and solution.found:
                solving.refine(state, plan, robot.started_at)
            row = candidate(rig, "daemon", plan.moves if solution.found else None, solve_s)[0]
            row["planned_s"] = round(plan.motor_s, 3)  # as executed: the commands begun before a splice stay
            row["kept"] = solution.details.get("solver")
            row["sources"] = sorted({segment["solver"] for segment in plan.segments()})
            row["splices"] = plan.splices
            row["solves"] = not solution.found or is_solved(apply(state, format_moves(plan.moves)))
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


def run_two_phase(states: list[str], settings: RunSettings, rig) -> list[dict]:
    """Two-phase alone, in this process, as the daemon's worker runs it (first answer of at most 22 moves)."""
    prepare()
    rows = []
    for state in states:
        start = time.perf_counter()
        moves = solve_two_phase(from_facelets(state), settings.fallback_budget_s)
        rows.append(candidate(rig, "two-phase", moves, time.perf_counter() - start)[0])
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
        "solve_s_p90": round(float(np.percentile([r["solve_s"] for r in rows], 90)), 3),
        "planned_s_mean": mean("planned_s"),
        "htm_mean": mean("htm"),
        "qtm_mean": mean("qtm"),
    }
    if found:
        out["total_s_mean"] = round(float(np.mean([r["solve_s"] + r["planned_s"] for r in found])), 3)
    kept = [r.get("kept") for r in rows if r.get("kept")]
    if kept:
        out["kept"] = {name: kept.count(name) for name in sorted(set(kept))}
    if any("sources" in r for r in rows):
        out["runs_with_neural_moves"] = round(sum("neural-astar" in r["sources"] for r in rows) / len(rows), 3)
        splices = [s for r in rows for s in r["splices"]]
        out["splices"] = {
            name: sum(s["solver"] == name for s in splices) for name in sorted({s["solver"] for s in splices})
        }
        out["saved_s_mean"] = {
            name: round(sum(s["saved_s"] for s in splices if s["solver"] == name) / len(rows), 3)
            for name in out["splices"]
        }
        out["all_solve"] = all(r["solves"] for r in rows)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cubes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=20261124)
    parser.add_argument("--budget-s", type=float, default=None, help="neural A* budget (default: the daemon's)")
    parser.add_argument("--quick", action="store_true", help="10 cubes")
    parser.add_argument("--no-splice", action="store_true", help="the daemon without refining while the robot moves")
    parser.add_argument(
        "--first-answer-s", type=float, default=FIRST_ANSWER_S, help="how long two-phase's first answer searches"
    )
    parser.add_argument(
        "--refine-budgets-s", default=None, help="two-phase's budget per refining round, e.g. 0.15,0.3,0.6,1"
    )
    parser.add_argument("--skip-neural", action="store_true", help="leave out neural A* alone")
    parser.add_argument("--rig-depth", type=int, default=None, help="commands the rig perimeter covers")
    args = parser.parse_args()
    cubes = 10 if args.quick else args.cubes
    rows = random_states(Puzzle.cube3(), cubes, np.random.default_rng(args.seed))
    states = [to_facelets(to_cubie(row)) for row in rows]
    settings = RunSettings() if args.budget_s is None else RunSettings(solve_budget_s=args.budget_s)
    rig = rig_from_config(Config({}).section("rig"))
    budgets = tuple(float(b) for b in args.refine_budgets_s.split(",")) if args.refine_budgets_s else None
    load = os.getloadavg()[0]
    started = time.perf_counter()
    report = {
        "cubes": cubes,
        "seed": args.seed,
        "budget_s": settings.solve_budget_s,
        "fallback": settings.solve_fallback,
        "fallback_budget_s": settings.fallback_budget_s,
        "first_answer_s": args.first_answer_s,
        "refine_budgets_s": budgets or REFINE_BUDGETS_S,
        "rig": rig.status(),
        "load_at_start": round(load, 2),
    }
    report["daemon"] = summarise(
        run_daemon(states, settings, rig, not args.no_splice, args.first_answer_s, budgets, args.rig_depth)
    )
    if not args.skip_neural:
        report["neural"] = summarise(run_neural(states, settings, rig))
    report["two_phase"] = summarise(run_two_phase(states, settings, rig))
    report["kociemba"] = summarise(run_kociemba(states, rig))
    if report["daemon"].get("total_s_mean") and report["kociemba"].get("total_s_mean"):
        report["daemon_over_kociemba"] = round(report["daemon"]["total_s_mean"] / report["kociemba"]["total_s_mean"], 3)
    report["load_at_end"] = round(os.getloadavg()[0], 2)
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    report["wall_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
