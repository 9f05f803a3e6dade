"""2D nets of the puzzles: one polygon and one text cell per sticker, for drawing and printing.

Coordinates are in face widths (x right, y down). Cubes use the cross net of
DESIGN.md (U above F; L F R B in a row; D below F); the Skewb the same net
with each face split into its centre diamond and four corner triangles; the
Pyraminx its own net of four triangles (F pointing up, L R D around it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...puzzles.pyraminx import NET as PYRAMINX_NET
from ...puzzles.pyraminx import STICKERS as PYRAMINX_STICKERS

CUBE_LAYOUT = {"U": (1, 0), "R": (2, 1), "F": (1, 1), "D": (1, 2), "L": (0, 1), "B": (3, 1)}  # (col, row)
CUBE_COLOURS = ((255, 255, 255), (220, 30, 30), (30, 170, 60), (250, 220, 0), (255, 130, 0), (20, 70, 220))
PYRAMINX_COLOURS = ((30, 170, 60), (220, 30, 30), (20, 70, 220), (250, 220, 0))  # F L R D, RGB


@dataclass(frozen=True, eq=False)
class Net:
    polygons: tuple[np.ndarray, ...]  # per sticker, (corners, 2) float, in face widths
    cells: np.ndarray  # (stickers, 2) int: (row, col) of the sticker in the text net
    colours: tuple[tuple[int, int, int], ...]  # RGB per face index
    scale: int  # pixels per face width in the image


def _square(x: float, y: float, size: float) -> np.ndarray:
    return np.array([(x, y), (x + size, y), (x + size, y + size), (x, y + size)])


def cube_net(n: int) -> Net:
    polygons, cells = [], []
    for face in "URFDLB":
        col, row = CUBE_LAYOUT[face]
        for r in range(n):
            for c in range(n):
                polygons.append(_square(col + c / n, row + r / n, 1 / n))
                cells.append((row * n + r, col * n + c))
    return Net(tuple(polygons), np.array(cells), CUBE_COLOURS, 64)


_SKEWB_PIECES = (
    ((0, 0), (0.5, 0), (0, 0.5)),
    ((0.5, 0), (1, 0), (1, 0.5)),
    ((0.5, 0), (1, 0.5), (0.5, 1), (0, 0.5)),
    ((0, 0.5), (0.5, 1), (0, 1)),
    ((1, 0.5), (1, 1), (0.5, 1)),
)
_SKEWB_CELLS = ((0, 0), (0, 2), (1, 1), (2, 0), (2, 2))


def skewb_net() -> Net:
    polygons, cells = [], []
    for face in "URFDLB":
        col, row = CUBE_LAYOUT[face]
        polygons += [np.array(piece, dtype=float) + (col, row) for piece in _SKEWB_PIECES]
        cells += [(3 * row + r, 3 * col + c) for r, c in _SKEWB_CELLS]
    return Net(tuple(polygons), np.array(cells), CUBE_COLOURS, 64)


def _pyraminx_triangle(face: str, weights: dict[str, int]) -> np.ndarray:
    """The small triangle around a sticker's centre (vertex weights out of 9), in net coordinates."""
    names = list(weights)
    w = np.array([weights[v] for v in names])
    up = w[0] % 3 == 1  # a triangle pointing like its face: its corners are w + 3 e_v - 1
    corners = [w + (3 * e - 1 if up else 1 - 3 * e) for e in np.eye(3, dtype=int)]
    vertices = np.array([PYRAMINX_NET[face][v] for v in names], dtype=float)  # x right, y up, in heights
    points = np.array(corners) @ vertices / 9
    return np.column_stack([(points[:, 0] + 1) / 2, (1 - points[:, 1]) * np.sqrt(3) / 2])


def pyraminx_net() -> Net:
    polygons = tuple(_pyraminx_triangle("FLRD"[i // 9], w) for i, w in enumerate(PYRAMINX_STICKERS))
    centres = np.array([p.mean(axis=0) for p in polygons])
    row = np.floor(centres[:, 1] / (np.sqrt(3) / 6)).astype(int)  # three rows per face height
    col = np.rint(centres[:, 0] * 6).astype(int)  # centres of neighbours are 1/6 apart
    return Net(polygons, np.column_stack([row, col]), PYRAMINX_COLOURS, 128)
