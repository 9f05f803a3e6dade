import numpy as np
import pytest

from solver import apply
from solver.puzzles.cube.batch import Puzzle, to_cubie
from solver.puzzles.cube.cubie import (
    CubieCube,
    apply_moves_cubie,
    from_face_letters,
    from_facelets,
    move_cube,
    solved_facelets,
    to_facelets,
)
from solver.puzzles.cube.notation import MOVE_NAMES, format_moves, inverse_moves, parse_moves
from solver.puzzles.cube.scramble import random_states

SOLVED3 = CubieCube.solved(3)


def run(text, size=3):
    return apply_moves_cubie(CubieCube.solved(size), parse_moves(text))


@pytest.mark.parametrize("face", "URFDLB")
def test_each_face_turn_has_order_four(face):
    assert not run(face).is_solved()
    assert run(" ".join([face] * 4)).is_solved()
    assert run(f"{face} {face}'").is_solved()
    assert run(f"{face}2 {face}2").is_solved()


@pytest.mark.parametrize("a,b", [("U", "D"), ("R", "L"), ("F", "B")])
def test_opposite_faces_commute(a, b):
    assert run(f"{a} {b}") == run(f"{b} {a}")
    assert run("U R") != run("R U")


def test_random_sequence_then_inverse_is_identity():
    rng = np.random.default_rng(7)
    for _ in range(50):
        moves = [int(m) for m in rng.integers(0, 18, 30)]
        cube = apply_moves_cubie(SOLVED3, moves)
        assert apply_moves_cubie(cube, inverse_moves(moves)).is_solved()


def test_cubie_moves_agree_with_sticker_moves():
    for m, name in enumerate(MOVE_NAMES):
        assert to_facelets(move_cube(m)) == apply(solved_facelets(3), name)
    for m in range(9):
        assert to_facelets(move_cube(m, 2)) == apply(solved_facelets(2), MOVE_NAMES[m])


def test_sexy_move_has_order_six():
    assert not run(" ".join(["R U R' U'"] * 3)).is_solved()
    assert run(" ".join(["R U R' U'"] * 6)).is_solved()


@pytest.mark.parametrize("size", [2, 3])
def test_facelet_cubie_round_trip_on_random_states(size):
    states = random_states(Puzzle.of_size(size), 300, np.random.default_rng(size))
    for row in states:
        cube = to_cubie(row)
        faces = to_facelets(cube)
        assert from_face_letters(faces) == cube
        assert to_facelets(from_facelets(faces)) == faces


def test_applying_a_scramble_to_facelets_matches_cubies():
    text = "R U R' U' F2 D B L2 U' B'"
    assert apply(solved_facelets(3), text) == to_facelets(run(text))
    assert format_moves(parse_moves(text)) == text
