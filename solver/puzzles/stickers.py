"""Checks every facelet string goes through, and reading pieces off their stickers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from ..errors import InvalidState


def check_letters(state: str, puzzle: str, faces: str, per_face: int, name: Callable[[int], str]) -> None:
    """Length, alphabet and colour counts of a state; ``name(i)`` names sticker i for messages."""
    if not isinstance(state, str):
        raise InvalidState(f"a {puzzle} state is a string of letters, got {type(state).__name__}")
    length = len(faces) * per_face
    if len(state) != length:
        raise InvalidState(
            f"a {puzzle} state has {length} stickers ({len(faces)} faces of {per_face}), got {len(state)} characters"
        )
    if not (state.isascii() and state.isalpha()):
        i, c = next((i, c) for i, c in enumerate(state) if not (c.isascii() and c.isalpha()))
        raise InvalidState(f"sticker {name(i)} is {c!r}: colours must be letters")
    counts = Counter(state)
    if len(counts) != len(faces):
        raise InvalidState(
            f"a {puzzle} has {len(faces)} colours but this state uses {len(counts)}: "
            + ", ".join(f"{c!r} x{k}" for c, k in sorted(counts.items()))
        )
    for letter, count in sorted(counts.items()):
        if count != per_face:
            where = ", ".join(name(i) for i, c in enumerate(state) if c == letter)
            raise InvalidState(
                f"colour {letter!r} is on {count} stickers, a {puzzle} has {per_face} of each "
                f"colour ({letter!r} at {where})"
            )


def twisted(home: str, twist: int) -> str:
    """Colours a three-sticker piece shows, read in its slot's order, when turned ``twist`` steps clockwise.

    Slots are read clockwise, so a piece turned clockwise in place by one
    step shows its first colour at the second position.
    """
    return home[-twist:] + home[:-twist] if twist else home


def twists(home: str) -> dict[str, int]:
    """What ``twisted`` shows -> the twist, for one piece."""
    return {twisted(home, t): t for t in range(3)}


def describe(indices: Sequence[int], name: Callable[[int], str]) -> str:
    return " ".join(name(i) for i in indices)


class ColourScheme:
    """Colour letters -> face letters, trying the last scheme that worked before working one out.

    ``derive(state)`` works the scheme out from the stickers (or raises
    InvalidState); ``accepts(faces)`` tells whether a translated state has
    pieces that pin the scheme down (so a remembered scheme it accepts is
    the one ``derive`` would give); ``explain(faces)`` raises InvalidState
    saying why a state is not accepted. ``frame(state)`` names the stickers
    a scheme must agree on to be tried at all.
    """

    def __init__(
        self,
        frame: Callable[[str], str],
        derive: Callable[[str], dict[str, str]],
        accepts: Callable[[str], bool],
        explain: Callable[[str], object],
    ) -> None:
        self.frame, self.derive, self.accepts, self.explain = frame, derive, accepts, explain
        self._last: tuple[str, dict] = ("", {})

    def face_letters(self, state: str) -> str:
        frame = self.frame(state)
        if self._last[0] == frame:
            faces = state.translate(self._last[1])
            if self.accepts(faces):
                return faces
        table = str.maketrans(self.derive(state))
        faces = state.translate(table)
        if not self.accepts(faces):
            self.explain(faces)
            raise AssertionError(f"{faces} is refused but passes every check")
        self._last = frame, table
        return faces
