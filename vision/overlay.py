"""What a scan saw, as one picture: each face with its grid, the colours read and the stickers in doubt.

``draw_overlay`` warps each face of the view config out of its image to a
square of fixed size (so a 320x240 and a 1920x1080 frame give the same
picture) with a margin of its surroundings, dimmed, and lays the six faces
out as the unfolded net (U above F; L F R B in a row; D below). On each
face it draws the grid where the view config (or the grid detection) puts
it and, per sticker, a swatch of the colour it was read as with that face's
letter, and its confidence. The swatch is the median colour, in this scan's
frames, of the middles of all the stickers read as that face: the cube's
own colour under this light, not a nominal palette. Stickers in doubt
(named by the ``ScanError``, or read with a confidence below
``LOW_CONFIDENCE``) get a thick red frame and a "?". Without a reading (the
colours could not be used) only the grids and the named doubts are drawn.
"""

from __future__ import annotations

import cv2
import numpy as np

from solver.puzzles.cube.geometry import FACES, sticker_name

from .classify import Classification
from .errors import ScanError
from .sampling import check_image
from .views import FaceView, ViewConfig

LOW_CONFIDENCE = 0.6  # as the dashboard marks stickers: below this a reading is in doubt
FACE_PX = 180  # side of a face in its tile
MARGIN = 0.2  # surroundings shown on each side, as a share of the face's side
TITLE_PX = 26
NET_CELL = {"U": (1, 0), "L": (0, 1), "F": (1, 1), "R": (2, 1), "B": (3, 1), "D": (1, 2)}
GREY = 38  # background level
GRID = (0, 230, 255)  # BGR yellow
DOUBT = (0, 0, 255)  # BGR red
WHITE, BLACK = (255, 255, 255), (0, 0, 0)
FONT = cv2.FONT_HERSHEY_SIMPLEX


