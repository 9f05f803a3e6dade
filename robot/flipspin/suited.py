"""A solution that suits the rig: several equivalent solutions, each planned, the quickest kept.

The solver answers one solution, but the same state seen in another of
the 24 orientations (its stickers carried by a whole-cube rotation) gets
another: the two-phase search meets its phase-1 sequences in another
order, the 2x2x2 table fixes another corner. Renaming the faces back
gives a solution of the state as scanned. Each distinct one is planned
from the rig's pose and the one with the least robot time wins (then the
fewest solver moves, then the first found). With ``first`` (the solution
a run already has) the answer is never slower on the rig than that one.

On a 3x3x3 a solver move costs the rig about 2.2 s, while equally long
solutions differ by a few per cent: so the first search goes deeper
(``max_length``) and the other views look for alternatives as short as
the best found.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Protocol

import numpy as np

from solver import solve
from solver.puzzles.cube.cubie import from_facelets
from solver.puzzles.cube.geometry import FACES, cube_rotation_permutation
from solver.search.twophase import solve_two_phase

from ..errors import RobotError
from .pose import FLIP_TABLE, ORIENTATIONS, SPIN_TABLE
from .steps import RigStep

DEFAULT_CANDIDATES = 4

DEFAULT_BUDGET_S = 1.0
DEFAULT_MAX_LENGTH = 19  # the first two-phase search stops at a solution this short, or when its time is up
FIRST_SHARE = 0.6  # of the budget, for the first view's search


class PlanningRig(Protocol):
    """What choosing needs of the rig (``FlipSpinRig``): the plan of some moves from its pose."""

    def preview(self, moves: Sequence[int]) -> tuple[list[RigStep], object]: ...


@dataclass(frozen=True)
class RigSolution:
    """The chosen solution, its plan's robot time from the rig's pose, and what choosing it cost."""

    moves: tuple[int, ...]
    seconds: float  # robot time of its plan
    robot_moves: int
    orientation: str  # the view that found it (cube face at world U R F D L B); "" for ``first``
    candidates: int  # distinct solutions planned
    solve_s: float  # wall time spent solving and planning the candidates


@cache
def rotations(size: int) -> tuple[tuple[str, np.ndarray], ...]:
    """Per orientation (``ORIENTATIONS`` order): the sticker permutation P with world stickers = cube[P]."""
    found = {0: np.arange(6 * size * size)}
    queue = [0]
    for orientation in queue:  # grows while walked: flips and quarter spins reach all 24
        perm = found[orientation]
        for after, axis in ((FLIP_TABLE[orientation], "R"), (SPIN_TABLE[orientation, 1], "D")):
            if int(after) not in found:
                found[int(after)] = perm[cube_rotation_permutation(axis, size)]
                queue.append(int(after))
    return tuple((ORIENTATIONS[k], found[k]) for k in range(len(ORIENTATIONS)))


def seen_as(state: str, faces: str) -> str:
    """``state`` as the cube shows it turned to orientation ``faces`` (its own letters, moved)."""
    perm = dict(rotations(_size(state)))[faces]
    return "".join(np.array(list(state))[perm])


def _size(state: str) -> int:
    return 3 if len(state) == 54 else 2


def renamed(moves: Sequence[int], faces: str) -> list[int]:
    """Moves written for the cube in orientation ``faces``, as moves of the cube's own faces."""
    return [3 * FACES.index(faces[move // 3]) + move % 3 for move in moves]


def _solve_view(state: str, faces: str, budget_s: float, metric: str, max_length: int) -> list[int] | None:
    view = seen_as(state, faces)
    moves: list[int] | None
    if len(state) == 24:
        moves = solve(view, metric).moves
    else:
        moves = solve_two_phase(from_facelets(view), budget_s, max_length)
    return None if moves is None else renamed(moves, faces)


def view_solutions(
    state: str, candidates: int, deadline: float, metric: str = "htm", max_length: int = DEFAULT_MAX_LENGTH
) -> Iterator[tuple[str, list[int]]]:
    """Solutions of ``state`` from its first ``candidates`` orientations, as found, until ``deadline``.

    3x3x3: the two-phase solver (HTM). The first view (the cube as it is)
    gets ``FIRST_SHARE`` of the time to find a solution of at most
    ``max_length`` moves; each later view gets an even share of what is
    left and stops at one as short as the shortest so far, so it offers an
    alternative of that length (or whatever it found when its time was up,
    or nothing). 2x2x2: the optimal table in ``metric``, every view.
    """
    views = [faces for faces, _ in rotations(_size(state))][:candidates]
    aim = max_length
    for k, faces in enumerate(views):
        left = deadline - time.perf_counter()
        if left <= 0:
            return
        share = left * FIRST_SHARE if k == 0 and len(views) > 1 else left / (len(views) - k)
        moves = _solve_view(state, faces, share, metric, aim)
        if moves is not None:
            aim = min(aim, len(moves))
            yield faces, moves


@dataclass
class _Choice:
    """The quickest solution on the rig so far: least robot time, then fewest moves, then the first."""

    rig: PlanningRig
    seen: set = field(default_factory=set)
    best: tuple | None = None

    def offer(self, faces: str, moves: Sequence[int]) -> None:
        if tuple(moves) in self.seen:
            return
        self.seen.add(tuple(moves))
        steps, _ = self.rig.preview(moves)
        seconds = sum(step.seconds for step in steps)
        key = (round(seconds, 6), len(moves))
        if self.best is None or key < self.best[0]:
            self.best = (key, faces, tuple(moves), sum(step.robot_moves for step in steps))


def rig_solution(
    state: str,
    rig: PlanningRig,
    candidates: int = DEFAULT_CANDIDATES,
    budget_s: float = DEFAULT_BUDGET_S,
    first: Sequence[int] | None = None,
    metric: str = "htm",
    max_length: int = DEFAULT_MAX_LENGTH,
) -> RigSolution:
    """The solution of ``state`` (as scanned) whose plan from ``rig``'s pose is quickest; the pose stays.

    Solves ``state`` seen in up to ``candidates`` orientations within about
    ``budget_s`` seconds (solving and planning) and weighs those solutions
    and ``first`` (e.g. the one a run already has) by ``rig.preview``.
    Raises ``solver.InvalidState`` for an impossible state and
    ``RobotError`` when there is no solution to choose from.
    """
    began = time.perf_counter()
    from_facelets(state)  # an impossible state is refused before any search
    choice = _Choice(rig)
    if first is not None:
        choice.offer("", first)
    for faces, moves in view_solutions(state, candidates, began + budget_s, metric, max_length):
        choice.offer(faces, moves)
    if choice.best is None:
        raise RobotError(f"no solution found within the {budget_s:g} s budget")
    (seconds, _), faces, moves, robot_moves = choice.best
    return RigSolution(moves, seconds, robot_moves, faces, len(choice.seen), time.perf_counter() - began)
