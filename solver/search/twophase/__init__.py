"""Kociemba's two-phase algorithm: near-optimal 3x3x3 solutions in well under a second.

Phase 1 searches (IDA*, 18 moves) for move sequences that bring the cube
into G1 = <U, D, R2, L2, F2, B2>; from the end of each one, phase 2
searches (IDA*, the 10 G1 moves) for the rest of the solution (see
``ida``; tables in ``tables``). Phase-1 sequences come
in order of length, for the six views of the cube in turn (see
``views``), and each is tried, so the best total keeps shrinking
while time remains. The search stops when it has a solution of at most
``max_length`` moves, when the time budget is spent, or when no longer
phase 1 can beat the best solution, and returns the best found.

Only canonical sequences are searched: no two turns of one face in a row,
of two opposite faces only the order U before D, R before L, F before B,
and phase 1 ends with a quarter turn of R, L, F or B (anything else would
already have been in G1 one move earlier). The move order is fixed, so a
state always gets the same solution when the search is not cut short by
the clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ...errors import InvalidState
from ...puzzles.cube.cubie import CubieCube, from_face_letters, to_facelets
from .ida import Goal, Stop, ViewSearch, native_tables, search_tables
from .views import views

DEFAULT_BUDGET_S = 1.0
DEFAULT_MAX_LENGTH = 22


def prepare() -> None:
    """Load (or build and cache) every table the solver needs, and compile its search loops
    where the machine can (``native``); solving does it on first use.

    Table loading is not counted in a solve's time budget, so a daemon calls
    this at start-up to keep its first solve as fast as the others.
    """
    if native_tables() is None:
        search_tables()


def _checked(cube: CubieCube, budget_s: float, max_length: int) -> CubieCube:
    if cube.size != 3:
        raise InvalidState(f"the two-phase solver solves 3x3x3 cubes, got a {cube.size}x{cube.size}x{cube.size}")
    if not budget_s > 0:
        raise InvalidState(f"the time budget must be positive, got {budget_s} s")
    if max_length < 0:
        raise InvalidState(f"max_length must be 0 or more, got {max_length}")
    return from_face_letters(to_facelets(cube))  # every piece, twist, flip and parity check


def solve_two_phase(
    cube: CubieCube,
    budget_s: float = DEFAULT_BUDGET_S,
    max_length: int = DEFAULT_MAX_LENGTH,
    cost: Callable[[list[int]], float] | None = None,
    slack: int = 0,
    native: bool = True,
) -> list[int] | None:
    """Move ids (HTM, see ``solver.puzzles.cube.notation``) that solve a 3x3x3 cubie state.

    Searches until it has a solution of at most ``max_length`` moves or
    ``budget_s`` seconds have passed, and returns the shortest solution
    found (longer than ``max_length`` when the budget ran out first), or
    None when it found none at all in time. ``max_length=0`` spends the
    whole budget looking for shorter solutions.

    With ``cost`` (moves -> a cost such as a rig's motor time), the solution
    of least cost found is returned instead of the shortest, and solutions
    up to ``slack`` moves longer than the shortest found so far are tried
    too. ``native=False`` runs the search loops in Python even where the
    compiled ones (``native``) are there: the same solutions, found
    slower. The first call also loads (or builds)
    the tables (see ``prepare``) before its budget starts. Raises ``InvalidState`` for an impossible
    state or a bad argument.
    """
    cube = _checked(cube, budget_s, max_length)
    if cube.is_solved():
        return []
    if native:
        prepare()
    else:
        search_tables()
    goal = Goal(time.perf_counter() + budget_s, max_length, cost, slack)  # the tables' first load not counted
    searches = [ViewSearch(view, goal, native) for view in views(cube)]
    depth = min(search.start_depth for search in searches)
    try:
        while depth <= goal.bound:  # a longer phase 1 cannot beat the best
            for search in searches:
                if search.start_depth <= depth:
                    search.phase1_at(depth)
            depth += 1
    except Stop:
        pass
    return goal.best
