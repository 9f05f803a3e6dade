"""A flip/spin run's solution is the one the rig performs quickest (``FlipSpinRig.suited``, ``rig_solution``)."""

import pytest

import solver
from robot.flipspin import FlipSpinRig
from solver.api import Solution
from solver.puzzles.cube.cubie import from_facelets
from solver.puzzles.cube.notation import format_moves


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_suited_keeps_a_solution_that_is_never_slower_on_the_rig(seed):
    state = solver.scramble(2, seed=seed)["state"]
    first = solver.solve(state)
    rig = FlipSpinRig(size=2)
    chosen = rig.suited(state, first)
    assert from_facelets(solver.apply(state, format_moves(chosen.moves))).is_solved()
    picked = chosen.details["rig_solution"]
    assert rig.planned_s(chosen.moves) == pytest.approx(picked["planned_s"], abs=1e-3)
    assert picked["planned_s"] <= picked["solver_planned_s"] + 1e-9
    assert picked["candidates"] >= 2 and chosen.seconds >= first.seconds


def test_suited_with_no_budget_or_no_solution_changes_nothing():
    state = solver.scramble(2, seed=4)["state"]
    first = solver.solve(state)
    assert FlipSpinRig(size=2, suited_budget_s=0).suited(state, first) is first
    missing = Solution([], "htm", 0.1, 2, False)
    assert FlipSpinRig(size=2).suited(state, missing) is missing
