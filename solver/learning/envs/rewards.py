"""Reward schemes, shared by the single and the vectorised environments.

``"research"``: +100 on the move that solves the puzzle, -1 for every other
move (the scheme of the research the environments follow). ``"plain"``: 1 on
the solving move, 0 otherwise. With sub-goals, reaching the next stage of
the puzzle's human method (``StickerPuzzle.subgoals``: nested sticker masks,
one definition for the environments and ``solver.research.parallel_q``) adds ``SUBGOAL_BONUS`` per stage gained, and a
move that undoes stages costs the same per stage lost, so going back and
forth earns nothing.
"""

from __future__ import annotations

import numpy as np

from .puzzles import StickerPuzzle

SCHEMES = ("research", "plain")
SOLVED_REWARD = {"research": 100.0, "plain": 1.0}
MOVE_REWARD = {"research": -1.0, "plain": 0.0}
SUBGOAL_BONUS = 10.0


def check_scheme(scheme: str, subgoals: bool, puzzle: StickerPuzzle) -> None:
    if scheme not in SCHEMES:
        raise ValueError(f"unknown reward scheme {scheme!r}: use {' or '.join(map(repr, SCHEMES))}")
    if subgoals and not puzzle.subgoals:
        raise ValueError(f"no sub-goals are defined for the {puzzle.name}")


def stage(puzzle: StickerPuzzle, states: np.ndarray) -> np.ndarray:
    """(N,) how many leading sub-goals of the method each state meets (0 when none are defined)."""
    if not puzzle.subgoals:
        return np.zeros(len(states), dtype=np.int64)
    right = states == puzzle.solved
    met = np.stack([right[:, mask].all(axis=1) for mask in puzzle.subgoals], axis=1)
    return np.cumprod(met, axis=1).sum(axis=1)


def rewards(scheme: str, solved: np.ndarray, stage_gain: np.ndarray | None = None) -> np.ndarray:
    """(N,) float32 rewards of one move per puzzle; ``stage_gain`` is new stage minus old (sub-goals on)."""
    out = np.where(solved, SOLVED_REWARD[scheme], MOVE_REWARD[scheme])
    if stage_gain is not None:
        out = out + SUBGOAL_BONUS * stage_gain
    return out.astype(np.float32)
