"""Automatic sticker-grid detection in photos of one face."""

import cv2
import numpy as np
import pytest

from solver import scramble
from vision import ScanError, detect_grid, render_views, sample_face, sample_photos
from vision.scene import face_camera, face_frames


def photo(size: int, seed: int, light: str = "daylight", face: str = "F"):
    state = scramble(size, seed=seed)["state"]
    images = render_views(state, "phone", light, np.random.default_rng(seed))
    return state, images[face]


@pytest.mark.parametrize("size", [2, 3])
def test_finds_the_grid_and_its_size(size):
    for seed in range(4):
        state, image = photo(size, seed, face="R")
        grid = detect_grid(image)
        assert grid.size == size
        assert grid.votes >= size * size - 1
        rgb = sample_face(image, grid.corners, size)
        assert rgb.shape == (size * size, 3)


def test_corners_match_the_true_face_outline():
    state = scramble(3, seed=3)["state"]
    rng = np.random.default_rng(0)
    camera = face_camera(3, "F", tilt=(8.0, -6.0), roll=5.0, distance=5.0)
    from vision.render import render_image
    image = render_image(camera, state, "daylight", rng, jitter=0.0)
    truth = camera.project(face_frames(3)[2].corners(3.0))
    grid = detect_grid(image, 3)
    pitch = np.linalg.norm(truth[1] - truth[0]) / 3
    assert np.abs(grid.corners - truth).max() < 0.15 * pitch


def test_upright_order_even_when_turned_a_little():
    state, image = photo(3, 5)
    h, w = image.shape[:2]
    turned = cv2.warpAffine(image, cv2.getRotationMatrix2D((w / 2, h / 2), 25, 1.0), (w, h))
    corners = detect_grid(turned, 3).corners
    assert corners[1][0] > corners[0][0] and corners[3][1] > corners[0][1]   # TR right of TL, BL below TL


def test_no_grid_is_a_clear_error():
    rng = np.random.default_rng(1)
    noise = rng.integers(0, 255, (480, 640, 3), dtype=np.uint8)
    with pytest.raises(ScanError, match="face U: no 2x2 or 3x3 sticker grid found"):
        detect_grid(noise, name="face U")
    blank = np.full((480, 640, 3), 90, np.uint8)
    cv2.rectangle(blank, (200, 150), (300, 250), (0, 0, 200), -1)       # one red square is no grid
    with pytest.raises(ScanError, match="no 3x3 sticker grid"):
        detect_grid(blank, 3)


def test_photo_set_errors_name_the_face():
    state = scramble(3, seed=1)["state"]
    photos = render_views(state, "phone", "daylight", np.random.default_rng(2))
    photos["D"] = np.full((480, 640, 3), 40, np.uint8)
    with pytest.raises(ScanError, match="face D: no"):
        sample_photos(photos)
    del photos["D"]
    with pytest.raises(ScanError, match="missing D"):
        sample_photos(photos)


def test_size_follows_the_majority_of_photos():
    state = scramble(2, seed=6)["state"]
    photos = render_views(state, "phone", "led", np.random.default_rng(6))
    assert sample_photos(photos).shape == (24, 3)
    assert sample_photos(photos, size=2).shape == (24, 3)
