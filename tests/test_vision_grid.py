"""Automatic sticker-grid detection in photos of one face."""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from solver import scramble
from vision import ScanError, detect_grid, render_views, sample_face, sample_photos, scan_photos
from vision.grid import turn_in_doubt
from vision.grid_candidates import brightness_edges, candidates
from vision.render import face_photo_corners, render_face_photo
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
    assert corners[1][0] > corners[0][0] and corners[3][1] > corners[0][1]  # TR right of TL, BL below TL


def test_no_grid_is_a_clear_error():
    rng = np.random.default_rng(1)
    noise = rng.integers(0, 255, (480, 640, 3), dtype=np.uint8)
    with pytest.raises(ScanError, match="face U: no 2x2 or 3x3 sticker grid found"):
        detect_grid(noise, name="face U")
    blank = np.full((480, 640, 3), 90, np.uint8)
    cv2.rectangle(blank, (200, 150), (300, 250), (0, 0, 200), -1)  # one red square is no grid
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


# --- real photos: the dev set beside the repository (read where it lies, never copied: some items are GPL) ---

DEVSET = Path(__file__).resolve().parent.parent.parent / "shared" / "vision-devset"
PHOTO_SETS = sorted(p.name for p in (DEVSET / "photos").iterdir()) if (DEVSET / "photos").is_dir() else []
needs_devset = pytest.mark.skipif(not PHOTO_SETS, reason=f"the vision dev set is not at {DEVSET}")
READOUT_ORDER = "ULFRBD"  # the source readouts list faces in this order (the dev set's README)
# The README: this readout's D values were not taken from the stickers; that face is checked against the answer.
READOUT_NOT_FROM_STICKERS = {("tracker-1990229-3x3x3-random-05", "D")}


def _dev_photo(set_id: str, face: str) -> np.ndarray:
    image = cv2.imread(str(DEVSET / "photos" / set_id / f"rubiks-side-{face}.jpg"))
    assert image is not None, f"cannot read {set_id} {face}"
    return image


def _dev_size(set_id: str) -> int:
    return 2 if "2x2x2" in set_id else 3


def _readout(set_id: str) -> dict[str, np.ndarray]:
    """The source's own sticker colours of a photo set, per face (RGB, reading order)."""
    folder = DEVSET / "photos" / set_id
    source = next(p for p in folder.glob("*.txt") if p.name != "answer.txt")
    values = json.loads(source.read_text())
    m = _dev_size(set_id) ** 2
    return {
        face: np.array([values[str(k * m + j + 1)] for j in range(m)], dtype=float)
        for k, face in enumerate(READOUT_ORDER)
    }


@needs_devset
@pytest.mark.parametrize("set_id", PHOTO_SETS)
def test_every_dev_photo_shows_its_grid_where_the_stickers_are(set_id):
    """Right size without being told, and the stickers read where the grid puts them are the photo's stickers.

    The colours sampled through the found corners must match the source's
    own readout of the same photos sticker by sticker (a grid off by a
    fraction of a sticker reads gaps and neighbours instead).
    """
    size, readout = _dev_size(set_id), _readout(set_id)
    answer = (DEVSET / "photos" / set_id / "answer.txt").read_text().strip()
    for k, face in enumerate("URFDLB"):
        image = _dev_photo(set_id, face)
        grid = detect_grid(image, name=f"{set_id} {face}")
        assert grid.size == size, f"{set_id} {face}: found {grid.size}x{grid.size}"
        assert grid.votes >= size * size - 1
        rgb = sample_face(image, grid.corners, size)
        if (set_id, face) in READOUT_NOT_FROM_STICKERS:
            letters = np.array(list(answer[k * size * size : (k + 1) * size * size]))
            distance = np.linalg.norm(rgb[:, None] - rgb[None], axis=2)
            same = letters[:, None] == letters[None]
            np.fill_diagonal(same, False)
            assert distance[same].max() < distance[letters[:, None] != letters[None]].min()
        else:
            off = np.abs(rgb - readout[face]).mean(axis=1)
            assert off.max() < 20, f"{set_id} {face}: stickers off the readout by {np.round(off)}"


