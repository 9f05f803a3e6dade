"""Rendered cube images the vision must refuse: two edges' stickers painted grey, so the pieces cannot tell
which of the two edges is which (the classifier names the four stickers in doubt)."""

import cv2
import numpy as np

from solver.puzzles.cube.geometry import FACES, edge_facelets
from vision import ViewConfig, default_views, render_views

GREY = (128, 128, 128)


def paint_sticker(images: dict, views: ViewConfig, index: int, bgr=GREY) -> None:
    """Fill the middle of facelet ``index`` with one colour, in the image its face is seen in."""
    n = views.size
    view = views.views[index // (n * n)]
    assert view.face == FACES[index // (n * n)]
    row, col = divmod(index % (n * n), n)
    to_image = cv2.getPerspectiveTransform(np.float32([[0, 0], [n, 0], [n, n], [0, n]]), np.float32(view.corners))
    middle = np.float32(
        [[col + 0.15, row + 0.15], [col + 0.85, row + 0.15], [col + 0.85, row + 0.85], [col + 0.15, row + 0.85]]
    ).reshape(-1, 1, 2)
    points = cv2.perspectiveTransform(middle, to_image).reshape(-1, 2)
    cv2.fillConvexPoly(images[view.image], np.int32(np.round(points)), bgr)


def grey_edges(images: dict, views: ViewConfig) -> dict:
    """Paint the stickers of the first two edges grey (in place); returns the images."""
    for edge in edge_facelets()[:2]:
        for index in edge:
            paint_sticker(images, views, index)
    return images


def refused_images(state: str, seed: int = 1) -> tuple[dict, ViewConfig]:
    """Corner-camera frames of ``state`` with two grey edges, and their view config."""
    views = default_views("corners", 3)
    images = render_views(state, "corners", "daylight", np.random.default_rng(seed))
    return grey_edges(images, views), views
