"""Singmaster move notation: parsing, printing, inverse, simplification, metrics.

A move is an index 0..17: ``3 * face + (quarter_turns - 1)`` with faces in
the order U R F D L B and 1, 2, 3 clockwise quarter turns (3 is the prime
move). ``MOVE_NAMES[i]`` is its canonical spelling.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from ...errors import InvalidState
from .geometry import FACES, OPPOSITE, face_turn_permutation

SUFFIXES = ("", "2", "'")
MOVE_NAMES = tuple(face + suffix for face in FACES for suffix in SUFFIXES)
MOVE_INDEX = {name: i for i, name in enumerate(MOVE_NAMES)}
QUARTER_TURNS = tuple(m for m in range(18) if m % 3 != 1)  # U U' R R' ... (QTM moves)
METRICS = ("htm", "qtm")

_TOKEN = re.compile(r"\s*([URFDLB])(2'|2|'|’|)\s*")


def parse_moves(text: str) -> list[int]:
    """Parse a move sequence such as ``"R U2 F'"`` (spaces optional) into move indices."""
    moves: list[int] = []
    position = 0
    text = text.strip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            bad = text[position:].split()[0] if text[position:].split() else text[position:]
            raise InvalidState(
                f"move {len(moves) + 1} ({bad!r} at character {position + 1}) is not a face turn: "
                "use U D L R F B, each optionally followed by ' (counter-clockwise) or 2 (half turn)"
            )
        face, suffix = match.groups()
        turns = {"": 1, "2": 2, "2'": 2, "'": 3, "’": 3}[suffix]
        moves.append(3 * FACES.index(face) + turns - 1)
        position = match.end()
    return moves


def format_moves(moves: Iterable[int]) -> str:
    """Canonical spelling of a move sequence, separated by single spaces."""
    return " ".join(MOVE_NAMES[m] for m in moves)


def move_face(move: int) -> int:
    return move // 3


def move_turns(move: int) -> int:
    """Clockwise quarter turns of a move: 1, 2 or 3."""
    return move % 3 + 1


def move_permutation(move: int, n: int) -> np.ndarray:
    """Sticker permutation of a move on an n-cube: after it, sticker i shows what ``source[i]`` showed."""
    source = face_turn_permutation(FACES[move_face(move)], n)
    perm = source
    for _ in range(move_turns(move) - 1):
        perm = perm[source]
    return perm


def inverse_moves(moves: Sequence[int]) -> list[int]:
    """The sequence that undoes ``moves``."""
    return [3 * move_face(m) + (4 - move_turns(m)) - 1 for m in reversed(moves)]


def _opposite(face: int) -> int:
    return FACES.index(OPPOSITE[FACES[face]])


def simplify_moves(moves: Iterable[int]) -> list[int]:
    """Cancel and merge turns of the same face, also across a turn of the opposite face.

    ``U D U'`` becomes ``D`` and ``R R`` becomes ``R2``; the result is equivalent
    and never longer in either metric.
    """
    out: list[list[int]] = []  # [face, quarter turns mod 4]
    for move in moves:
        face, turns = move_face(move), move_turns(move)
        target = None
        if out and out[-1][0] == face:
            target = len(out) - 1
        elif len(out) >= 2 and out[-1][0] == _opposite(face) and out[-2][0] == face:
            target = len(out) - 2
        if target is None:
            out.append([face, turns])
            continue
        out[target][1] = (out[target][1] + turns) % 4
        if out[target][1] == 0:
            del out[target]
    return [3 * face + turns - 1 for face, turns in out]


def move_length(moves: Sequence[int], metric: str = "htm") -> int:
    """Length of a sequence in the half-turn (HTM) or quarter-turn (QTM) metric."""
    check_metric(metric)
    if metric == "htm":
        return len(moves)
    return sum(2 if move_turns(m) == 2 else 1 for m in moves)


def check_metric(metric: str) -> str:
    if metric not in METRICS:
        raise InvalidState(f"unknown metric {metric!r}: use 'htm' (half turns) or 'qtm' (quarter turns)")
    return metric