def doubtful_stickers(reading: Classification | None, named: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The stickers in doubt: those named (by a ``ScanError``) and those read below ``LOW_CONFIDENCE``."""
    low = (
        ()
        if reading is None
        else tuple(
            sticker_name(int(i), reading.size) for i in np.flatnonzero(np.asarray(reading.confidence) < LOW_CONFIDENCE)
        )
    )
    return tuple(dict.fromkeys((*named, *low)))


def draw_overlay(
    images: dict[str, np.ndarray],
    views: ViewConfig,
    reading: Classification | None = None,
    doubtful: tuple[str, ...] = (),
) -> np.ndarray:
    """One BGR picture of the six faces as scanned (see the module docstring)."""
    size = views.size
    if reading is not None and reading.size != size:
        raise ScanError(
            f"the reading is of a {reading.size}x{reading.size}x{reading.size} cube, "
            f"the view config of a {size}x{size}x{size}"
        )
    marked = doubtful_stickers(reading, tuple(doubtful))
    indices = _indices(marked, size)
    checked = _checked_images(images, views)
    margin = int(round(FACE_PX * MARGIN))
    faces = {view.face: _face_tile(checked[view.image], view, margin) for view in views.views}
    swatches = _swatch_colours(faces, size, margin, reading)
    tiles = {view.face: _tile(faces[view.face], view, size, margin, reading, indices, swatches) for view in views.views}
    return _compose(tiles, _legend(reading, marked))


def encode_png(image: np.ndarray) -> bytes:
    """The image as PNG file bytes."""
    ok, data = cv2.imencode(".png", image)
    if not ok:
        raise ScanError("the overlay could not be encoded as PNG")
    return data.tobytes()


def _indices(names: tuple[str, ...], size: int) -> set[int]:
    known = {sticker_name(i, size): i for i in range(6 * size * size)}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ScanError(f"no sticker {unknown[0]!r} on a {size}x{size}x{size} cube (names look like F3)")
    return {known[name] for name in names}


def _checked_images(images: dict[str, np.ndarray], views: ViewConfig) -> dict[str, np.ndarray | str]:
    """Each image the views need as 8-bit BGR, or the reason it cannot be drawn."""
    checked: dict[str, np.ndarray | str] = {}
    for name in views.images:
        if name not in images:
            checked[name] = f"no image {name!r}"
            continue
        try:
            checked[name] = check_image(images[name], name)
        except ScanError as error:
            checked[name] = str(error)
    return checked


def _face_tile(image: np.ndarray | str, view: FaceView, margin: int) -> np.ndarray:
    """The face warped out of its image with its surroundings, or a blank tile saying why there is none."""
    if isinstance(image, np.ndarray):
        return _warp_with_margin(image, view.corners, margin)
    side = FACE_PX + 2 * margin
    tile = np.full((side, side, 3), GREY, np.uint8)
    _text(tile, image, (6, 20), 0.4)
    return tile


def _warp_with_margin(image: np.ndarray, corners: np.ndarray, margin: int) -> np.ndarray:
    """The face warped to FACE_PX square (net orientation) inside ``margin`` pixels of its dimmed surroundings."""
    side = FACE_PX + 2 * margin
    square = np.array([[0, 0], [FACE_PX, 0], [FACE_PX, FACE_PX], [0, FACE_PX]], np.float32) + margin - 0.5
    matrix = cv2.getPerspectiveTransform(np.asarray(corners, np.float32), square)
    tile = cv2.warpPerspective(
        image,
        matrix,
        (side, side),
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=(GREY, GREY, GREY),
    )
    inside = tile[margin : margin + FACE_PX, margin : margin + FACE_PX].copy()
    tile = cv2.convertScaleAbs(tile, alpha=0.55)
    tile[margin : margin + FACE_PX, margin : margin + FACE_PX] = inside
    return tile


def _swatch_colours(
    faces: dict[str, np.ndarray], size: int, margin: int, reading: Classification | None
) -> dict[str, tuple]:
    """Per face letter, the median BGR of the middles of the stickers read as that face."""
    if reading is None:
        return {}
    cell = FACE_PX // size
    inner = slice(int(cell * 0.3), int(cell * 0.7))
    middles = []
    for face in FACES:
        square = faces[face][margin : margin + cell * size, margin : margin + cell * size]
        blocks = square.reshape(size, cell, size, cell, 3)[:, inner, :, inner]
        middles.append(np.median(blocks.transpose(0, 2, 1, 3, 4).reshape(size * size, -1, 3), axis=1))
    sampled = np.concatenate(middles)
    letters = np.array(list(reading.state))
    return {
        letter: tuple(int(v) for v in np.median(sampled[letters == letter], axis=0)) for letter in set(reading.state)
    }


def _tile(
    face: np.ndarray,
    view: FaceView,
    size: int,
    margin: int,
    reading: Classification | None,
    marked: set[int],
    swatches: dict[str, tuple],
) -> np.ndarray:
    side = face.shape[1]
    _grid(face, size, margin)
    if reading is not None or marked:
        for k in range(size * size):
            _sticker(face, FACES.index(view.face) * size * size + k, k, size, margin, reading, marked, swatches)
    title = np.full((TITLE_PX, side, 3), GREY, np.uint8)
    words = view.face if view.image == view.face else f"{view.face}  (image {view.image})"
    in_doubt = sum(1 for i in marked if i // (size * size) == FACES.index(view.face))
    _text(title, words, (6, TITLE_PX - 8), 0.55)
    if in_doubt:
        _text(title, f"{in_doubt} in doubt", (side - 86, TITLE_PX - 8), 0.45, colour=(90, 90, 255))
    return np.vstack([title, face])


def _grid(tile: np.ndarray, size: int, margin: int) -> None:
    for k in range(size + 1):
        at = margin + int(round(k * FACE_PX / size))
        end = margin + FACE_PX
        for colour, width in ((BLACK, 3), (GRID, 1)):
            cv2.line(tile, (at, margin), (at, end), colour, width, cv2.LINE_AA)
            cv2.line(tile, (margin, at), (end, at), colour, width, cv2.LINE_AA)


def _sticker(
    tile: np.ndarray,
    index: int,
    k: int,
    size: int,
    margin: int,
    reading: Classification | None,
    marked: set[int],
    swatches: dict[str, tuple],
) -> None:
    cell = FACE_PX / size
    row, col = divmod(k, size)
    x0, y0 = int(round(margin + col * cell)), int(round(margin + row * cell))
    x1, y1 = int(round(margin + (col + 1) * cell)), int(round(margin + (row + 1) * cell))
    if reading is not None:
        letter = reading.state[index]
        _swatch(tile, (x0 + 8, y0 + 8), swatches.get(letter, (GREY, GREY, GREY)), letter)
        _label(tile, f"{float(reading.confidence[index]):.2f}", (x0 + 8, y1 - 8))
    if index in marked:
        cv2.rectangle(tile, (x0 + 3, y0 + 3), (x1 - 3, y1 - 3), WHITE, 6)
        cv2.rectangle(tile, (x0 + 3, y0 + 3), (x1 - 3, y1 - 3), DOUBT, 4)
        cv2.circle(tile, (x1 - 15, y0 + 16), 10, WHITE, -1, cv2.LINE_AA)
        _text(tile, "?", (x1 - 20, y0 + 23), 0.6, colour=DOUBT, thickness=2)


def _swatch(tile: np.ndarray, at: tuple[int, int], colour: tuple, letter: str) -> None:
    x, y = at
    side = 18
    cv2.rectangle(tile, (x - 1, y - 1), (x + side, y + side), WHITE, 1)
    cv2.rectangle(tile, (x, y), (x + side - 1, y + side - 1), colour, -1)
    ink = BLACK if 0.114 * colour[0] + 0.587 * colour[1] + 0.299 * colour[2] > 120 else WHITE
    cv2.putText(tile, letter, (x + 4, y + 14), FONT, 0.45, ink, 1, cv2.LINE_AA)


def _label(tile: np.ndarray, text: str, at: tuple[int, int]) -> None:
    """White text on a dark box, readable over any sticker."""
    (width, height), _ = cv2.getTextSize(text, FONT, 0.4, 1)
    x, y = at
    cv2.rectangle(tile, (x - 2, y - height - 3), (x + width + 2, y + 3), BLACK, -1)
    cv2.putText(tile, text, (x, y), FONT, 0.4, WHITE, 1, cv2.LINE_AA)


def _text(
    image: np.ndarray, text: str, at: tuple[int, int], scale: float, colour: tuple = WHITE, thickness: int = 1
) -> None:
    cv2.putText(image, text, at, FONT, scale, colour, thickness, cv2.LINE_AA)


def _legend(reading: Classification | None, marked: tuple[str, ...]) -> list[tuple[str, tuple]]:
    lines: list[tuple[str, tuple]] = []
    if marked:
        lines.append((f"{len(marked)} sticker{'s' if len(marked) > 1 else ''} in doubt (red frame, ?):", DOUBT))
        lines += [("  " + ", ".join(marked[k : k + 9]), WHITE) for k in range(0, len(marked), 9)]
    else:
        lines.append(("no sticker in doubt", WHITE))
    if reading is None:
        lines.append(("colours not read: grids only", WHITE))
    else:
        lowest = int(np.argmin(reading.confidence))
        lines.append(
            (f"lowest confidence {float(reading.confidence[lowest]):.2f} ({sticker_name(lowest, reading.size)})", WHITE)
        )
        lines.append(("swatch: colour read, named by its face;", (200, 200, 200)))
        lines.append(("number: confidence 0..1", (200, 200, 200)))
    return lines


def _compose(tiles: dict[str, np.ndarray], legend: list[tuple[str, tuple]]) -> np.ndarray:
    height, width = next(iter(tiles.values())).shape[:2]
    canvas = np.full((3 * height, 4 * width, 3), GREY, np.uint8)
    for face, tile in tiles.items():
        col, row = NET_CELL[face]
        canvas[row * height : (row + 1) * height, col * width : (col + 1) * width] = tile
    for k, (line, colour) in enumerate(legend[: int(height // 22)]):  # the free cells right of U
        _text(canvas, line, (2 * width + 12, 30 + 22 * k), 0.5, colour)
    return canvas
