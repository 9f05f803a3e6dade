"""The daemon's solving: each solver's answer planned on the rig, the quickest on the rig kept."""

from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool

import pytest

import solver
from robot.run import RunSettings
from robot.six_axis import SixAxisRig
from robot.solving import RigSolver
from solver.puzzles.cube.cubie import solved_facelets
from solver.puzzles.cube.geometry import FACES

RIG = SixAxisRig(
    motors={f: f for f in FACES},
    direction={f: 1 for f in FACES},
    quarter_turn_s=0.15,
    half_turn_s=0.25,
    settle_s=0.02,
    simultaneous_opposite=True,
)


@pytest.fixture
def rig_solver():
    made = []

    def make(**settings):
        made.append(RigSolver(RunSettings(**settings), RIG))
        return made[-1]

    yield make
    for one in made:
        one.close()


def test_two_phase_answers_alone_and_its_answer_is_recorded(rig_solver):
    state = solver.scramble(3, seed=11)["state"]
    solving = rig_solver(solve_budget_s=5.0, fallback_budget_s=2.0)
    solving.prepare()  # as the daemon does at start-up: the worker's tables loaded before the first run
    solution = solving.solve(state)
    (two_phase,) = solution.details["candidates"]  # no race: neural A* searches while the robot turns
    assert two_phase["solver"] == "two-phase" and two_phase["found"] and solution.details["solver"] == "two-phase"
    assert solver.apply(state, solution.text) == solved_facelets(3)
    assert RIG.planned_s(solution.moves) == pytest.approx(two_phase["planned_s"], abs=1e-3)


def test_neural_astar_solves_when_two_phase_gives_no_answer(rig_solver):
    state = solver.apply(solved_facelets(3), "R U F' L2 D")
    solving = rig_solver(solve_budget_s=5.0, fallback_budget_s=2.0)
    dead = Future()
    dead.set_exception(BrokenProcessPool("the worker died"))
    solving._start_two_phase = lambda _: dead
    solution = solving.solve(state)
    assert [(c["solver"], c["found"]) for c in solution.details["candidates"]] == [
        ("two-phase", False),
        ("neural-astar", True),
    ]
    assert solution.details["solver"] == "neural-astar" and solver.apply(state, solution.text) == solved_facelets(3)


def test_without_a_second_solver_only_astar_runs(rig_solver):
    state = solver.scramble(3, seed=12)["state"]
    solution = rig_solver(solve_budget_s=0.05, solve_fallback=None).solve(state)
    assert not solution.found and [c["solver"] for c in solution.details["candidates"]] == ["neural-astar"]


def test_a_2x2_comes_from_the_table(rig_solver):
    state = solver.scramble(2, seed=3)["state"]
    solution = rig_solver().solve(state)
    assert solution.found and solver.apply(state, solution.text) == solved_facelets(2)
    assert "candidates" not in solution.details
