"""The colour scheme's handedness: a reading that mirrors the standard scheme cannot come from a real cube.

Every mass-produced cube with the standard (Western) scheme has white
opposite yellow, red opposite orange, green opposite blue, and the same
handedness: with white up and green in front, red is on the right. The
pieces alone cannot tell a cube from its mirror image, so two face images
swapped with each other (R for L, a 2x2's U for D) can still read as a
legal cube, only with its colours running the wrong way round a corner.

The colours are named without fixed thresholds on absolute colour, so
that a colour cast or a dim face does not decide a name:

- which opposite pair is white/yellow, red/orange and green/blue comes
  from the typical sticker colours (the best of the six ways to pair them);
- within a pair only relative cues are used, each clear on every cube:
  yellow is yellower than white (b*); blue lies further round the hue
  circle than green; orange is both lighter and yellower than red (both
  cues must agree, since a face lit differently changes lightness and a
  cast changes hue).

When a name is not clear, or the colours do not look like the standard
scheme at all (another scheme, a stickerless cube with other plastics),
nothing is decided and the reading stands.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np

from solver.puzzles.cube.geometry import FACES

from .lab import srgb_to_lab
from .reader import TYPICAL_STICKERS_SRGB

# Pairs of faces and of typical colours (order of vision.reader.TYPICAL_STICKERS_SRGB:
# white, red, green, yellow, orange, blue).
FACE_PAIRS = ((0, 3), (1, 4), (2, 5))  # U/D, R/L, F/B
WHITE, RED, GREEN, YELLOW, ORANGE, BLUE = range(6)
COLOUR_NAMES = ("white", "red", "green", "yellow", "orange", "blue")
COLOUR_PAIRS = ((WHITE, YELLOW), (RED, ORANGE), (GREEN, BLUE))
STANDARD_FACE = {WHITE: "U", RED: "R", GREEN: "F", YELLOW: "D", ORANGE: "L", BLUE: "B"}
NORMAL = {"R": (1, 0, 0), "L": (-1, 0, 0), "U": (0, 1, 0), "D": (0, -1, 0), "F": (0, 0, 1), "B": (0, 0, -1)}

MIN_YELLOW_B = 20.0  # CIELAB b*: below this the "yellow" is not yellow at all
MIN_WHITE_YELLOW_B = 10.0  # b* by which yellow must be yellower than white
MIN_RED_ORANGE_HUE = 2.0  # degrees by which orange's hue must exceed red's ...
MIN_RED_ORANGE_L = 3.0  # ... and L* units by which it must be lighter
GREEN_HUES = (100.0, 215.0)
BLUE_HUES = (215.0, 330.0)
MAX_GREEN_A = -10.0  # a*: green is always on the green side ...
MAX_BLUE_B = -8.0  # b*: ... and blue on the blue side
TYPICAL_LAB = srgb_to_lab(TYPICAL_STICKERS_SRGB)


def colour_names(lab: np.ndarray) -> dict[int, int] | None:
    """Each face's colour (index into ``COLOUR_NAMES``) from its reference colour in CIELAB
    (``lab``: 6 rows in face order U R F D L B), or None when any name is not clear."""
    pairing = _pairing(lab)
    names: dict[int, int] = {}
    for face_pair, colour_pair in zip(FACE_PAIRS, pairing):
        order = _order_within(lab, face_pair, colour_pair)
        if order is None:
            return None
        names.update(order)
    return names


def handedness(names: dict[int, int]) -> int:
    """+1 when the faces' colours are the standard scheme turned, -1 when they are its mirror image."""
    axes = [NORMAL[STANDARD_FACE[names[FACES.index(f)]]] for f in "RUF"]
    return int(round(np.linalg.det(np.array(axes, dtype=float).T)))


def is_mirror_scheme(lab: np.ndarray) -> bool:
    """True when the colours clearly form the mirror image of the standard scheme."""
    names = colour_names(lab)
    return names is not None and handedness(names) < 0


def _pairing(lab: np.ndarray) -> tuple[tuple[int, int], ...]:
    """The colour pair for each face pair: the pairing closest to the typical sticker colours."""
    cost = np.array(
        [
            [
                min(
                    np.sum((lab[list(faces)] - TYPICAL_LAB[[x, y]]) ** 2),
                    np.sum((lab[list(faces)] - TYPICAL_LAB[[y, x]]) ** 2),
                )
                for x, y in COLOUR_PAIRS
            ]
            for faces in FACE_PAIRS
        ]
    )
    best = min(permutations(range(3)), key=lambda order: sum(cost[f, c] for f, c in enumerate(order)))
    return tuple(COLOUR_PAIRS[c] for c in best)


def _order_within(lab: np.ndarray, face_pair: tuple[int, int], colour_pair: tuple[int, int]) -> dict[int, int] | None:
    """Which face of the pair shows which colour of the pair, or None when that is not clear."""
    a, b = face_pair
    lightness, a_star, b_star = lab[:, 0], lab[:, 1], lab[:, 2]
    hue = np.degrees(np.arctan2(b_star, a_star)) % 360.0
    if colour_pair == (WHITE, YELLOW):
        yellow, white = (a, b) if b_star[a] > b_star[b] else (b, a)
        clear = b_star[yellow] >= MIN_YELLOW_B and b_star[yellow] - b_star[white] >= MIN_WHITE_YELLOW_B
        return {white: WHITE, yellow: YELLOW} if clear else None
    if colour_pair == (RED, ORANGE):
        orange, red = (a, b) if hue[a] > hue[b] else (b, a)
        clear = hue[orange] - hue[red] >= MIN_RED_ORANGE_HUE and lightness[orange] - lightness[red] >= MIN_RED_ORANGE_L
        return {red: RED, orange: ORANGE} if clear else None
    blue, green = (a, b) if hue[a] > hue[b] else (b, a)
    clear = (
        GREEN_HUES[0] <= hue[green] < GREEN_HUES[1]
        and a_star[green] <= MAX_GREEN_A
        and BLUE_HUES[0] <= hue[blue] < BLUE_HUES[1]
        and b_star[blue] <= MAX_BLUE_B
    )
    return {green: GREEN, blue: BLUE} if clear else None
