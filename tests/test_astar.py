import hashlib
import json
import shutil

import numpy as np
import pytest

from search_doubles import ChildrenOf, misplaced
from solver import InvalidState, apply, solve
from solver.puzzles.cube.batch import Puzzle, from_cubie, to_cubie
from solver.puzzles.cube.cubie import CubieCube, apply_moves_cubie, solved_facelets, to_facelets
from solver.puzzles.cube.notation import parse_moves
from solver.puzzles.cube.scramble import random_scrambles, random_states
from solver.search.astar import search
from solver.search.heuristic import load_model, model_dir

PUZZLE = Puzzle.cube3()


def zero_heuristic(states):
    return np.zeros(len(states), dtype=np.float32)


def scrambles(depth, count, seed):
    states, _ = random_scrambles(PUZZLE, np.full(count, depth), np.random.default_rng(seed), quarter_turns_only=True)
    return [to_cubie(s) for s in states]


def test_search_mechanics_with_a_blind_heuristic_find_optimal_short_paths():
    for cube in scrambles(3, 5, 1):
        result = search(cube, zero_heuristic, weight=1.0, batch=50, budget_s=30)
        assert result.found and len(result.moves) == 3
        assert apply_moves_cubie(cube, result.moves).is_solved()


def test_solved_input_is_an_empty_solution():
    result = search(CubieCube.solved(3), zero_heuristic)
    assert result.found and result.moves == [] and result.nodes_generated == 1


def test_bad_search_arguments():
    for kwargs in ({"weight": 0}, {"batch": 0}, {"budget_s": 0}, {"max_nodes": 0}, {"requeue": -1.0}):
        with pytest.raises(InvalidState):
            search(CubieCube.solved(3), zero_heuristic, **kwargs)


def test_node_budget_is_honoured():
    cube = to_cubie(random_states(PUZZLE, 1, np.random.default_rng(3))[0])
    result = search(cube, zero_heuristic, batch=10, max_nodes=500)
    assert not result.found and result.budget_exhausted
    assert result.nodes_generated < 500 + 12 * 10


def test_time_budget_is_honoured():
    cube = to_cubie(random_states(PUZZLE, 1, np.random.default_rng(4))[0])
    result = search(cube, zero_heuristic, batch=100, budget_s=0.2)
    assert not result.found and result.budget_exhausted and result.seconds < 2.0


def test_the_network_is_called_in_chunks_and_never_after_the_deadline(monkeypatch):
    """Each call costs 0.1 s of a fake clock: the search must stop calling as soon as its budget is spent."""
    import solver.search.astar as astar
    import solver.search.tree as tree

    clock = {"now": 0.0}
    calls = []

    def slow_heuristic(states):
        calls.append((clock["now"], len(states)))
        clock["now"] += 0.1
        return np.zeros(len(states), dtype=np.float32)

    monkeypatch.setattr(astar.time, "perf_counter", lambda: clock["now"])
    cube = to_cubie(random_states(PUZZLE, 1, np.random.default_rng(5))[0])
    result = search(cube, slow_heuristic, batch=1000, budget_s=1.0)
    assert not result.found and result.budget_exhausted
    assert max(size for _, size in calls) <= tree.EVAL_CHUNK
    assert all(at <= 1.0 for at, _ in calls) and result.seconds <= 1.1


def test_a_per_child_heuristic_is_called_once_per_expanded_node_and_searches_alike():
    for cube in scrambles(5, 3, 7):
        plain = search(cube, misplaced, weight=0.5, batch=200, budget_s=30)
        per_child = ChildrenOf(misplaced)
        result = search(cube, per_child, weight=0.5, batch=200, budget_s=30, requeue=None)
        assert result.found and apply_moves_cubie(cube, result.moves).is_solved()
        assert (result.moves, result.nodes_generated) == (plain.moves, plain.nodes_generated)
        assert sum(per_child.calls) <= 200 * result.iterations < result.nodes_generated


def test_requeued_nodes_are_expanded_later_without_a_second_evaluation():
    for cube in scrambles(5, 3, 8):
        per_child = ChildrenOf(misplaced)
        result = search(cube, per_child, weight=0.5, batch=200, budget_s=30, requeue=0.0)
        assert result.found and apply_moves_cubie(cube, result.moves).is_solved()
        assert len(per_child.evaluated) == len(set(per_child.evaluated))
        without = search(cube, ChildrenOf(misplaced), weight=0.5, batch=200, budget_s=30, requeue=None)
        assert result.nodes_generated < without.nodes_generated  # some were put back, and never expanded


