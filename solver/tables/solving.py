"""Optimal solutions, random-state scrambles and moves for the puzzles in ``solver.puzzles``."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidState
from ..puzzles import get_puzzle
from .exact import load_table


@dataclass
class PuzzleSolution:
    """An optimal solution: moves the table does not track (Pyraminx tips) first, then the table's walk."""

    puzzle: str
    text: str
    untracked: int  # moves outside the table (tip turns)
    tracked: int  # moves from the table: the optimal length of the rest
    seconds: float
    untracked_name: str = ""

    @property
    def length(self) -> int:
        return self.untracked + self.tracked

    def as_dict(self) -> dict:
        out = {"puzzle": self.puzzle, "moves": self.text, "length": self.length, "seconds": self.seconds, "found": True}
        if self.untracked_name:
            out.update({self.untracked_name: self.untracked, f"without_{self.untracked_name}": self.tracked})
        return out


def solve(name: str, state: str) -> PuzzleSolution:
    """Solve a state (any colour letters) optimally; raises InvalidState for a malformed or impossible one."""
    puzzle = get_puzzle(name)
    table = load_table(puzzle)
    start = time.perf_counter()
    faces = puzzle.parse(state)
    first = puzzle.untracked_moves(faces)
    rest = table.walk(puzzle.rank(faces))
    return PuzzleSolution(
        name,
        puzzle.format_moves(first + rest),
        len(first),
        len(rest),
        time.perf_counter() - start,
        puzzle.untracked_name,
    )


def apply(name: str, state: str, moves: str) -> str:
    """Apply a move sequence to a valid state; the result keeps the input's letters."""
    puzzle = get_puzzle(name)
    return puzzle.apply(state, puzzle.parse_moves(moves))


def scramble(name: str, seed: int | None = None, length: int | None = None) -> dict:
    """A seeded scramble: ``{"scramble": moves, "state": facelets}``.

    Without ``length``: a uniformly random state and the sequence that makes
    it (its optimal solution reversed, so Pyraminx tip turns come last, as in
    WCA scrambles). With ``length``: that many random table moves (no tips),
    never two in a row about the same corner or vertex.
    """
    if length is not None and length < 0:
        raise InvalidState(f"scramble length must be 0 or more, got {length}")
    puzzle = get_puzzle(name)
    rng = np.random.default_rng(seed)
    if length is None:
        state = puzzle.random_state(rng)
        moves = puzzle.inverse(puzzle.untracked_moves(state) + load_table(puzzle).walk(puzzle.rank(state)))
    else:
        moves = _random_moves(puzzle.move_names[: puzzle.tracked_moves], length, rng)
    return {"scramble": puzzle.format_moves(moves), "state": puzzle.apply(puzzle.solved, moves)}


def _random_moves(names: tuple[str, ...], length: int, rng: np.random.Generator) -> list[int]:
    """Random move ids; a move's letter names its axis, and no axis is turned twice in a row."""
    moves: list[int] = []
    while len(moves) < length:
        move = int(rng.integers(len(names)))
        if not moves or names[move][0] != names[moves[-1]][0]:
            moves.append(move)
    return moves