@needs_devset
@pytest.mark.parametrize(
    "set_id, face",
    [
        ("tracker-40f3729-3x3x3-random-01", "F"),
        ("tracker-40f3729-3x3x3-random-01", "B"),
        ("tracker-1990229-3x3x3-random-05", "U"),
    ],
)
def test_a_sticker_whose_edges_stand_apart_is_not_taken_for_a_larger_one(set_id, face):
    """These faces were missed: one sticker's edge band touched no other edge, so the region around it had a
    hole whose rim (the band's outside) was kept as a candidate larger than the sticker, and the 3x3 failed
    the size check. Now every sticker is found, at either size setting."""
    image = _dev_photo(set_id, face)
    for size in (3, None):
        grid = detect_grid(image, size)
        assert grid.size == 3 and grid.votes == 9


def test_a_region_is_measured_by_its_own_outline():
    image = np.full((240, 320, 3), 25, np.uint8)
    cv2.rectangle(image, (140, 100), (179, 139), (40, 200, 60), -1)  # one 40-pixel sticker alone
    found = candidates(brightness_edges(image))
    assert len(found) == 1
    assert abs(found[0, 2] - 40) < 3  # not the rim of the edge band around it


@needs_devset
@pytest.mark.parametrize("angle", [-40, -20, 20, 40])
def test_dev_photos_turned_in_the_plane(angle):
    """Each set's F photo turned about its centre: the same grid, turned with it (the axis closest to x is "right")."""
    for set_id in PHOTO_SETS:
        image, size = _dev_photo(set_id, "F"), _dev_size(set_id)
        upright = detect_grid(image, size).corners
        h, w = image.shape[:2]
        turn = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
        grid = detect_grid(cv2.warpAffine(image, turn, (w, h)))
        expected = np.c_[upright, np.ones(4)] @ turn.T
        pitch = np.linalg.norm(upright[1] - upright[0]) / size
        assert grid.size == size
        assert np.abs(grid.corners - expected).max() < 0.25 * pitch, (set_id, angle)


# --- renders at controlled poses: turned up to 40 degrees, the face filling 25-100% of the frame, tilted up to 30 ---

POSES = [  # size, rotation, fill, tilt, tilt towards, offset, light
    (3, 40, 0.25, 0, 0, (0.0, 0.0), "tungsten"),  # small and turned: the stickers need the finer copy
    (3, -40, 0.25, 15, 200, (0.5, -0.5), "dim"),
    (3, -10, 1.0, 30, 100, (0.0, 0.0), "dim"),  # near stickers half again as large as far ones
    (3, 25, 0.6, 30, 300, (-0.6, 0.3), "side"),
    (3, 0, 0.4, 30, 45, (0.0, 0.0), "daylight"),  # stickers seen as parallelograms
    (2, 10, 1.0, 30, 60, (0.0, 0.0), "dim"),
    (2, -40, 1.0, 30, 210, (0.0, 0.0), "side"),  # one lamp: a glare spot
    (2, 0, 0.25, 15, 250, (1.0, -1.0), "tungsten"),  # dark blue stickers in a warm light, at the frame's edge
    (2, 25, 0.5, 20, 135, (-1.0, 1.0), "led"),
    (2, -25, 0.8, 0, 0, (0.3, 0.3), "daylight"),
]


@pytest.mark.parametrize("size, rotation, fill, tilt, towards, offset, light", POSES)
def test_grid_at_controlled_poses(size, rotation, fill, tilt, towards, offset, light):
    pose = dict(rotation_deg=rotation, fill=fill, tilt_deg=tilt, tilt_towards_deg=towards, offset=offset)
    state = scramble(size, seed=rotation + 100 * size)["state"]
    image = render_face_photo(state, "F", light=light, rng=np.random.default_rng(7), **pose)
    truth = face_photo_corners(size, "F", **pose)
    top, left = truth[1] - truth[0], truth[3] - truth[0]
    assert abs(np.degrees(np.arctan2(top[1], top[0]))) < 42 and abs(np.degrees(np.arctan2(-left[0], left[1]))) < 42
    grid = detect_grid(image)
    pitch = np.linalg.norm(truth - np.roll(truth, 1, axis=0), axis=1).mean() / size
    assert grid.size == size
    assert np.abs(grid.corners - truth).max() < 0.25 * pitch


