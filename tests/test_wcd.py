"""The weighted convolutional distance (solver.search.wcd) and choosing the 3x3x3 A* heuristic by name."""

import numpy as np
import pytest

from solver import InvalidState, apply, solve
from solver.cli import main as cli_main
from solver.puzzles.cube.batch import Puzzle, apply_all_moves, solved, to_cubie
from solver.puzzles.cube.cubie import apply_moves_cubie, solved_facelets, to_facelets
from solver.puzzles.cube.scramble import random_scrambles
from solver.search.astar import search
from solver.search.heuristic import HEURISTICS, check_heuristic, load_heuristic, load_model
from solver.search.wcd import WeightedConvolution

PUZZLE = Puzzle.cube3()
SOLVED = solved(PUZZLE)[0]


def misplaced(states: np.ndarray) -> np.ndarray:
    """A cheap stand-in estimate: slots off their solved value, over 8."""
    return ((states != SOLVED).sum(axis=1) / 8).astype(np.float32)


def scrambled(depth: int, count: int, seed: int) -> np.ndarray:
    states, _ = random_scrambles(PUZZLE, np.full(count, depth), np.random.default_rng(seed), quarter_turns_only=True)
    return states


def naive_wcd(state: np.ndarray, hops: int, mu: float, temperature: float) -> float:
    """The definition, one state at a time by recursion: d_k+1(s) = mu d_k(s) + (1 - mu) sum_a p_a(s) d_k(s_a)."""
    if hops == 0:
        return float(misplaced(state[None])[0])
    neighbours = apply_all_moves(PUZZLE, state[None], PUZZLE.quarter_turns)[0]
    f = misplaced(neighbours).astype(np.float64)
    p = np.exp(-f / temperature) / np.exp(-f / temperature).sum()
    inner = [naive_wcd(n, hops - 1, mu, temperature) for n in neighbours]
    return mu * naive_wcd(state, hops - 1, mu, temperature) + (1 - mu) * float(p @ inner)


@pytest.mark.parametrize("hops", [0, 1, 2])
def test_vectorised_wcd_matches_the_recursive_definition(hops):
    states = scrambled(6, 3, seed=hops)
    wcd = WeightedConvolution(misplaced, mu=0.3, temperature=0.7, hops=hops)
    expected = [naive_wcd(s, hops, 0.3, 0.7) for s in states]
    assert np.allclose(wcd(states), expected, atol=1e-5)


def test_zero_hops_is_the_estimate_and_solved_is_zero():
    states = np.concatenate([scrambled(5, 4, seed=3), SOLVED[None]])
    assert np.allclose(WeightedConvolution(misplaced, hops=0)(states)[:-1], misplaced(states)[:-1])
    assert WeightedConvolution(misplaced)(states)[-1] == 0.0
    assert WeightedConvolution(misplaced)(states[:0]).shape == (0,)


def test_attention_weights_sum_to_one_and_favour_the_closer_neighbour():
    wcd = WeightedConvolution(misplaced)
    weights = wcd.weights(np.array([[3.0, 2.0, 4.0] * 4, [5.0] * 12]))
    assert np.allclose(weights.sum(axis=1), 1.0)
    assert weights[0].argmax() == 1 and np.allclose(weights[1], 1 / 12)


@pytest.mark.parametrize("bad", [{"mu": 1.5}, {"temperature": 0.0}, {"hops": -1}])
def test_bad_wcd_settings_are_refused(bad):
    with pytest.raises(ValueError):
        WeightedConvolution(misplaced, **bad)


def test_heuristic_is_chosen_by_one_validated_name():
    assert HEURISTICS == ("network", "wcd")
    assert isinstance(load_heuristic("wcd"), WeightedConvolution)
    assert load_heuristic("network") is load_model()
    message = "unknown heuristic 'manhattan': use 'network' or 'wcd'"
    with pytest.raises(InvalidState, match=message):
        check_heuristic("manhattan")
    with pytest.raises(InvalidState, match=message):
        solve(solved_facelets(3), heuristic="manhattan")


def test_cli_refuses_an_unknown_heuristic(capsys):
    with pytest.raises(SystemExit) as stop:
        cli_main(["solve", "--state", "U" * 54, "--heuristic", "manhattan"])
    assert stop.value.code == 2 and "invalid choice: 'manhattan'" in capsys.readouterr().err


def test_astar_with_wcd_solves_short_scrambles_without_a_perimeter():
    wcd = load_heuristic("wcd")
    for state in scrambled(5, 2, seed=11):
        cube = to_cubie(state)
        result = search(cube, wcd, batch=20, perimeter=None, budget_s=30)
        assert result.found and len(result.moves) <= 5
        assert apply_moves_cubie(cube, result.moves).is_solved()


def test_solve_reports_the_heuristic_it_used():
    state = to_facelets(to_cubie(scrambled(4, 1, seed=2)[0]))
    solution = solve(state, heuristic="wcd", perimeter=0, fallback=None, budget_s=30, batch=20)
    assert solution.found and solution.details["heuristic"] == "wcd"
    assert apply(state, solution.text) == solved_facelets(3)
