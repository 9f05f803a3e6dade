"""Calibrated views: view config format and validation, perspective sampling, glare rejection."""

import json
import re

import cv2
import numpy as np
import pytest

from solver import scramble
from vision import (
    ScanError,
    default_views,
    load_view_config,
    render_views,
    sample_views,
    scan_views,
    view_config_from_dict,
)
from vision.sampling import sample_face, sample_square
from vision.views import face_corner_names


def test_face_corner_names_follow_the_net():
    assert face_corner_names("U") == ("ULB", "UBR", "URF", "UFL")
    assert face_corner_names("F") == ("UFL", "URF", "DFR", "DLF")
    assert face_corner_names("D") == ("DLF", "DFR", "DRB", "DBL")


def config_dict(size=3):
    return default_views("corners", size).to_json()


def test_config_round_trips_through_json_and_toml(tmp_path):
    config = default_views("flip", 3)
    path = tmp_path / "rig.json"
    config.save(path)
    again = load_view_config(path)
    assert again.size == 3 and [v.face for v in again.views] == list("URFDLB")
    for a, b in zip(config.views, again.views):
        assert a.image == b.image and np.allclose(a.corners, b.corners, atol=0.01)
    toml = tmp_path / "rig.toml"
    view = config.to_json()["view"][0]
    lines = ["size = 3", "inner = 0.5"]
    for v in config.to_json()["view"]:
        lines += [
            "[[view]]",
            f'image = "{v["image"]}"',
            f'face = "{v["face"]}"',
            f"corners = {json.dumps(v['corners'])}",
            f"at = {json.dumps(v['at'])}",
        ]
    toml.write_text("\n".join(lines) + "\n")
    assert np.allclose(load_view_config(toml).views[0].corners, np.array(view["corners"]), atol=0.01)


def test_corner_labels_may_come_in_any_order_and_letter_order():
    data = config_dict()
    first = data["view"][0]  # face U, corners in net order
    first["corners"] = first["corners"][2:] + first["corners"][:2]
    first["at"] = ["FUR", "LUF", "BLU", "RBU"]  # the same corners, named differently
    config = view_config_from_dict(data)
    assert np.allclose(config.views[0].corners, default_views("corners", 3).views[0].corners, atol=0.01)


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda d: d.update(colour="red"), "unknown key 'colour'"),
        (lambda d: d["view"][1].update(zoom=2), "view #2 (face R): unknown key 'zoom'"),
        (lambda d: d.update(size=4), "'size' must be 2 or 3"),
        (lambda d: d["view"].pop(3), "no view for face D"),
        (
            lambda d: d["view"][1].update(face="U", at=["ULB", "UBR", "URF", "UFL"]),
            "face U appears in more than one view",
        ),
        (lambda d: d["view"][2].update(at=["UFL", "URF", "DFR", "DRB"]), "'DRB' is not a corner of face F"),
        (lambda d: d["view"][2].update(at=["UFL", "URF", "DFR", "DFR"]), "each corner of the face once"),
        (lambda d: d["view"][0].update(corners=[[0, 0], [1, 0], [1, 1]]), "four [x, y] points"),
        (lambda d: d["view"][0].update(corners=[[5, 5]] * 4), "too small or in the wrong order"),
        (lambda d: d["view"][0].pop("image"), "missing key 'image'"),
        (lambda d: d.update(inner=0.95), "'inner' must be a number from 0.1 to 0.9"),
    ],
)
def test_bad_configs_name_the_problem(change, words):
    data = config_dict()
    change(data)
    with pytest.raises(ScanError, match=re.escape(words)):
        view_config_from_dict(data, "rig.toml")


def test_missing_image_and_wrong_camera_are_reported():
    config = default_views("corners", 3)
    images = render_views(scramble(3, seed=1)["state"], "corners", "daylight", np.random.default_rng(1))
    with pytest.raises(ScanError, match="no image 'dlb'"):
        sample_views({"ufr": images["ufr"]}, config)
    small = {name: cv2.resize(img, (64, 48)) for name, img in images.items()}
    with pytest.raises(ScanError, match="corners lie outside image"):
        sample_views(small, config)
    with pytest.raises(ScanError, match="pixel type float64"):
        sample_views({name: img.astype(float) for name, img in images.items()}, config)


def test_rotated_frames_read_through_their_corner_labels():
    """A flip rig that presents a face turned: the labels, not the image axes, give the orientation."""
    rng = np.random.default_rng(4)
    state = scramble(3, seed=4)["state"]
    images = render_views(state, "flip", "daylight", rng)
    config = default_views("flip", 3).to_json()
    for view in config["view"]:
        h, w = images[view["image"]].shape[:2]
        images[view["image"]] = cv2.rotate(images[view["image"]], cv2.ROTATE_90_CLOCKWISE)
        view["corners"] = [[h - 1 - y, x] for x, y in view["corners"]]
    assert scan_views(images, view_config_from_dict(config)).state == state


def test_glare_pixels_are_left_out():
    square = np.zeros((60, 60, 3), np.uint8)
    square[:] = (30, 60, 200)  # BGR: a red face
    yy, xx = np.mgrid[0:60, 0:60]
    spot = np.exp(-((xx - 31) ** 2 + (yy - 29) ** 2) / (2 * 2.5**2))
    glared = np.clip(square + spot[:, :, None] * 255, 0, 255).astype(np.uint8)
    rgb = sample_square(glared, 3)
    assert np.abs(rgb[4] - (200, 60, 30)).max() <= 3  # the centre sticker, under the spot
    white = np.full((60, 60, 3), 235, np.uint8)  # white stickers are bright and pale, not glare
    assert np.abs(sample_square(white, 3) - 235).max() <= 1


def test_perspective_sampling_of_a_drawn_face():
    image = np.full((300, 400, 3), 20, np.uint8)
    corners = np.array([[100, 50], [330, 80], [300, 260], [80, 240]], float)
    colours = np.arange(9)[:, None] * 20 + np.array([10, 40, 70])
    target = np.float32([[0, 0], [3, 0], [3, 3], [0, 3]])
    to_image = cv2.getPerspectiveTransform(target, np.float32(corners))
    for k in range(9):
        r, c = divmod(k, 3)
        cell = np.float32([[[c + 0.1, r + 0.1], [c + 0.9, r + 0.1], [c + 0.9, r + 0.9], [c + 0.1, r + 0.9]]])
        poly = cv2.perspectiveTransform(cell, to_image)[0]
        cv2.fillConvexPoly(image, np.int32(poly), [int(v) for v in colours[k][::-1]])
    assert np.abs(sample_face(image, corners, 3) - colours).max() <= 1


@pytest.mark.parametrize("size", [2, 3])
def test_a_view_config_a_little_off_still_reads(size):
    """Corners clicked a few pixels off (a tenth of a sticker): only the middle of each sticker is read."""
    rng = np.random.default_rng(30 + size)
    config = default_views("corners", size).to_json()
    for view in config["view"]:
        corners = np.array(view["corners"])
        pitch = np.linalg.norm(corners[1] - corners[0]) / size
        view["corners"] = (corners + rng.uniform(-0.1, 0.1, (4, 2)) * pitch).tolist()
    shifted = view_config_from_dict(config)
    for seed in range(3):
        state = scramble(size, seed=seed)["state"]
        assert scan_views(render_views(state, "corners", "led", rng), shifted).state == state