@pytest.mark.parametrize("cut, light", [(0.05, "daylight"), (0.1, "tungsten")])
def test_a_face_cut_by_the_frame_edge_is_found(cut, light):
    """The bottom row runs off the photo (its lower gap and part of each sticker unseen): a side the photo does
    not show is not judged, so the row still counts as stickers framed by plastic."""
    state = scramble(3, seed=12)["state"]
    pose = dict(rotation_deg=8, fill=0.6, tilt_deg=10, tilt_towards_deg=90)
    image = render_face_photo(state, "F", light=light, rng=np.random.default_rng(3), **pose)
    truth = face_photo_corners(3, "F", **pose)
    h, w = image.shape[:2]
    span = np.ptp(truth[:, 1])
    shift = h + cut * span - truth[:, 1].max()  # the face's lower edge that far below the frame
    moved = cv2.warpAffine(image, np.float32([[1, 0, 0], [0, 1, shift]]), (w, h), borderMode=cv2.BORDER_REPLICATE)
    grid = detect_grid(moved)
    assert grid.size == 3
    assert np.abs(grid.corners - (truth + [0, shift])).max() < 0.25 * span / 3


def test_what_the_photo_does_not_show_is_no_frame():
    """A 2x2 near the frame's edge: a 3x3 window hanging off the photo must not pass as framed there."""
    state = scramble(2, seed=241)["state"]
    image = render_views(state, "phone", "side", np.random.default_rng(31))["U"]
    assert detect_grid(image).size == 2


@pytest.mark.parametrize("size", [2, 3])
def test_faces_seen_turned_by_about_45_degrees_are_read_the_way_that_makes_a_cube(size):
    # Turned by 50 degrees, R and B look turned by 40 the other way: the grid takes them a quarter turn
    # off, and no single face turned back makes a cube. Read both the other way, they do.
    state = scramble(size, seed=11)["state"]
    rng = np.random.default_rng(11)
    rolled = {"R": 50.0, "B": -50.0}
    photos = {
        f: render_face_photo(state, f, rotation_deg=rolled.get(f, 0.0), fill=0.6, light="daylight", rng=rng)
        for f in "URFDLB"
    }
    assert {f: turn_in_doubt(detect_grid(photos[f], size).corners) for f in "URFDLB"} == {
        "U": 0,
        "R": 3,
        "F": 0,
        "D": 0,
        "L": 0,
        "B": 1,
    }
    result = scan_photos(photos, size)
    assert result.state == state
    assert result.turned == {"R": 3, "B": 1}


def test_a_face_turned_well_short_of_45_degrees_is_not_in_doubt():
    state = scramble(3, seed=4)["state"]
    for roll in (-30.0, 0.0, 30.0):
        image = render_face_photo(state, "F", rotation_deg=roll, fill=0.6, rng=np.random.default_rng(4))
        assert turn_in_doubt(detect_grid(image, 3).corners) == 0


def test_every_face_seen_at_about_45_degrees_is_read_the_way_that_makes_a_cube():
    state = scramble(3, seed=21)["state"]
    rng = np.random.default_rng(21)
    rolls = {"U": 50.0, "R": -50.0, "F": 50.0, "D": -50.0, "L": 50.0, "B": -50.0}
    photos = {f: render_face_photo(state, f, rotation_deg=rolls[f], fill=0.6, rng=rng) for f in "URFDLB"}
    result = scan_photos(photos, 3)
    assert result.state == state
    assert result.turned == {f: 3 if roll > 0 else 1 for f, roll in rolls.items()}
