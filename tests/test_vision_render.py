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
        means[name] = image.reshape(-1, 3).mean(axis=0)[::-1]  # RGB
    assert means["tungsten"][0] > 1.4 * means["tungsten"][2]  # orange cast
    assert means["led"][2] > means["led"][0]  # blue cast
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
    images = render_views(state, rig, "side", rng, glare_at=22, blur=1.0, jpeg=70)  # glare on F5
    assert scan_views(images, default_views(rig, 3)).state == state


def _span(corners: np.ndarray) -> float:
    return float(np.ptp(corners, axis=0).max())


@pytest.mark.parametrize("rotation, fill, tilt", [(0.0, 0.6, 0.0), (30.0, 0.3, 20.0), (-44.0, 1.0, 30.0)])
def test_face_photo_pose_is_what_was_asked(rotation, fill, tilt):
    from vision.render import face_photo_corners
    from vision.scene import face_frames, photo_camera

    pose = {"rotation_deg": rotation, "fill": fill, "tilt_deg": tilt, "tilt_towards_deg": 40.0, "offset": (0.3, -0.5)}
    camera = photo_camera(3, "F", **pose)
    normal = face_frames(3)[2].normal
    assert np.degrees(np.arccos(-camera.rotation[2] @ normal)) == pytest.approx(tilt, abs=1e-6)
    corners = face_photo_corners(3, "F", **pose)
    assert _span(corners) == pytest.approx(fill * 480, abs=0.5)
    assert corners.min() >= -0.5 and corners[:, 0].max() <= 640.5 and corners[:, 1].max() <= 480.5
    if tilt == 0:  # seen square, the face's top edge turns by exactly the rotation, clockwise
        top = corners[1] - corners[0]
        assert np.degrees(np.arctan2(top[1], top[0])) == pytest.approx(rotation, abs=1e-6)


def test_face_photo_renders_and_scans_seeded():
    from vision import detect_grid
    from vision.render import face_photo_corners, render_face_photo

    state = states(3, 1, 21)[0]
    pose = {"rotation_deg": 20.0, "fill": 0.7, "tilt_deg": 12.0, "tilt_towards_deg": 200.0}
    image = render_face_photo(state, "R", light="tungsten", rng=np.random.default_rng(4), **pose)
    again = render_face_photo(state, "R", light="tungsten", rng=np.random.default_rng(4), **pose)
    assert image.shape == (480, 640, 3) and image.dtype == np.uint8 and np.array_equal(image, again)
    grid = detect_grid(image)
    truth = face_photo_corners(3, "R", **pose)
    assert grid.size == 3 and np.abs(grid.corners - truth).max() < 0.25 * _span(truth) / 3
    photos = {
        f: render_face_photo(state, f, light="daylight", rng=np.random.default_rng(k), **pose)
        for k, f in enumerate("URFDLB")
    }
    assert scan_photos(photos).state == state
    soft = render_face_photo(state, "R", light="tungsten", rng=np.random.default_rng(4), blur=2.0, jpeg=40, **pose)
    assert np.abs(np.diff(soft.astype(int), axis=1)).mean() < np.abs(np.diff(image.astype(int), axis=1)).mean()
    with pytest.raises(ScanError, match="unknown face"):
        render_face_photo(state, "X")
    with pytest.raises(ScanError, match="fill"):
        render_face_photo(state, "F", fill=0.0)
