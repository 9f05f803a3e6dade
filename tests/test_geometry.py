import numpy as np
import pytest

from solver.puzzles.cube.geometry import FACES, NORMALS, corner_facelets, edge_facelets, face_turn_permutation, stickers


@pytest.mark.parametrize("n", [2, 3])
def test_corner_stickers_are_read_in_one_rotational_sense(n):
    signs = set()
    for where in corner_facelets(n):
        normals = np.array([stickers(n)[i][1] for i in where])
        signs.add(round(np.linalg.det(normals)))
    assert len(signs) == 1


def test_known_kociemba_positions():
    assert corner_facelets(3)[0] == (8, 9, 20)  # URF: U9 R1 F3
    assert edge_facelets()[8] == (23, 12)  # FR: F6 R4


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("face", FACES)
def test_face_turn_is_a_permutation_of_order_four(n, face):
    p = face_turn_permutation(face, n)
    assert sorted(p) == list(range(6 * n * n))
    x = np.arange(6 * n * n)
    for _ in range(4):
        x = x[p]
    assert (x == np.arange(6 * n * n)).all()
    moved = np.flatnonzero(p != np.arange(6 * n * n))
    assert len(moved) == (20 if n == 3 else 12)
    assert NORMALS[face]  # every face has an axis


def test_u_turn_moves_front_to_left():
    p = face_turn_permutation("U", 3)
    # after U, the left face's top row shows what was on the front's top row
    assert list(p[36:39]) == [18, 19, 20]


@pytest.mark.parametrize("n", [2, 3])
def test_cube_rotation_is_the_two_outer_turns_and_the_slices(n):
    """Turning the whole cube like R is R, L' and (on a 3x3) the middle slice: every sticker moves
    but the R and L faces keep their own stickers, and four rotations are the identity."""
    from solver.puzzles.cube.geometry import cube_rotation_permutation

    x = cube_rotation_permutation("R", n)
    per_face = n * n
    r, left = FACES.index("R") * per_face, FACES.index("L") * per_face
    assert set(x[r : r + per_face]) == set(range(r, r + per_face))
    assert set(x[left : left + per_face]) == set(range(left, left + per_face))
    state = np.arange(6 * per_face)
    for _ in range(4):
        state = state[x]
    assert (state == np.arange(6 * per_face)).all()
    # x brings the front face up: after it, U shows what F showed
    u, f = FACES.index("U") * per_face, FACES.index("F") * per_face
    assert list(x[u : u + per_face]) == list(range(f, f + per_face))
