"""The daemon's solving: each solver's answer planned on the rig, the quickest on the rig kept."""

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


def test_every_answer_is_recorded_and_the_quickest_on_the_rig_is_kept(rig_solver):
    state = solver.scramble(3, seed=11)["state"]
    solution = rig_solver(solve_budget_s=5.0, fallback_budget_s=2.0).solve(state)
    candidates = solution.details["candidates"]
    assert [c["solver"] for c in candidates] == ["neural-astar", "two-phase"]
    found = [c for c in candidates if c["found"]]
    assert found and solver.apply(state, solution.text) == solved_facelets(3)
    chosen = min(found, key=lambda c: (c["planned_s"], c["solve_s"]))
    assert solution.details["solver"] == chosen["solver"]
    assert RIG.planned_s(solution.moves) == pytest.approx(chosen["planned_s"], abs=1e-3)


def test_astar_stops_once_two_phase_has_answered(rig_solver):
    state = solver.scramble(3, seed=13)["state"]
    solution = rig_solver(solve_budget_s=60.0, fallback_budget_s=2.0).solve(state)
    astar, two_phase = solution.details["candidates"]
    assert two_phase["found"] and solution.details["solver"] == "two-phase"
    assert not astar["found"] and solution.details["budget_exhausted"]  # ended long before its 60 s


def test_two_phase_answers_when_astar_runs_out(rig_solver):
    state = solver.scramble(3, seed=12)["state"]
    solution = rig_solver(solve_budget_s=0.05, fallback_budget_s=2.0).solve(state)
    astar, two_phase = solution.details["candidates"]
    assert solution.found and solution.details["solver"] == "two-phase"
    assert not astar["found"] and astar["planned_s"] is None and two_phase["found"]


def test_without_a_second_solver_only_astar_runs(rig_solver):
    state = solver.scramble(3, seed=12)["state"]
    solution = rig_solver(solve_budget_s=0.05, solve_fallback=None).solve(state)
    assert not solution.found and [c["solver"] for c in solution.details["candidates"]] == ["neural-astar"]


def test_a_2x2_comes_from_the_table(rig_solver):
    state = solver.scramble(2, seed=3)["state"]
    solution = rig_solver().solve(state)
    assert solution.found and solver.apply(state, solution.text) == solved_facelets(2)
    assert "candidates" not in solution.details
