"""The daemon's refiner: quicker completions spliced in while the robot executes, and who found which move."""

import time

from robot.config import Config
from robot.rig import rig_from_config
from robot.run import RunSettings
from robot.solving import RigSolver
from solver.api import Solution, apply
from solver.puzzles.cube.cubie import solved_facelets
from solver.puzzles.cube.notation import format_moves, parse_moves
from solver.search.heuristic import load_heuristic

RIG = rig_from_config(Config({}).section("rig"))


def test_the_rig_time_search_splices_a_quicker_end_ahead_of_the_robot():
    state = apply(solved_facelets(3), "R U F L")
    slow = parse_moves("L' F' U' U U' R'")  # solves it, with two wasted turns after the second command
    solving = RigSolver(RunSettings(solve_fallback=None), RIG)
    solving.rig_depth = 2
    solving.prepare_refiner()
    load_heuristic().warm_up(8)  # as the daemon does at start-up
    started_at = time.perf_counter()
    plan = solving.spliced_plan(
        Solution(slow, "htm", 0.0, 3, True, {"solver": "two-phase"}),
        lambda: plan.moves_begun_by(time.perf_counter() - started_at),
    )
    solving.refine(state, plan, started_at)
    assert apply(state, format_moves(plan.moves)) == solved_facelets(3)
    assert plan.motor_s < RIG.planned_s(slow) - 0.3
    segments = plan.segments()
    assert segments[0]["solver"] == "two-phase" and segments[-1]["solver"] == "neural-astar"
    assert plan.splices and plan.splices[0]["solver"] == "neural-astar"


def test_a_2x2x2_plan_is_left_as_it_is():
    solving = RigSolver(RunSettings(solve_fallback=None), RIG)
    padded = parse_moves("U' U U' R'")
    plan = solving.spliced_plan(Solution(padded, "htm", 0.0, 2, True, {}), lambda: 0)
    solving.refine(apply(solved_facelets(2), "R U"), plan, time.perf_counter())
    assert plan.moves == padded and plan.splices == []
    assert plan.segments() == [{"solver": "pocket-table", "moves": "U' U U' R'", "planned_s": 0.68, "htm": 4, "qtm": 4}]
