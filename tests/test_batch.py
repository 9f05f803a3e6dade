import numpy as np
import pytest

from solver.puzzles.cube.batch import (
    Puzzle,
    apply_all_moves,
    apply_move,
    from_cubie,
    is_solved,
    one_hot,
    solved,
    state_keys,
    to_cubie,
    to_facelet_array,
)
from solver.puzzles.cube.cubie import CubieCube, apply_moves_cubie, from_face_letters, to_facelets
from solver.puzzles.cube.geometry import FACES
from solver.puzzles.cube.scramble import permutation_parity, random_scrambles, random_states

PUZZLES = [Puzzle.cube3(), Puzzle.cube2()]


@pytest.mark.parametrize("puzzle", PUZZLES, ids=["3x3", "2x2"])
def test_batch_moves_match_cubie_moves(puzzle):
    rng = np.random.default_rng(3)
    states = random_states(puzzle, 64, rng)
    every = apply_all_moves(puzzle, states)
    assert every.shape == (64, len(puzzle.moves), puzzle.slots)
    for k, m in enumerate(puzzle.moves):
        one = apply_move(puzzle, states, k)
        assert (one == every[:, k]).all()
        for row, after in zip(states[:5], one[:5]):
            assert to_cubie(after) == apply_moves_cubie(to_cubie(row), [m])


def test_per_state_moves():
    puzzle = Puzzle.cube3()
    states = random_states(puzzle, 40, np.random.default_rng(4))
    moves = np.arange(40) % 18
    out = apply_move(puzzle, states, moves)
    for i in range(40):
        assert (out[i] == apply_move(puzzle, states[i : i + 1], int(moves[i]))[0]).all()


def test_move_then_inverse_restores():
    puzzle = Puzzle.cube3()
    states = random_states(puzzle, 100, np.random.default_rng(5))
    for k in range(18):
        inverse = k - k % 3 + (2 - k % 3)
        assert (apply_move(puzzle, apply_move(puzzle, states, k), inverse) == states).all()


def test_quarter_turn_axis():
    assert Puzzle.cube3().quarter_turns == (0, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17)
    assert Puzzle.cube2().quarter_turns == (0, 2, 3, 5, 6, 8)


def test_one_hot_and_facelets():
    puzzle = Puzzle.cube3()
    states = random_states(puzzle, 10, np.random.default_rng(6))
    encoded = one_hot(states)
    assert encoded.shape == (10, 480) and (encoded.sum(axis=1) == 20).all()
    assert (encoded.reshape(10, 20, 24).argmax(axis=2) == states).all()
    faces = to_facelet_array(states)
    for row, letters in zip(states, faces):
        assert "".join(FACES[f] for f in letters) == to_facelets(to_cubie(row))


def test_keys_are_exact():
    puzzle = Puzzle.cube3()
    states = random_states(puzzle, 2000, np.random.default_rng(8))
    both = np.concatenate([states, states[:500]])
    keys = state_keys(both)
    assert keys.itemsize == 16
    assert len(np.unique(keys)) == len(np.unique(both, axis=0)) == 2000
    single = state_keys(apply_move(puzzle, solved(puzzle, 2), 0))
    assert single[0] == single[1] and single[0] != state_keys(solved(puzzle))[0]


@pytest.mark.parametrize("puzzle", PUZZLES, ids=["3x3", "2x2"])
def test_random_states_are_valid_and_spread(puzzle):
    states = random_states(puzzle, 6000, np.random.default_rng(9))
    for row in states[:200]:
        from_face_letters(to_facelets(to_cubie(row)))
    corners = states[:, :8] // 3
    movable = [0, 1, 2, 3, 4, 5, 7] if puzzle.size == 2 else list(range(8))
    counts = np.bincount(corners[:, movable[0]], minlength=8)[movable]
    expected = len(states) / len(movable)
    assert (np.abs(counts - expected) < 5 * np.sqrt(expected)).all()
    parity = permutation_parity(corners)
    assert abs(parity.mean() - 0.5) < 0.05


def test_seeded_randomness_repeats():
    puzzle = Puzzle.cube3()
    a = random_states(puzzle, 5, np.random.default_rng(1))
    b = random_states(puzzle, 5, np.random.default_rng(1))
    assert (a == b).all()


def test_scrambles_have_their_depth_and_no_redundant_moves():
    puzzle = Puzzle.cube3()
    depths = np.array([0, 1, 5, 20])
    states, moves = random_scrambles(puzzle, depths, np.random.default_rng(2), quarter_turns_only=True)
    assert is_solved(puzzle, states).tolist() == [True, False, False, False]
    for depth, row, state in zip(depths, moves, states):
        seq = [puzzle.moves[k] for k in row[:depth]]
        assert (row[depth:] == -1).all()
        assert all(m % 3 != 1 for m in seq)
        assert all(a // 3 != b // 3 for a, b in zip(seq, seq[1:]))
        assert (from_cubie(apply_moves_cubie(CubieCube.solved(3), seq)) == state).all()


def test_redundant_scrambles_may_repeat_a_face():
    puzzle = Puzzle.cube3()
    _, moves = random_scrambles(puzzle, np.full(200, 10), np.random.default_rng(3), True, redundant=True)
    faces = np.array(puzzle.moves)[moves] // 3
    assert (faces[:, 1:] == faces[:, :-1]).any()