# --- the shipped model ---------------------------------------------------------------


def test_model_card_sha256_matches_file():
    card = json.loads((model_dir() / "cube3.json").read_text())
    assert hashlib.sha256((model_dir() / "cube3.onnx").read_bytes()).hexdigest() == card["sha256"]
    assert card["opset"] and card["parameters"] > 0


def test_model_is_near_zero_at_solved_and_grows_with_depth():
    model = load_model()
    # the raw network output, before the solved-state override of CostToGo.__call__: a per-child network
    # estimates the solved cube's children, each one quarter turn away
    raw = model.session.run(None, {model.input_name: to_states([CubieCube.solved(3)]).astype(np.int64)})[0]
    assert np.all(np.abs(raw[0] - (1.0 if model.per_child else 0.0)) < 1.0)
    means = [float(model(to_states(scrambles(d, 100, 10 + d))).mean()) for d in (1, 3, 6, 10)]
    assert means == sorted(means) and means[-1] > means[0] + 3


def to_states(cubes):
    return np.stack([from_cubie(c) for c in cubes])


def test_short_scrambles_are_solved_with_a_small_budget():
    model = load_model()
    for cube in scrambles(6, 10, 5):
        result = search(cube, model, budget_s=20)
        assert result.found and apply_moves_cubie(cube, result.moves).is_solved()
        assert len(result.moves) <= 6 * 2


def test_search_is_deterministic():
    model = load_model()
    cube = scrambles(8, 1, 6)[0]
    first, second = search(cube, model, budget_s=20), search(cube, model, budget_s=20)
    assert first.moves == second.moves and first.nodes_generated == second.nodes_generated


def test_solve_3x3_through_the_api_in_colour_letters():
    state = apply(solved_facelets(3), "R U F' L2 D")
    coloured = "".join(dict(zip("URFDLB", "wrgyob"))[c] for c in state)
    solution = solve(coloured, budget_s=20)
    assert solution.found and solution.details["nodes_generated"] > 0
    assert solution.length <= 5 and solution.as_dict()["qtm"] <= 6
    assert apply(state, solution.text) == solved_facelets(3)
    assert solve(solved_facelets(3)).moves == []


def test_invalid_3x3_input():
    with pytest.raises(InvalidState, match="twisted"):
        state = list(solved_facelets(3))
        state[8], state[9], state[20] = "F", "U", "R"
        solve("".join(state))


def test_missing_or_damaged_model_is_a_clear_error(tmp_path):
    with pytest.raises(InvalidState, match="missing"):
        load_model(str(tmp_path))
    shutil.copy(model_dir() / "cube3.json", tmp_path / "cube3.json")
    (tmp_path / "cube3.onnx").write_bytes(b"not a model")
    with pytest.raises(InvalidState, match="does not match"):
        load_model(str(tmp_path))


def test_parse_and_path_agree():
    cube = apply_moves_cubie(CubieCube.solved(3), parse_moves("R U"))
    result = search(cube, load_model(), budget_s=10)
    assert to_facelets(apply_moves_cubie(cube, result.moves)) == solved_facelets(3)


def test_a_stop_request_ends_the_search_as_a_spent_budget():
    import threading

    stop = threading.Event()
    stop.set()
    cube = to_cubie(random_states(PUZZLE, 1, np.random.default_rng(6))[0])
    result = search(cube, zero_heuristic, budget_s=60, stop=stop)
    assert not result.found and result.budget_exhausted and result.iterations == 0


def test_a_finished_search_frees_its_tree_without_waiting_for_the_garbage_collector():
    """No reference cycle through the search: its arrays (hundreds of MB on a hard cube) go when it returns."""
    import gc

    import solver.search.astar as astar

    gc.collect()
    gc.disable()
    try:
        for cube in scrambles(6, 2, 9):
            search(cube, ChildrenOf(misplaced), weight=0.5, batch=200, budget_s=30)
        assert not [o for o in gc.get_objects() if isinstance(o, astar._Search)]
    finally:
        gc.enable()
