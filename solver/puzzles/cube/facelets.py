"""Facelet strings: checking the letters and mapping colour symbols to faces.

Any six distinct letters may stand for the colours. A 3x3 string is mapped
through its centres; a 2x2 string through its DLB piece, whose three colours
name D, L and B, with U, R, F the colours opposite them (a colour never
shares a corner with its opposite). The result is the canonical string in
face letters U R F D L B.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

from ...errors import InvalidState
from .geometry import CORNER_SLOTS, FACES, OPPOSITE, centre_facelets, corner_facelets, sticker_name

SIZES = {54: 3, 24: 2}


def puzzle_size(state: str) -> int:
    """3 for a 54-letter string, 2 for a 24-letter one; anything else is an error."""
    if not isinstance(state, str):
        raise InvalidState(f"a cube state is a string of letters, got {type(state).__name__}")
    if len(state) not in SIZES:
        raise InvalidState(f"a cube state has 54 stickers (3x3x3) or 24 (2x2x2), got {len(state)} characters")
    return SIZES[len(state)]


def _where(state: str, letter: str, n: int) -> str:
    return ", ".join(sticker_name(i, n) for i, c in enumerate(state) if c == letter)


def check_letters(state: str) -> int:
    """Check length, alphabet and colour counts; return the puzzle size."""
    n = puzzle_size(state)
    if not (state.isascii() and state.isalpha()):
        i, c = next((i, c) for i, c in enumerate(state) if not (c.isascii() and c.isalpha()))
        raise InvalidState(f"sticker {sticker_name(i, n)} is {c!r}: colours must be letters")
    counts = Counter(state)
    if len(counts) != 6:
        raise InvalidState(
            f"a cube has 6 colours but this state uses {len(counts)}: "
            + ", ".join(f"{c!r} x{k}" for c, k in sorted(counts.items()))
        )
    per_colour = n * n
    for letter, count in sorted(counts.items()):
        if count != per_colour:
            raise InvalidState(
                f"colour {letter!r} is on {count} stickers, a {n}x{n}x{n} has {per_colour} of each colour "
                f"({letter!r} at {_where(state, letter, n)})"
            )
    return n


def _centre_map(state: str) -> dict[str, str]:
    centres = [state[i] for i in centre_facelets()]
    for a, b in combinations(range(6), 2):
        if centres[a] == centres[b]:
            raise InvalidState(
                f"centres {FACES[a]}5 and {FACES[b]}5 are both {centres[a]!r}: "
                "the six centres must be six different colours"
            )
    return {colour: face for colour, face in zip(centres, FACES)}


_CORNERS2 = corner_facelets(2)
_DLB_FACELETS = _CORNERS2[CORNER_SLOTS.index("DBL")]


def _opposite_colour(state: str, colour: str, corners: list[str]) -> str:
    """The one colour that never shares a corner with ``colour``."""
    seen: set[str] = set()
    for corner in corners:
        if colour in corner:
            seen.update(corner)
    never = sorted(c for c in set(state) if c not in seen)
    if len(never) != 1:
        raise InvalidState(
            f"colour {colour!r} shares a corner with "
            + ("every other colour" if not never else f"neither of {', '.join(map(repr, never))}")
            + ": on a real cube each colour shares corners with four others and never with its opposite"
        )
    return never[0]


def _dlb_map(state: str) -> dict[str, str]:
    corners = [state[a] + state[b] + state[c] for a, b, c in _CORNERS2]
    colours = "".join(state[i] for i in _DLB_FACELETS)
    where = f"the DLB corner ({' '.join(sticker_name(i, 2) for i in _DLB_FACELETS)}) has colours {' '.join(colours)}"
    if len(set(colours)) != 3:
        raise InvalidState(f"{where}: no corner has a colour twice")
    mapping = dict(zip(colours, "DBL"))
    for colour, face in zip(colours, "DBL"):
        opposite = _opposite_colour(state, colour, corners)
        if opposite in colours:
            raise InvalidState(f"{where}, but {colour!r} and {opposite!r} are opposite colours: no corner has both")
        if opposite in mapping:
            other = colours["DBL".index(OPPOSITE[mapping[opposite]])]
            raise InvalidState(
                f"{where}, and {opposite!r} never shares a corner with {colour!r} nor with "
                f"{other!r}: a colour has one opposite only"
            )
        mapping[opposite] = OPPOSITE[face]
    return mapping


def colour_to_face(state: str) -> dict[str, str]:
    """Validate the letters of ``state``; map each of its colour letters to the face it names."""
    n = check_letters(state)
    return _centre_map(state) if n == 3 else _dlb_map(state)


def to_face_letters(state: str) -> str:
    """Validate the letters of ``state`` and rewrite it in face letters U R F D L B."""
    mapping = colour_to_face(state)
    return "".join(mapping[c] for c in state)
