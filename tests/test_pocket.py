import numpy as np
import pytest

from solver import apply, solve
from solver.cubie import from_facelets
from solver.pocket import build_table, load_table, pack_mod3, unpack_mod3
from solver.pocket_coords import STATES, coordinate
from solver.table_cache import cache_dir

PUBLISHED = {
    "qtm": [1, 6, 27, 120, 534, 2256, 8969, 33058, 114149, 360508, 930588, 1350852, 782536, 90280, 276],
    "htm": [1, 9, 54, 321, 1847, 9992, 50136, 227536, 870072, 1887748, 623800, 2644],
}


@pytest.fixture(scope="module", params=["htm", "qtm"])
def built(request):
    return build_table(request.param)


def test_distance_counts_equal_published(built):
    table, distance = built
    assert table.counts == PUBLISHED[table.metric]
    assert sum(table.counts) == STATES == 3_674_160
    assert (unpack_mod3(table.packed) == distance % 3).all()
    assert len(table.packed) == STATES // 4


def test_random_solutions_solve_and_are_optimal(built):
    table, distance = built
    from solver.batch import Puzzle, to_cubie
    from solver.cubie import to_facelets
    from solver.scramble import random_states
    for row in random_states(Puzzle.cube2(), 300, np.random.default_rng(11)):
        cube = to_cubie(row)
        path = table.solve(cube)
        assert len(path) == distance[coordinate(cube)]
        solution = " ".join(["U", "U2", "U'", "R", "R2", "R'", "F", "F2", "F'"][m] for m in path)
        assert from_facelets(apply(to_facelets(cube), solution)).is_solved()


def test_pack_round_trip():
    d = np.random.default_rng(0).integers(0, 15, 4000).astype(np.uint8)
    assert (unpack_mod3(pack_mod3(d)) == d % 3).all()


def faces_uniform(state):
    return all(len(set(state[4 * k:4 * k + 4])) == 1 for k in range(6))


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
    load_table.cache_clear()
    first = load_table("htm")
    path = cache_dir() / "pocket-htm-v1.bin"
    assert path.exists()
    load_table.cache_clear()
    assert load_table("htm").cached
    raw = bytearray(path.read_bytes())
    raw[-100] ^= 0xFF
    path.write_bytes(bytes(raw))
    load_table.cache_clear()
    rebuilt = load_table("htm")
    assert not rebuilt.cached and rebuilt.packed == first.packed
    load_table.cache_clear()
    assert load_table("htm").cached
    path.write_bytes(b"garbage")
    load_table.cache_clear()
    assert not load_table("htm").cached
