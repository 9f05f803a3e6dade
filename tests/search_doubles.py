"""Heuristics for search tests: cheap, deterministic, and countable."""

import numpy as np

from solver.puzzles.cube.batch import Puzzle, apply_all_moves, from_cubie, state_keys
from solver.puzzles.cube.cubie import CubieCube

PUZZLE = Puzzle.cube3()


def misplaced(states):
    """A cheap, deterministic estimate: a quarter of the slots that differ from solved."""
    return (states != from_cubie(CubieCube.solved(3))).sum(axis=1).astype(np.float32) / 4


class ChildrenOf:
    """A per-child heuristic made of a per-state one: each state's 12 children estimated in one call."""

    per_child = True

    def __init__(self, estimate):
        self.estimate, self.calls, self.evaluated = estimate, [], []

    def __call__(self, states):
        return self.estimate(states)

    def children(self, states):
        self.calls.append(len(states))
        self.evaluated.extend(state_keys(states).tolist())
        kids = apply_all_moves(PUZZLE, states, PUZZLE.quarter_turns).reshape(-1, PUZZLE.slots)
        return self.estimate(kids).reshape(len(states), len(PUZZLE.quarter_turns))
