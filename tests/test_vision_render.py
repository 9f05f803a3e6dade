"""Synthetic camera: its API, and render -> scan round trips through both kinds of view."""

import numpy as np
import pytest

from solver import scramble
from vision import PRESETS, RIGS, ScanError, default_views, render_views, scan_photos, scan_views
from vision.lighting import preset


def states(size: int, count: int, seed: int) -> list[str]:
    return [scramble(size, seed=seed + k)["state"] for k in range(count)]


def test_rigs_images_and_reproducibility():
    state = states(3, 1, 1)[0]
    corners = render_views(state, "corners", "daylight", np.random.default_rng(3))
    assert sorted(corners) == ["dlb", "ufr"]
    assert all(img.shape == (480, 640, 3) and img.dtype == np.uint8 for img in corners.values())
    again = render_views(state, "corners", "daylight", np.random.default_rng(3))
    assert all(np.array_equal(corners[k], again[k]) for k in corners)
    assert sorted(render_views(state, "flip", "led", np.random.default_rng(3))) == sorted("URFDLB")
    assert sorted(render_views(state, "phone", "led", np.random.default_rng(3))) == sorted("URFDLB")
    assert set(RIGS) == {"corners", "flip", "phone", "top"}


def test_presets_look_different():
    state = states(3, 1, 2)[0]
    means = {}
    for name in PRESETS:
        image = render_views(state, "corners", name, np.random.default_rng(5), background=False)["ufr"]
        means[name] = image.reshape(-1, 3).mean(axis=0)[::-1]          # RGB
    assert means["tungsten"][0] > 1.4 * means["tungsten"][2]             # orange cast
    assert means["led"][2] > means["led"][0]                            # blue cast
    assert means["dim"].mean() < means["daylight"].mean()
    assert preset("side").glare > 0


def test_blur_and_jpeg_options():
    state = states(2, 1, 3)[0]
    sharp = render_views(state, "flip", "daylight", np.random.default_rng(1))["F"]
    soft = render_views(state, "flip", "daylight", np.random.default_rng(1), blur=2.0, jpeg=40)["F"]
    assert np.abs(np.diff(soft.astype(int), axis=1)).mean() < np.abs(np.diff(sharp.astype(int), axis=1)).mean()
    with pytest.raises(ScanError, match="JPEG quality"):
        render_views(state, "flip", "daylight", jpeg=0)


@pytest.mark.parametrize("bad, words", [("UUU", "54 stickers"), ("X" * 54, "6 colours")])
def test_bad_states_and_names(bad, words):
    with pytest.raises(ScanError, match=words):
        render_views(bad)
    with pytest.raises(ScanError, match="unknown rig 'tripod'"):
        render_views(states(3, 1, 1)[0], "tripod")
    with pytest.raises(ScanError, match="unknown lighting preset 'disco'"):
        render_views(states(3, 1, 1)[0], "corners", "disco")
    with pytest.raises(ScanError, match="no fixed view config"):
        default_views("phone", 3)


def test_colour_letters_are_drawn_by_their_centres():
    face_state = states(3, 1, 9)[0]
    colour_state = face_state.translate(str.maketrans("URFDLB", "WRGYOB"))
    a = render_views(face_state, "corners", "daylight", np.random.default_rng(2))
    b = render_views(colour_state, "corners", "daylight", np.random.default_rng(2))
    assert all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("size", [2, 3])
@pytest.mark.parametrize("light", list(PRESETS))
@pytest.mark.parametrize("rig", ["corners", "flip"])
def test_round_trip_calibrated_views(rig, light, size):
    rng = np.random.default_rng(list(PRESETS).index(light) + 10 * size + 100 * RIGS.index(rig))
    config = default_views(rig, size)
    for state in states(size, 2, 10 * size):
        assert scan_views(render_views(state, rig, light, rng), config).state == state


@pytest.mark.parametrize("size", [2, 3])
@pytest.mark.parametrize("light", list(PRESETS))
def test_round_trip_phone_photos_with_grid_detection(light, size):
    rng = np.random.default_rng(list(PRESETS).index(light) + 10 * size + 1000)
    state = states(size, 1, 40 + size)[0]
    result = scan_photos(render_views(state, "phone", light, rng))
    assert result.state == state and result.size == size


@pytest.mark.parametrize("rig", ["corners", "flip"])
def test_glare_on_a_centre_and_camera_artefacts(rig):
    state = states(3, 1, 77)[0]
    rng = np.random.default_rng(8)
    images = render_views(state, rig, "side", rng, glare_at=22, blur=1.0, jpeg=70)   # glare on F5
    assert scan_views(images, default_views(rig, 3)).state == state
