"""How the simulated grblHAL board reads a line: grbl's line filter, its words, and the checks on them.

``read_block`` turns a cleaned line into a ``Block`` of G and M codes,
value words and axis words, or raises ``LineError`` with the error number
grbl would answer: 1 (a word without its letter), 2 (a letter without a
number), 20 (a code or letter it does not take), 21 (two codes of one
modal group), 25 (a word twice) or 4 (a negative F, N, P, S or T). Only
the G codes the simulator models are taken (machine.py lists them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_WORD = re.compile(r"([A-Z])([+-]?(?:\d+\.?\d*|\.\d+))")
_GROUPS: dict[float, str] = {
    0: "motion",
    1: "motion",
    2: "motion",
    3: "motion",
    80: "motion",
    17: "plane",
    18: "plane",
    19: "plane",
    20: "units",
    21: "units",
    90: "distance",
    91: "distance",
    93: "feed mode",
    94: "feed mode",
    4: "non-modal",
    53: "non-modal",
    92: "non-modal",
    92.1: "non-modal",
    **{g: "coordinate system" for g in (54, 55, 56, 57, 58, 59)},
}
MODELLED_G = frozenset({0, 1, 4, 17, 18, 19, 20, 21, 53, 54, 55, 56, 57, 58, 59, 80, 90, 91, 92, 92.1, 93, 94})
_M_CODES = frozenset({0, 1, 2, 3, 4, 5, 7, 8, 9, 30})
_VALUE_LETTERS = frozenset("FIJKLNPRST")


class LineError(Exception):
    """A line grbl refuses, with the number of its ``error:N`` reply."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


@dataclass(frozen=True)
class Block:
    g: tuple[float, ...]
    values: dict[str, float]  # F I J K L N P R S T
    axes: dict[str, float]  # axis letter -> value, as written


def clean(raw: str) -> str:
    """grbl's line filter: comments out, blanks and control characters out, upper case."""
    out, comment = [], False
    for char in raw:
        if comment:
            comment = char != ")"
        elif char == "(":
            comment = True
        elif char == ";":
            break
        elif char > " " and char != "/":
            out.append(char.upper())
    return "".join(out)


def group(g: float) -> str:
    return _GROUPS.get(g, f"G{g}")


def read_block(line: str, letters: str) -> Block:
    """A cleaned G-code line as a Block for a board with axes ``letters``."""
    g, values, axes = [], {}, {}
    for letter, value in _words(line):
        if letter == "G":
            if value not in MODELLED_G:
                raise LineError(20)
            g.append(value)
        elif letter == "M":
            if value not in _M_CODES:
                raise LineError(20)
        elif letter in values or letter in axes:
            raise LineError(25)
        elif letter in letters:
            axes[letter] = value
        elif letter in _VALUE_LETTERS:
            if letter in "FNPST" and value < 0:
                raise LineError(4)
            values[letter] = value
        else:
            raise LineError(20)
    groups = [group(code) for code in g]
    if len(set(groups)) != len(groups):
        raise LineError(21)
    return Block(tuple(g), values, axes)


def _words(line: str) -> list[tuple[str, float]]:
    words, i = [], 0
    while i < len(line):
        if not "A" <= line[i] <= "Z":
            raise LineError(1)
        match = _WORD.match(line, i)
        if match is None:
            raise LineError(2)
        letter, value = match.group(1), float(match.group(2))
        if letter in "GM":
            if round(value, 1) != value or (letter == "M" and not value.is_integer()):
                raise LineError(20)
            value = int(value) if value.is_integer() else value
        words.append((letter, value))
        i = match.end()
    return words
