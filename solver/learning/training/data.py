"""Training data for value iteration, made where the network runs (CPU or GPU) with torch tensor ops.

A state is an int64 row of the 20 slot values of ``solver.puzzles.cube.batch`` (the
network's input). The 12 quarter turns are that module's move tables moved to the
device, so a move is one gather of source slots and one table look-up, and no state
crosses between host and device during training.
"""

from __future__ import annotations

import numpy as np
import torch

from ...puzzles.cube.batch import Puzzle, solved
from ...puzzles.cube.scramble import _allowed_after

PUZZLE = Puzzle.cube3()
QUARTER_TURNS = PUZZLE.quarter_turns
SLOTS, VALUES, MOVES = PUZZLE.slots, 24, len(QUARTER_TURNS)


class DeviceCube:
    """The 12 quarter turns of the batch cube model as tensors on one device."""

    def __init__(self, device: torch.device | str = "cpu"):
        self.device = torch.device(device)
        turns = np.asarray(QUARTER_TURNS)
        lut = PUZZLE.flat_lut[PUZZLE.lut_base[turns][..., None] + np.arange(VALUES)]
        self.source = torch.as_tensor(PUZZLE.source[turns], dtype=torch.int64, device=self.device)
        self.lut = torch.as_tensor(lut.reshape(-1).astype(np.int64), device=self.device)
        self.base = torch.arange(MOVES * SLOTS, device=self.device).view(MOVES, SLOTS) * VALUES
        self.solved_row = torch.as_tensor(solved(PUZZLE)[0].astype(np.int64), device=self.device)
        # row MOVES: no previous move; the rule of random_scrambles keeps every scramble as short as it looks
        allowed = _allowed_after(PUZZLE, QUARTER_TURNS)
        self.allowed = torch.as_tensor(allowed, dtype=torch.float32, device=self.device)

    def tensor(self, states: np.ndarray) -> torch.Tensor:
        """Batch rows (uint8, numpy) as network input on this device."""
        return torch.as_tensor(states.astype(np.int64), device=self.device)

    def apply_all(self, states: torch.Tensor) -> torch.Tensor:
        """(N, 20) -> (N, 12, 20): every quarter turn of every state."""
        gathered = states.index_select(1, self.source.view(-1))
        return torch.take(self.lut, self.base.view(-1) + gathered).view(len(states), MOVES, SLOTS)

    def apply(self, states: torch.Tensor, moves: torch.Tensor) -> torch.Tensor:
        """One quarter turn per state (``moves``: (N,) indices 0..11)."""
        gathered = torch.gather(states, 1, self.source.index_select(0, moves))
        return torch.take(self.lut, self.base.index_select(0, moves) + gathered)

    def is_solved(self, states: torch.Tensor) -> torch.Tensor:
        return (states == self.solved_row).all(dim=-1)

    def scrambles(self, count: int, max_depth: int, generator: torch.Generator) -> torch.Tensor:
        """States scrambled by a uniformly random number (0..max_depth) of quarter turns,
        drawn by the rule of ``random_scrambles(..., quarter_turns_only=True)``."""
        depths = torch.randint(0, max_depth + 1, (count,), device=self.device, generator=generator)
        current = self.solved_row.expand(count, SLOTS).clone()
        out = current.clone()
        previous = torch.full((count,), MOVES, dtype=torch.int64, device=self.device)
        for step in range(1, max_depth + 1):
            noise = torch.rand(count, MOVES, device=self.device, generator=generator)
            previous = (self.allowed.index_select(0, previous) * noise).argmax(dim=1)
            current = self.apply(current, previous)
            out = torch.where((depths == step)[:, None], current, out)
        return out


def evaluate(net: torch.nn.Module, cube: DeviceCube, states: torch.Tensor) -> torch.Tensor:
    """Network estimate (float32) for each state, 0 for solved states, never negative."""
    values = net(states).float().clamp_min(0.0)
    return torch.where(cube.is_solved(states), torch.zeros_like(values), values)


@torch.no_grad()
def bellman_targets(teacher: torch.nn.Module, cube: DeviceCube, states: torch.Tensor) -> torch.Tensor:
    """min over the 12 quarter-turn neighbours of 1 + teacher(neighbour); 0 at solved."""
    neighbours = cube.apply_all(states).view(-1, SLOTS)
    targets = 1.0 + evaluate(teacher, cube, neighbours).view(len(states), MOVES).amin(dim=1)
    return torch.where(cube.is_solved(states), torch.zeros_like(targets), targets)


@torch.no_grad()
def greedy_rollout(
    net: torch.nn.Module, cube: DeviceCube, states: torch.Tensor, steps: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Walk each state to the neighbour the network likes best.

    Returns (solved within ``steps``, stuck states: where a walk first failed
    to lower the estimate, i.e. the hard examples worth training on). Finished
    walks stay in the batch, masked, so the walk needs no host round trip.
    """
    current = states.clone()
    value = evaluate(net, cube, current)
    done = cube.is_solved(current)
    stuck = torch.zeros_like(done)
    stuck_states = current.clone()
    for _ in range(steps):
        neighbours = cube.apply_all(current)
        values = evaluate(net, cube, neighbours.view(-1, SLOTS)).view(len(states), MOVES)
        best_value, best = values.min(dim=1)
        worse = ~done & ~stuck & (best_value >= value)
        stuck_states = torch.where(worse[:, None], current, stuck_states)
        stuck |= worse
        current = torch.where(
            done[:, None], current, neighbours.gather(1, best.view(-1, 1, 1).expand(-1, 1, SLOTS)).squeeze(1)
        )
        value = torch.where(done, value, best_value)
        done |= cube.is_solved(current)
    return done, stuck_states[stuck]


class HardPool:
    """A ring buffer, on the device, of states the greedy walk got stuck on."""

    def __init__(self, capacity: int, device: torch.device | str = "cpu"):
        self.states = torch.zeros((capacity, SLOTS), dtype=torch.int64, device=device)
        self.size = 0
        self.next = 0

    def add(self, states: torch.Tensor) -> None:
        states = states[-len(self.states) :]
        slots = (self.next + torch.arange(len(states), device=self.states.device)) % len(self.states)
        self.states[slots] = states
        self.next = (self.next + len(states)) % len(self.states)
        self.size = min(self.size + len(states), len(self.states))

    def sample(self, count: int, generator: torch.Generator) -> torch.Tensor:
        if self.size == 0 or count == 0:
            return self.states[:0]
        picks = torch.randint(0, self.size, (count,), device=self.states.device, generator=generator)
        return self.states[picks]
