"""The solver's Python entry points: solve, apply moves, scramble."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .errors import InvalidState
from .puzzles.cube.batch import Puzzle, to_cubie
from .puzzles.cube.cubie import from_facelets, solved_facelets, to_facelets
from .puzzles.cube.facelets import check_letters
from .puzzles.cube.notation import (
    check_metric,
    format_moves,
    inverse_moves,
    move_length,
    move_permutation,
    parse_moves,
    simplify_moves,
)
from .puzzles.cube.scramble import random_scrambles
from .puzzles.pocket import STATES, coordinate
from .puzzles.pocket import model as pocket_model
from .search.astar import DEFAULT_BATCH, DEFAULT_BUDGET_S, DEFAULT_WEIGHT, search
from .search.heuristic import DEFAULT_HEURISTIC, check_heuristic, load_heuristic
from .search.perimeter import DEFAULT_DEPTH as DEFAULT_PERIMETER
from .search.perimeter import MAX_DEPTH as MAX_PERIMETER
from .search.perimeter import load_perimeter
from .search.twophase import DEFAULT_BUDGET_S as DEFAULT_FALLBACK_BUDGET_S
from .search.twophase import solve_two_phase
from .tables.exact import load_table

DEFAULT_SCRAMBLE_LENGTH = 25  # 3x3 scrambles without a uniformly random state solver
FALLBACKS = ("two-phase",)
DEFAULT_FALLBACK = "two-phase"  # the daemon's, the CLI's and solve()'s: a 3x3x3 always gets an answer


@dataclass
class Solution:
    """A solution: move ids (see ``solver.puzzles.cube.notation``), its metric and how long solving took."""

    moves: list[int]
    metric: str
    seconds: float
    puzzle: int
    found: bool = True
    details: dict = field(default_factory=dict)

    @property
    def text(self) -> str:
        return format_moves(self.moves)

    @property
    def length(self) -> int:
        return move_length(self.moves, self.metric)

    def as_dict(self) -> dict:
        return {
            "moves": self.text,
            "length": self.length,
            "metric": self.metric,
            "seconds": self.seconds,
            "puzzle": self.puzzle,
            "found": self.found,
            "htm": move_length(self.moves, "htm"),
            "qtm": move_length(self.moves, "qtm"),
            **self.details,
        }


def solve(
    state: str,
    metric: str = "htm",
    *,
    budget_s: float = DEFAULT_BUDGET_S,
    weight: float = DEFAULT_WEIGHT,
    batch: int = DEFAULT_BATCH,
    max_nodes: int = 10_000_000,
    perimeter: int = DEFAULT_PERIMETER,
    fallback: str | None = DEFAULT_FALLBACK,
    fallback_budget_s: float = DEFAULT_FALLBACK_BUDGET_S,
    heuristic: str = DEFAULT_HEURISTIC,
    stop=None,
) -> Solution:
    """Solve a facelet string (any six colour letters; size from its length).

    2x2x2: optimal in the chosen metric, from the BFS table (the search
    arguments do not apply). 3x3x3: batched weighted A* over quarter turns with
    the shipped cost-to-go network, within ``budget_s`` seconds and
    ``max_nodes`` generated nodes; ``found`` is False when a budget ran out.
    States within ``perimeter`` quarter turns of solved (0 to 7, 0: none) are
    finished from an exact distance table (see ``solver.search.perimeter``).
    With ``fallback="two-phase"`` (the default; None for A* alone), a 3x3x3
    that A* did not solve in its budget is solved by Kociemba's two-phase
    algorithm within ``fallback_budget_s`` seconds, and
    ``details["solver"]`` says which solver answered. ``heuristic`` picks
    the A*'s estimate: ``"network"`` (default) or ``"wcd"`` (the weighted
    convolutional distance over it, ``solver.search.wcd``). ``stop`` (a
    ``threading.Event``) ends the A* search early once set.
    Raises ``InvalidState`` for a malformed or impossible state.
    """
    check_metric(metric)
    _check_perimeter(perimeter)
    _check_fallback(fallback, fallback_budget_s)
    check_heuristic(heuristic)
    start = time.perf_counter()
    cube = from_facelets(state)
    if cube.size == 2:
        moves = simplify_moves(_pocket_moves(coordinate(cube), metric))
        return Solution(moves, metric, time.perf_counter() - start, 2)
    result = search(
        cube,
        load_heuristic(heuristic),
        weight=weight,
        batch=batch,
        budget_s=budget_s,
        max_nodes=max_nodes,
        perimeter=load_perimeter(perimeter) if perimeter else None,
        stop=stop,
    )
    details: dict[str, object] = {
        "nodes_generated": result.nodes_generated,
        "iterations": result.iterations,
        "budget_exhausted": result.budget_exhausted,
        "weight": weight,
        "batch": batch,
        "perimeter": perimeter,
        "heuristic": heuristic,
    }
    moves, found = result.moves, result.found
    if fallback is not None:
        details["solver"] = "neural-astar"
        if not found:
            two_phase = solve_two_phase(cube, fallback_budget_s)  # None only if it found nothing in its budget
            moves, found, details["solver"] = two_phase or [], two_phase is not None, "two-phase"
    return Solution(simplify_moves(moves), metric, time.perf_counter() - start, 3, found, details)


def _pocket_moves(index: int, metric: str) -> list[int]:
    """Optimal notation moves from a 2x2x2 state index to solved: a walk down the metric's exact table."""
    model = pocket_model(metric)
    return [model.moves[m] for m in load_table(model).walk(index)]


