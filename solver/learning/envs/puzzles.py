"""The four puzzles as sticker permutations: what every environment needs to know about a puzzle.

A ``StickerPuzzle`` holds states as int8 vectors of face indices (one per
sticker, in the puzzle's facelet-string order), moves as ``new = old[perm]``
rows, and the 2D net used to draw it. The cube permutations come from
``solver.puzzles.cube.geometry``, the Skewb's and Pyraminx's from their ``PuzzleModel``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np

from ...puzzles import PuzzleModel, get_puzzle, pyraminx, skewb
from ...puzzles.cube.batch import Puzzle, to_facelet_array
from ...puzzles.cube.geometry import FACES as CUBE_FACES
from ...puzzles.cube.notation import MOVE_NAMES, move_permutation
from ...puzzles.cube.scramble import random_states as random_cubie_states
from . import nets

RandomStates = Callable[[np.random.Generator, int], np.ndarray]


@dataclass(frozen=True, eq=False)
class StickerPuzzle:
    name: str
    faces: str  # face letters; a state's value k means faces[k]
    moves: np.ndarray  # (moves, stickers) intp: new = old[moves[m]]
    move_names: tuple[str, ...]
    solved: np.ndarray  # (stickers,) int8
    random_states: RandomStates  # (rng, count) -> (count, stickers) int8, uniform over reachable states
    net: nets.Net
    subgoals: tuple[np.ndarray, ...] = ()  # nested sticker masks of a human method, the last one all stickers

    @property
    def stickers(self) -> int:
        return self.moves.shape[1]

    def to_letters(self, state: np.ndarray) -> str:
        return "".join(self.faces[k] for k in state)

    def from_letters(self, state: str) -> np.ndarray:
        return np.array([self.faces.index(c) for c in state], dtype=np.int8)


def _cube_moves(n: int, count: int) -> np.ndarray:
    return np.array([move_permutation(move, n) for move in range(count)], dtype=np.intp)


def _cube_random(size: int) -> RandomStates:
    def draw(rng: np.random.Generator, count: int) -> np.ndarray:
        return to_facelet_array(random_cubie_states(Puzzle.of_size(size), count, rng)).astype(np.int8)

    return draw


def _model_random(model: PuzzleModel, faces: str) -> RandomStates:
    lut = np.full(128, -1, dtype=np.int8)
    lut[[ord(f) for f in faces]] = np.arange(len(faces))

    def draw(rng: np.random.Generator, count: int) -> np.ndarray:
        text = "".join(model.random_state(rng) for _ in range(count))
        return lut[np.frombuffer(text.encode(), dtype=np.uint8)].reshape(count, -1)

    return draw


def _mask(stickers: int, *groups) -> np.ndarray:
    """A sticker mask: True at every index in the groups."""
    out = np.zeros(stickers, dtype=bool)
    for g in groups:
        out[np.ravel(g)] = True
    return out


def _cube_subgoals(n: int) -> tuple[np.ndarray, ...]:
    """Layer by layer from the D face: (3x3: cross,) first layer, (3x3: second layer,) U face, solved."""
    face = np.arange(6 * n * n).reshape(6, n, n)
    sides = [CUBE_FACES.index(f) for f in "RFLB"]
    d, u = CUBE_FACES.index("D"), CUBE_FACES.index("U")

    def mask(*groups) -> np.ndarray:
        return _mask(6 * n * n, *groups)

    first = mask(face[d], face[sides, n - 1])
    solved = mask(face)
    if n == 2:
        return first, first | mask(face[u]), solved
    cross = mask(face[d, [0, 1, 1, 1, 2], [1, 0, 1, 2, 1]], face[sides, 2, 1])
    second = first | mask(face[sides, 1])
    return cross, first, second, second | mask(face[u]), solved


def _cube(size: int, name: str) -> StickerPuzzle:
    count = 9 if size == 2 else 18  # the 2x2 keeps DLB in place: U R F only, as the solver does
    solved = np.repeat(np.arange(6, dtype=np.int8), size * size)
    return StickerPuzzle(
        name,
        CUBE_FACES,
        _cube_moves(size, count),
        MOVE_NAMES[:count],
        solved,
        _cube_random(size),
        nets.cube_net(size),
        _cube_subgoals(size),
    )


def _skewb_subgoals() -> tuple[np.ndarray, ...]:
    """The beginner's (Sarah's) method from D: first layer (D centre and the four D corners), all corners, solved.

    Centres come last because every Skewb move cycles three of them, so they
    are the easiest to finish with the corners in place; URF never moves.
    """
    first = _mask(30, skewb.CENTRES[skewb.FACES.index("D")], [skewb.CORNERS[s] for s in range(4, 8)])
    return first, first | _mask(30, skewb.CORNERS), _mask(30, range(30))


def _pyraminx_subgoals() -> tuple[np.ndarray, ...]:
    """The layer method, tips apart (the tables leave them out): the four centres, the first (D) layer, solved.

    Each centre is one turn from its place, so orienting them all is a
    beginner's first step; the D layer adds its three edges (FD, LD, RD);
    the last stage is every sticker, tips included.
    """
    centres = _mask(36, pyraminx.CENTRES)
    first = centres | _mask(36, [pyraminx.EDGE_STICKERS[pyraminx.EDGES.index(e)] for e in ("FD", "LD", "RD")])
    return centres, first, _mask(36, range(36))


def _model(key: str, faces: str, net: nets.Net, subgoals: tuple[np.ndarray, ...]) -> StickerPuzzle:
    model = get_puzzle(key)
    solved = np.array([faces.index(c) for c in model.solved], dtype=np.int8)
    return StickerPuzzle(
        model.name,
        faces,
        np.array(model.sticker_moves, dtype=np.intp),
        model.move_names,
        solved,
        _model_random(model, faces),
        net,
        subgoals,
    )


@cache
def sticker_puzzle(key: str) -> StickerPuzzle:
    """``"pocket"``, ``"cube3"``, ``"skewb"`` or ``"pyraminx"``."""
    if key == "pocket":
        return _cube(2, "2x2x2")
    if key == "cube3":
        return _cube(3, "3x3x3")
    if key == "skewb":
        return _model("skewb", "URFDLB", nets.skewb_net(), _skewb_subgoals())
    if key == "pyraminx":
        return _model("pyraminx", "FLRD", nets.pyraminx_net(), _pyraminx_subgoals())
    raise ValueError(f"unknown puzzle {key!r}: use 'pocket', 'cube3', 'skewb' or 'pyraminx'")
