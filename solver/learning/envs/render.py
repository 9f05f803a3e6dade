"""Pictures of a state: the unfolded net as ANSI-coloured text, or as an RGB image drawn with OpenCV."""

from __future__ import annotations

import cv2
import numpy as np

from .puzzles import StickerPuzzle

MARGIN = 4  # pixels around the net


def ansi(puzzle: StickerPuzzle, state: np.ndarray) -> str:
    """The net in text: two coloured blocks per sticker (24-bit colour escapes), blanks elsewhere."""
    cells = puzzle.net.cells
    grid = [["  "] * (cells[:, 1].max() + 1) for _ in range(cells[:, 0].max() + 1)]
    for (row, col), face in zip(cells, state):
        r, g, b = puzzle.net.colours[face]
        grid[row][col] = f"\x1b[48;2;{r};{g};{b}m{puzzle.faces[face]} \x1b[0m"
    return "\n".join("".join(line).rstrip() for line in grid) + "\n"


def rgb_array(puzzle: StickerPuzzle, state: np.ndarray) -> np.ndarray:
    """(height, width, 3) uint8 image of the net on a grey ground, stickers outlined in black."""
    net = puzzle.net
    points = [np.rint(p * net.scale).astype(np.int32) + MARGIN for p in net.polygons]
    width, height = np.max([p.max(axis=0) for p in points], axis=0) + MARGIN + 1
    image = np.full((height, width, 3), 60, dtype=np.uint8)
    for polygon, face in zip(points, state):
        cv2.fillPoly(image, [polygon], net.colours[face])
        cv2.polylines(image, [polygon], True, (0, 0, 0), 2)
    return image
