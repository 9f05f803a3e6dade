"""Puzzle models behind one small interface: state strings, moves, validation, table indices.

A puzzle module defines one ``PuzzleModel`` subclass and nothing else needs
to know about it: the exact distance tables (``solver.tables``), the CLI and
the benchmarks only use the methods below. States cross the interface as
facelet strings in face letters (the canonical form ``parse`` returns);
moves as ids into ``move_names``.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from importlib import import_module
from math import prod

import numpy as np

from ..errors import InvalidState

PUZZLES = ("skewb", "pyraminx")


class PuzzleModel(ABC):
    """One puzzle: what its states look like, how its moves act, how states are numbered.

    Subclasses set the class attributes and implement the abstract methods.
    A state's table index is a mixed-radix number over ``factor_sizes``
    (the first factor most significant); ``factor_moves`` says how every
    tracked move changes each factor on its own, which is all a table
    builder needs.
    """

    name: str  # "Skewb", as messages spell it
    move_names: tuple[str, ...]  # move id -> its spelling
    tracked_moves: int  # ids below this change the table index; the rest (tips) do not
    untracked_name: str = ""  # what the untracked moves turn ("tips"), for reports
    sticker_moves: tuple[tuple[int, ...], ...]  # per move id: new state = old[source]
    solved: str  # the solved state in face letters
    factor_sizes: tuple[int, ...]

    @abstractmethod
    def parse(self, state: str) -> str:
        """Validate a state in any colour letters; return it in face letters (raises InvalidState)."""

    @abstractmethod
    def rank(self, state: str) -> int:
        """Table index of a state in face letters (as ``parse`` returns it)."""

    @abstractmethod
    def unrank(self, index: int) -> str:
        """The state, in face letters, whose table index is ``index``."""

    @abstractmethod
    def factor_moves(self) -> tuple[np.ndarray, ...]:
        """Per factor, an int array (size, tracked_moves): the factor's value after each move."""

    def untracked_moves(self, state: str) -> list[int]:
        """Moves that solve what the table does not track (none unless overridden)."""
        return []

    def random_state(self, rng: np.random.Generator) -> str:
        """A state drawn uniformly from all reachable states, in face letters."""
        return self.unrank(int(rng.integers(self.states)))

    @property
    def states(self) -> int:
        return prod(self.factor_sizes)

    @property
    def table_name(self) -> str:
        """The name its exact table is cached under (one per model: the 2x2x2 has one per metric)."""
        return self.name.lower()

    def apply(self, state: str, moves: Sequence[int]) -> str:
        """Apply move ids to a valid state; the result keeps the input's letters."""
        self.parse(state)  # a move sequence on an impossible state means nothing: refuse it
        for move in moves:
            state = "".join([state[i] for i in self.sticker_moves[move]])
        return state

    def parse_moves(self, text: str) -> list[int]:
        """Move ids of a sequence such as ``"R U' B"`` (spaces optional; ’ reads as ')."""
        tokens = _token_pattern(self.move_names)
        moves: list[int] = []
        position, text = 0, text.strip()
        while position < len(text):
            match = tokens.match(text, position)
            if match is None:
                bad = text[position:].split()[0]
                clockwise = " ".join(n for n in self.move_names if not n.endswith("'"))
                raise InvalidState(
                    f"move {len(moves) + 1} ({bad!r} at character {position + 1}) is not a {self.name} move: "
                    f"use {clockwise}, each optionally followed by ' (counter-clockwise)"
                )
            moves.append(self.move_names.index(match.group(1) + match.group(2).replace("’", "'")))
            position = match.end()
        return moves

    def format_moves(self, moves: Sequence[int]) -> str:
        return " ".join(self.move_names[m] for m in moves)

    def inverse(self, moves: Sequence[int]) -> list[int]:
        """The sequence that undoes ``moves`` (X and X' undo each other, X2 undoes itself)."""
        index = {name: i for i, name in enumerate(self.move_names)}
        return [index[_invert_name(self.move_names[m])] for m in reversed(moves)]


def _invert_name(name: str) -> str:
    if name.endswith("2"):
        return name
    return name[:-1] if name.endswith("'") else name + "'"


def _token_pattern(names: tuple[str, ...]) -> re.Pattern:
    letters = "".join(sorted({n[0] for n in names}))
    return re.compile(rf"\s*([{letters}])('|’|)(?![0-9'’])\s*")


def get_puzzle(name: str) -> PuzzleModel:
    """The model of a puzzle named in ``PUZZLES``."""
    if name not in PUZZLES:
        raise InvalidState(f"unknown puzzle {name!r}: use {' or '.join(map(repr, PUZZLES))}")
    return import_module(f".{name}", __name__).MODEL
