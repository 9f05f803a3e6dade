import numpy as np
import pytest

from puzzle_checks import check_exact_table
from solver import InvalidState, apply, solve
from solver.puzzles.cube.cubie import from_facelets
from solver.puzzles.pocket import STATES, coordinate, model
from solver.tables.cache import cache_dir
from solver.tables.exact import build_table, load_table

PUBLISHED = {
    "qtm": [1, 6, 27, 120, 534, 2256, 8969, 33058, 114149, 360508, 930588, 1350852, 782536, 90280, 276],
    "htm": [1, 9, 54, 321, 1847, 9992, 50136, 227536, 870072, 1887748, 623800, 2644],
}


@pytest.fixture(scope="module", params=["htm", "qtm"])
def built(request):
    return model(request.param), build_table(model(request.param))


def test_distance_counts_equal_published(built):
    puzzle, table = built
    assert table.counts == PUBLISHED[puzzle.metric]
    assert sum(table.counts) == STATES == puzzle.states == 3_674_160
    assert len(table.codes) == STATES
    check_exact_table(puzzle, table, bfs_depth=5)


def test_random_solutions_solve_and_are_optimal(built):
    puzzle, table = built
    from solver.puzzles.cube.batch import Puzzle, to_cubie
    from solver.puzzles.cube.cubie import to_facelets
    from solver.puzzles.cube.scramble import random_states

    for row in random_states(Puzzle.cube2(), 300, np.random.default_rng(11)):
        cube = to_cubie(row)
        path = table.walk(coordinate(cube))
        assert len(path) == table.distance(coordinate(cube))
        solution = puzzle.format_moves(path)
        assert from_facelets(apply(to_facelets(cube), solution)).is_solved()


def test_quarter_turns_have_order_four_and_undo_each_other():
    qtm = model("qtm")
    state = qtm.random_state(np.random.default_rng(3))
    for m in range(len(qtm.move_names)):
        assert qtm.apply(state, [m] * 4) == qtm.apply(state, [m, *qtm.inverse([m])]) == state != qtm.apply(state, [m])


def test_model_moves_in_cube_notation():
    qtm = model("qtm")
    assert qtm.move_names == ("U", "U'", "R", "R'", "F", "F'")
    assert qtm.parse_moves("R U2 F'") == [2, 0, 0, 5]
    assert model("htm").parse_moves("R U2 F'") == [3, 1, 8]
    with pytest.raises(InvalidState, match="move 2 .D. turns a face of the DLB corner"):
        qtm.parse_moves("R D")
    with pytest.raises(InvalidState, match="24 stickers"):
        qtm.parse("U" * 54)


def faces_uniform(state):
    return all(len(set(state[4 * k : 4 * k + 4])) == 1 for k in range(6))


def test_solve_in_colour_letters_same_as_face_letters():
    state = apply("UUUURRRRFFFFDDDDLLLLBBBB", "R U2 F' R U R' F2 U'")
    colours = dict(zip("URFDLB", "wrgyob"))
    coloured = "".join(colours[c] for c in state)
    for metric in ("htm", "qtm"):
        a, b = solve(state, metric), solve(coloured, metric)
        assert a.moves == b.moves and a.length == b.length
        assert faces_uniform(apply(coloured, b.text))


def test_cube_held_in_another_orientation_solves():
    # D, L and B turns move the DLB piece: the solver re-frames through it
    state = apply("UUUURRRRFFFFDDDDLLLLBBBB", "D L' B2 U R D' F L2")
    solution = solve(state)
    assert faces_uniform(apply(state, solution.text))
    assert solution.length <= 11


def test_solved_input_gives_empty_solution():
    assert solve("UUUURRRRFFFFDDDDLLLLBBBB").moves == []
    assert solve("wwwwrrrrggggyyyyoooobbbb", "qtm").text == ""


def test_cache_is_written_reused_and_rebuilt_when_corrupt():
    htm = model("htm")
    load_table.cache_clear()
    first = load_table(htm)
    path = cache_dir() / "pocket-htm-v1.bin"
    assert path.exists()
    load_table.cache_clear()
    assert load_table(htm).cached
    raw = bytearray(path.read_bytes())
    raw[-100] ^= 0xFF
    path.write_bytes(bytes(raw))
    load_table.cache_clear()
    rebuilt = load_table(htm)
    assert not rebuilt.cached and rebuilt.codes == first.codes
    load_table.cache_clear()
    assert load_table(htm).cached
    path.write_bytes(b"garbage")
    load_table.cache_clear()
    assert not load_table(htm).cached
