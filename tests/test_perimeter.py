import numpy as np
import pytest

from solver import InvalidState, apply, solve
from solver.cli import main as solver_cli
from solver.puzzles.cube.batch import Puzzle, apply_all_moves, from_cubie, solved, to_cubie
from solver.puzzles.cube.cubie import CubieCube, apply_moves_cubie, solved_facelets
from solver.puzzles.cube.notation import parse_moves
from solver.puzzles.cube.scramble import random_scrambles
from solver.search.astar import search
from solver.search.heuristic import load_model
from solver.search.perimeter import OUTSIDE, build, exact_distance, load_perimeter, shorten, state_hashes
from solver.tables.cache import cache_dir

PUZZLE = Puzzle.cube3()
QTM_COUNTS = [1, 12, 114, 1068, 10011, 93840]  # states at each quarter-turn distance from solved


@pytest.fixture(scope="module")
def depth4():
    return build(4)


def row(moves: str) -> np.ndarray:
    return from_cubie(apply_moves_cubie(CubieCube.solved(3), parse_moves(moves)))


def test_layer_sizes_match_the_quarter_turn_distance_distribution(depth4):
    assert np.bincount(depth4.distances).tolist() == QTM_COUNTS[:5]
    assert len(np.unique(depth4.hashes)) == len(depth4)


def test_distances_of_known_states(depth4):
    states = np.stack([row(m) for m in ("", "R", "R2", "R U", "R U R' U'", "R U F L D")])
    assert depth4.distance(states).tolist() == [0, 1, 2, 2, 4, OUTSIDE]


def test_the_bit_filter_never_hides_a_state_inside(depth4):
    """Every state one turn beyond each layer is looked up exactly as a plain search of the table would."""
    states, _ = random_scrambles(PUZZLE, np.arange(6).repeat(200), np.random.default_rng(2), quarter_turns_only=True)
    states = apply_all_moves(PUZZLE, states, PUZZLE.quarter_turns).reshape(-1, PUZZLE.slots)
    query = state_hashes(states)
    index = np.minimum(np.searchsorted(depth4.hashes, query), len(depth4) - 1)
    plain = np.where(depth4.hashes[index] == query, depth4.distances[index].astype(np.int16), OUTSIDE)
    found = depth4.distance(states)
    assert found.tolist() == plain.tolist()
    assert 0 < (found == OUTSIDE).sum() < len(states) and found.dtype == np.int16


def test_finish_walks_down_to_solved_in_exactly_the_distance(depth4):
    states, _ = random_scrambles(
        PUZZLE, np.full(50, 4), np.random.default_rng(1), quarter_turns_only=True, redundant=True
    )
    for state, d in zip(states, depth4.distance(states)):
        path = depth4.finish(state)
        assert len(path) == d and apply_moves_cubie(to_cubie(state), path).is_solved()


def test_finish_refuses_a_state_outside(depth4):
    assert depth4.finish(row("R U F L D")) is None


def test_exact_distance_agrees_with_the_deeper_table(depth4):
    depth2 = build(2)
    states = np.concatenate([solved(PUZZLE), apply_all_moves(PUZZLE, row("R U F")[None], PUZZLE.quarter_turns)[0]])
    for state in states:
        assert exact_distance(state, depth2, max_forward=2) == depth4.distance(state[None])[0]
    assert exact_distance(row("R U F L D B"), depth2, max_forward=2) is None


def same_turn(a, b):
    return apply_moves_cubie(CubieCube.solved(3), a) == apply_moves_cubie(CubieCube.solved(3), b)


def test_shorten_replaces_stretches_with_shorter_ones(depth4):
    sexy = parse_moves("R U R' U'")
    assert shorten(sexy * 6, depth4) == []  # six of them turn nothing
    assert shorten(parse_moves("R R R"), depth4) == parse_moves("R'")
    assert shorten(parse_moves("F R U U' F F F L L'"), depth4) == parse_moves("F R F'")
    assert shorten(parse_moves("R U F L D B"), depth4) == parse_moves("R U F L D B")


def test_shorten_never_changes_the_net_turn_or_lengthens(depth4):
    rng = np.random.default_rng(7)
    for _ in range(30):
        moves = rng.choice(PUZZLE.quarter_turns, size=int(rng.integers(0, 25))).tolist()
        short = shorten(moves, depth4)
        assert len(short) <= len(moves) and same_turn(moves, short)


def test_depth_is_checked():
    for depth in (0, 8):
        with pytest.raises(ValueError, match="perimeter depth"):
            build(depth)


def test_the_table_is_cached_and_a_damaged_cache_is_rebuilt():
    load_perimeter.cache_clear()
    first = load_perimeter(3)
    path = cache_dir() / "cube3-perimeter-3.v1"
    assert path.exists()
    load_perimeter.cache_clear()
    assert load_perimeter(3).build_s == 0.0  # read back, not built
    path.write_bytes(path.read_bytes()[:-5])
    load_perimeter.cache_clear()
    rebuilt = load_perimeter(3)
    assert rebuilt.build_s > 0 and np.array_equal(rebuilt.hashes, first.hashes)
    load_perimeter.cache_clear()


def test_search_inside_the_perimeter_is_optimal_without_the_network(depth4):
    cube = to_cubie(row("R U F' D"))
    result = search(cube, lambda states: pytest.fail("the network was asked"), perimeter=depth4)
    assert result.found and len(result.moves) == 4 and result.nodes_generated == 1
    assert apply_moves_cubie(cube, result.moves).is_solved()


def test_search_beyond_the_perimeter_uses_the_network(depth4):
    states, _ = random_scrambles(PUZZLE, np.full(5, 9), np.random.default_rng(2), quarter_turns_only=True)
    for state in states:
        result = search(to_cubie(state), load_model(), perimeter=depth4, budget_s=20)
        assert result.found and result.nodes_generated > 1
        assert apply_moves_cubie(to_cubie(state), result.moves).is_solved()
        assert exact_distance(state, depth4) <= len(result.moves) <= 9


def test_solve_reports_the_perimeter_and_rejects_a_bad_depth():
    state = apply(solved_facelets(3), "R U2 F")
    assert solve(state, perimeter=4).details["perimeter"] == 4
    for depth in (-1, 8, 2.5):
        with pytest.raises(InvalidState, match="perimeter depth"):
            solve(state, perimeter=depth)


def test_cli_rejects_a_bad_perimeter(capsys):
    assert solver_cli(["solve", "--state", solved_facelets(3), "--perimeter", "9"]) == 2
    assert "perimeter depth" in capsys.readouterr().err