def _check_perimeter(depth: int) -> None:
    if not (isinstance(depth, int) and 0 <= depth <= MAX_PERIMETER):
        raise InvalidState(f"perimeter depth must be a whole number from 0 to {MAX_PERIMETER}, got {depth!r}")


def _check_fallback(fallback: str | None, budget_s: float) -> None:
    if fallback is None:
        return
    if fallback not in FALLBACKS:
        raise InvalidState(f"unknown fallback solver {fallback!r}: use {' or '.join(map(repr, FALLBACKS))} or None")
    if not budget_s > 0:
        raise InvalidState(f"the fallback time budget must be positive, got {budget_s} s")


def apply(state: str, moves: str) -> str:
    """Turn the faces of a facelet string; the result keeps the input's colour letters."""
    n = check_letters(state)
    from_facelets(state)  # a move sequence on an impossible cube means nothing: refuse it
    stickers = np.frombuffer(state.encode(), dtype=np.uint8)
    for move in parse_moves(moves):
        stickers = stickers[move_permutation(move, n)]
    return stickers.tobytes().decode()


def scramble(size: int, seed: int | None = None, length: int | None = None) -> dict:
    """A seeded random scramble: ``{"scramble": moves, "state": facelets}``.

    With ``length``: that many random moves (no two on one face in a row;
    U R F only on a 2x2, whose DLB corner stays put). Without: on a 2x2 a
    uniformly random state and the optimal sequence that makes it; on a 3x3
    25 random moves.
    """
    if size not in (2, 3):
        raise InvalidState(f"puzzle must be 2 or 3, got {size}")
    if length is not None and length < 0:
        raise InvalidState(f"scramble length must be 0 or more, got {length}")
    rng = np.random.default_rng(seed)
    puzzle = Puzzle.of_size(size)
    if size == 2 and length is None:
        moves = inverse_moves(simplify_moves(_pocket_moves(int(rng.integers(STATES)), "htm")))
        text = format_moves(moves)
        return {"scramble": text, "state": apply(solved_facelets(2), text)}
    lengths = np.array([DEFAULT_SCRAMBLE_LENGTH if length is None else length])
    states, axis_moves = random_scrambles(puzzle, lengths, rng)
    moves = [puzzle.moves[k] for k in axis_moves[0] if k >= 0]
    return {"scramble": format_moves(moves), "state": to_facelets(to_cubie(states[0]))}
