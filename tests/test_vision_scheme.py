"""The colour scheme's handedness: standard schemes pass, mirror images are caught, unclear names decide nothing."""

import itertools

import numpy as np
import pytest

from solver import scramble
from solver.puzzles.cube.geometry import FACES, OPPOSITE
from vision import ScanError, classify
from vision.lab import srgb_to_lab
from vision.scheme import (
    BLUE,
    COLOUR_NAMES,
    GREEN,
    ORANGE,
    RED,
    STANDARD_FACE,
    WHITE,
    YELLOW,
    colour_names,
    handedness,
    is_mirror_scheme,
)

DAYLIGHT_SRGB = {
    WHITE: (235, 235, 230),
    RED: (190, 25, 40),
    GREEN: (0, 155, 80),
    YELLOW: (250, 215, 0),
    ORANGE: (255, 105, 15),
    BLUE: (0, 75, 175),
}
STANDARD = {FACES.index(face): colour for colour, face in STANDARD_FACE.items()}


def _lab(face_colours: dict[int, int], palette=DAYLIGHT_SRGB) -> np.ndarray:
    return srgb_to_lab(np.array([palette[face_colours[f]] for f in range(6)], dtype=np.float64))


def _orientations() -> list[dict[int, int]]:
    """The 24 ways to hold a standard cube: face -> colour."""
    normal = {"R": (1, 0, 0), "L": (-1, 0, 0), "U": (0, 1, 0), "D": (0, -1, 0), "F": (0, 0, 1), "B": (0, 0, -1)}
    face_of = {v: k for k, v in normal.items()}
    found = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((1, -1), repeat=3):
            matrix = np.zeros((3, 3), dtype=int)
            for row, (col, sign) in enumerate(zip(perm, signs)):
                matrix[row, col] = sign
            if round(np.linalg.det(matrix)) != 1:
                continue
            turned = {FACES.index(face_of[tuple(matrix @ normal[f])]): STANDARD[FACES.index(f)] for f in FACES}
            found.append(turned)
    return found


def test_every_way_to_hold_a_standard_cube_is_right_handed():
    holds = _orientations()
    assert len(holds) == 24
    for hold in holds:
        assert colour_names(_lab(hold)) == hold
        assert handedness(hold) == 1
        assert not is_mirror_scheme(_lab(hold))


@pytest.mark.parametrize("pair", ["UD", "RL", "FB"])
def test_two_opposite_faces_swapped_is_a_mirror(pair):
    for hold in _orientations():
        a, b = (FACES.index(f) for f in pair)
        mirrored = dict(hold)
        mirrored[a], mirrored[b] = hold[b], hold[a]
        assert handedness(mirrored) == -1
        assert is_mirror_scheme(_lab(mirrored))


def test_red_and_orange_with_cues_that_disagree_decide_nothing():
    # An orange face in shadow: still yellower than red, but darker.
    palette = dict(DAYLIGHT_SRGB)
    palette[ORANGE] = (120, 40, 5)
    assert colour_names(_lab(STANDARD, palette)) is None


def test_another_scheme_decides_nothing():
    # White opposite blue, yellow opposite green: not the standard pairs.
    other = {0: WHITE, 3: BLUE, 1: RED, 4: ORANGE, 2: YELLOW, 5: GREEN}
    assert colour_names(_lab(other)) is None


def test_colour_names_are_the_six_colours():
    assert sorted(COLOUR_NAMES) == sorted({"white", "yellow", "red", "orange", "green", "blue"})


@pytest.mark.parametrize("size, pair, seeds", [(3, "RL", 4), (3, "UD", 4), (2, "UD", 1), (2, "FB", 1)])
def test_swapped_face_images_are_refused_not_read(size, pair, seeds):
    # A 2x2 has no centres: some swaps of scrambled faces read as another real,
    # right-handed cube that no check can tell apart, so only its solved cube is tried.
    rng = np.random.default_rng(11)
    palette = {FACES[f]: DAYLIGHT_SRGB[c] for f, c in STANDARD.items()}
    for seed in range(seeds):
        state = scramble(size, seed=seed)["state"] if seed else "".join(f * size * size for f in FACES)
        rgb = np.array([palette[c] for c in state], dtype=np.float64) + rng.normal(0, 3, (len(state), 3))
        n = size * size
        a, b = (FACES.index(f) for f in pair)
        swapped = rgb.copy()
        swapped[a * n : (a + 1) * n], swapped[b * n : (b + 1) * n] = rgb[b * n : (b + 1) * n], rgb[a * n : (a + 1) * n]
        assert OPPOSITE[pair[0]] == pair[1]
        with pytest.raises(ScanError) as caught:
            classify(np.clip(swapped, 0, 255))
        if seed == 0:
            assert "mirror image" in str(caught.value)
