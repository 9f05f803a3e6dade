"""The piece layer of the classifier: the cheapest reachable cube for given sticker costs."""

import itertools

import numpy as np
import pytest

from solver.puzzles.cube.batch import Puzzle, to_facelet_array
from solver.puzzles.cube.cubie import from_face_letters
from solver.puzzles.cube.scramble import random_states
from vision.pieces import _orientations, best_cube, best_cube_without, fixed_facelets


def _letters(faces: np.ndarray) -> str:
    return "".join("URFDLB"[f] for f in faces)


def _costs_of(faces: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Sticker costs under which ``faces`` is clearly cheapest, with noise."""
    cost = rng.uniform(5.0, 10.0, (len(faces), 6))
    cost[np.arange(len(faces)), faces] = rng.uniform(0.0, 1.0, len(faces))
    return cost


@pytest.mark.parametrize("modulus", [2, 3])
@pytest.mark.parametrize("slots", [1, 2, 4, 6])
def test_orientations_match_every_combination(modulus, slots):
    rng = np.random.default_rng(slots * modulus)
    option_cost = rng.uniform(0, 1, (60, slots, modulus)) * rng.choice([1.0, 10.0], (60, slots, modulus))
    cost, orient = _orientations(option_cost, modulus)
    for k in range(len(option_cost)):
        brute = min(
            sum(option_cost[k, s, o[s]] for s in range(slots))
            for o in itertools.product(range(modulus), repeat=slots)
            if sum(o) % modulus == 0
        )
        assert cost[k] == pytest.approx(brute)
        assert orient[k].sum() % modulus == 0
        assert option_cost[k, np.arange(slots), orient[k]].sum() == pytest.approx(cost[k])


@pytest.mark.parametrize("size", [2, 3])
def test_a_real_cube_with_clear_costs_is_found(size):
    rng = np.random.default_rng(size)
    for faces in to_facelet_array(random_states(Puzzle.of_size(size), 20, rng)):
        solution = best_cube(_costs_of(faces, rng), size)
        assert _letters(solution.faces) == _letters(faces)


def test_a_twisted_corner_is_mended_to_a_reachable_cube():
    rng = np.random.default_rng(7)
    faces = to_facelet_array(random_states(Puzzle.of_size(3), 1, rng))[0]
    twisted = faces.copy()
    ufr = [8, 9, 20]  # the U, R and F stickers of the UFR corner
    twisted[ufr] = faces[[ufr[2], ufr[0], ufr[1]]]
    solution = best_cube(_costs_of(twisted, rng), 3)
    from_face_letters(_letters(solution.faces))  # raises if unreachable
    assert np.sum(solution.faces != twisted) >= 2


def test_best_cube_without_moves_the_sticker_and_keeps_the_rest_reachable():
    rng = np.random.default_rng(3)
    faces = to_facelet_array(random_states(Puzzle.of_size(3), 1, rng))[0]
    cost = _costs_of(faces, rng)
    base = best_cube(cost, 3)
    sticker = next(i for i in range(54) if i not in fixed_facelets(3))
    other = best_cube_without(cost, base, sticker)
    assert other.faces[sticker] != base.faces[sticker] and other.cost > base.cost
    from_face_letters(_letters(other.faces))
