"""``vision.draw_overlay``: the six faces as scanned, laid out as the net, with the stickers in doubt framed red."""

import cv2
import numpy as np
import pytest

from doubtful_scans import refused_images
from solver import scramble
from vision import Classification, ScanError, default_views, draw_overlay, render_views, scan_views
from vision.overlay import FACE_PX, MARGIN, NET_CELL, TITLE_PX, doubtful_stickers, encode_png
from vision.views import FaceView, ViewConfig

RED, WHITE = (0, 0, 255), (255, 255, 255)
M = int(round(FACE_PX * MARGIN))
TILE_W, TILE_H = FACE_PX + 2 * M, TITLE_PX + FACE_PX + 2 * M


def cell_box(name: str, size: int) -> tuple[int, int, int, int]:
    """Where sticker ``name`` (e.g. "F3") lies in the overlay: x0, y0, x1, y1."""
    face, k = name[0], int(name[1:]) - 1
    col, row = NET_CELL[face]
    cell = FACE_PX / size
    left, top = col * TILE_W + M, row * TILE_H + TITLE_PX + M
    r, c = divmod(k, size)
    return (
        int(round(left + c * cell)),
        int(round(top + r * cell)),
        int(round(left + (c + 1) * cell)),
        int(round(top + (r + 1) * cell)),
    )


def top_of_frame(overlay: np.ndarray, name: str, size: int) -> np.ndarray:
    """The pixels along the top side of the doubt frame of sticker ``name``."""
    x0, y0, x1, _ = cell_box(name, size)
    return overlay[y0 + 3, x0 + 8 : x1 - 30]


@pytest.fixture(scope="module")
def corner_scan():
    state = scramble(3, seed=12)["state"]
    views = default_views("corners", 3)
    images = render_views(state, "corners", "daylight", np.random.default_rng(1))
    return images, views, scan_views(images, views)


def test_one_picture_of_the_net_with_a_tile_per_face(corner_scan):
    images, views, reading = corner_scan
    overlay = draw_overlay(images, views, reading)
    assert overlay.shape == (3 * TILE_H, 4 * TILE_W, 3) and overlay.dtype == np.uint8
    for face, (col, row) in NET_CELL.items():  # every face tile shows a picture, not a blank
        tile = overlay[row * TILE_H + TITLE_PX : (row + 1) * TILE_H, col * TILE_W : (col + 1) * TILE_W]
        assert tile.std() > 20, face
    assert overlay[2 * TILE_H :, 2 * TILE_W :].max() == overlay[2 * TILE_H :, 2 * TILE_W :].min()  # a free cell
    assert cv2.imdecode(np.frombuffer(encode_png(overlay), np.uint8), cv2.IMREAD_COLOR).shape == overlay.shape


def test_doubtful_stickers_are_framed_red_and_the_others_not(corner_scan):
    images, views, reading = corner_scan
    overlay = draw_overlay(images, views, reading, ("F3", "B9"))
    for name in ("F3", "B9"):
        assert (top_of_frame(overlay, name, 3) == RED).all(), name
    for name in ("F2", "U1", "B8"):
        assert not (top_of_frame(overlay, name, 3) == RED).all(axis=1).any(), name
    plain = draw_overlay(images, views, reading)
    assert not (top_of_frame(plain, "F3", 3) == RED).all(axis=1).any()


def test_low_confidence_counts_as_doubt(corner_scan):
    images, views, reading = corner_scan
    confidence = reading.confidence.copy()
    confidence[20] = 0.3  # F3
    shaky = Classification(reading.state, confidence)
    assert doubtful_stickers(shaky) == ("F3",)
    assert doubtful_stickers(shaky, ("R1", "F3")) == ("R1", "F3")
    assert (top_of_frame(draw_overlay(images, views, shaky), "F3", 3) == RED).all()


def test_swatch_shows_the_colour_read_and_none_without_a_reading():
    solved = scramble(3, seed=0, length=0)["state"]
    views = default_views("corners", 3)
    images = render_views(solved, "corners", "daylight", np.random.default_rng(2))
    reading = scan_views(images, views)
    overlay = draw_overlay(images, views, reading)
    grids_only = draw_overlay(images, views, None)
    for name, strongest in (("F1", 1), ("R1", 2), ("B1", 0)):  # green, red, blue faces (BGR channels)
        x0, y0, _, _ = cell_box(name, 3)
        assert tuple(overlay[y0 + 7, x0 + 7]) == WHITE  # the swatch's border
        swatch = overlay[y0 + 10, x0 + 10].astype(int)
        assert swatch.argmax() == strongest, (name, swatch)
        assert tuple(grids_only[y0 + 7, x0 + 7]) != WHITE  # no swatch: the face as seen


def test_a_refused_scan_shows_its_reading_and_doubts():
    images, views = refused_images(scramble(3, seed=12)["state"])
    with pytest.raises(ScanError) as refused:
        scan_views(images, views)
    error = refused.value
    assert error.stickers and error.reading is not None
    overlay = draw_overlay(images, views, error.reading, error.stickers)
    for name in error.stickers:
        assert (top_of_frame(overlay, name, 3) == RED).all(), name
    grids_only = draw_overlay(images, views, None, error.stickers)  # colours unusable: grids and doubts
    assert (top_of_frame(grids_only, error.stickers[0], 3) == RED).all()


@pytest.mark.parametrize("scale", [3.0, 0.5])
def test_same_picture_size_for_large_and_small_frames(corner_scan, scale):
    images, views, reading = corner_scan
    resized = {
        name: cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        for name, image in images.items()
    }
    scaled = ViewConfig(3, tuple(FaceView(v.image, v.face, (v.corners + 0.5) * scale - 0.5) for v in views.views))
    overlay = draw_overlay(resized, scaled, reading, ("L5",))
    assert overlay.shape == (3 * TILE_H, 4 * TILE_W, 3)
    assert (top_of_frame(overlay, "L5", 3) == RED).all()


def test_a_2x2_and_a_missing_image():
    state = scramble(2, seed=3)["state"]
    views = default_views("flip", 2)
    images = render_views(state, "flip", "led", np.random.default_rng(3))
    reading = scan_views(images, views)
    missing = next(v for v in views.views if v.face == "D").image
    del images[missing]
    overlay = draw_overlay(images, views, reading, ("U4",))  # D's tile says so instead of failing
    assert overlay.shape == (3 * TILE_H, 4 * TILE_W, 3)
    assert (top_of_frame(overlay, "U4", 2) == RED).all()


def test_bad_arguments_are_scan_errors(corner_scan):
    images, views, reading = corner_scan
    with pytest.raises(ScanError, match="no sticker 'F10' on a 3x3x3 cube"):
        draw_overlay(images, views, reading, ("F10",))
    small = Classification("U" * 24, np.ones(24))
    with pytest.raises(ScanError, match="reading is of a 2x2x2 cube"):
        draw_overlay(images, views, small)
