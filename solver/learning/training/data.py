"""Training data for value iteration: scrambled states, Bellman targets, greedy rollouts."""

from __future__ import annotations

import numpy as np
import torch

from ...puzzles.cube.batch import Puzzle, apply_all_moves, is_solved
from ...puzzles.cube.scramble import random_scrambles

PUZZLE = Puzzle.cube3()
QUARTER_TURNS = PUZZLE.quarter_turns


def scrambled_states(count: int, max_depth: int, rng: np.random.Generator) -> np.ndarray:
    """States scrambled by a uniformly random number (0..max_depth) of quarter turns."""
    depths = rng.integers(0, max_depth + 1, count)
    states, _ = random_scrambles(PUZZLE, depths, rng, quarter_turns_only=True)
    return states


def evaluate(net: torch.nn.Module, states: np.ndarray, chunk: int = 65536) -> np.ndarray:
    """Network estimate for each state, 0 for solved states, never negative."""
    out = np.empty(len(states), dtype=np.float32)
    with torch.no_grad():
        for start in range(0, len(states), chunk):
            part = torch.from_numpy(states[start : start + chunk].astype(np.int64))
            out[start : start + chunk] = net(part).numpy()
    out[is_solved(PUZZLE, states)] = 0.0
    return np.maximum(out, 0.0)


def bellman_targets(teacher: torch.nn.Module, states: np.ndarray) -> np.ndarray:
    """min over the 12 quarter-turn neighbours of 1 + teacher(neighbour); 0 at solved."""
    neighbours = apply_all_moves(PUZZLE, states, QUARTER_TURNS)
    values = evaluate(teacher, neighbours.reshape(-1, PUZZLE.slots)).reshape(len(states), -1)
    targets = 1.0 + values.min(axis=1)
    targets[is_solved(PUZZLE, states)] = 0.0
    return targets


def greedy_rollout(net: torch.nn.Module, states: np.ndarray, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Walk each state to the neighbour the network likes best.

    Returns (solved within ``steps``, stuck states: where a walk first failed
    to lower the estimate, i.e. the hard examples worth training on).
    """
    current = states.copy()
    value = evaluate(net, current)
    done = is_solved(PUZZLE, current)
    stuck = []
    stuck_marked = np.zeros(len(states), dtype=bool)
    for _ in range(steps):
        active = np.flatnonzero(~done)
        if not len(active):
            break
        neighbours = apply_all_moves(PUZZLE, current[active], QUARTER_TURNS)
        values = evaluate(net, neighbours.reshape(-1, PUZZLE.slots)).reshape(len(active), -1)
        best = values.argmin(axis=1)
        best_value = values[np.arange(len(active)), best]
        worse = (best_value >= value[active]) & ~stuck_marked[active]
        stuck.append(current[active[worse]])
        stuck_marked[active[worse]] = True
        current[active] = neighbours[np.arange(len(active)), best]
        value[active] = best_value
        done[active] = is_solved(PUZZLE, current[active])
    hard = np.concatenate(stuck) if stuck else np.zeros((0, PUZZLE.slots), dtype=np.uint8)
    return done, hard


class HardPool:
    """A ring buffer of states the greedy walk got stuck on."""

    def __init__(self, capacity: int):
        self.states = np.zeros((capacity, PUZZLE.slots), dtype=np.uint8)
        self.size = 0
        self.next = 0

    def add(self, states: np.ndarray) -> None:
        states = states[-len(self.states) :]
        slots = (self.next + np.arange(len(states))) % len(self.states)
        self.states[slots] = states
        self.next = (self.next + len(states)) % len(self.states)
        self.size = min(self.size + len(states), len(self.states))

    def sample(self, count: int, rng: np.random.Generator) -> np.ndarray:
        if self.size == 0 or count == 0:
            return np.zeros((0, PUZZLE.slots), dtype=np.uint8)
        return self.states[rng.integers(0, self.size, count)]
