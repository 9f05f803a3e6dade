"""One Gymnasium environment for every sticker-permutation puzzle (2x2x2, 3x3x3, Skewb, Pyraminx).

Observation: the sticker colours as an int8 vector, in the puzzle's
facelet-string order (docs/solver.md), value k = the k-th face letter
(``StickerPuzzle.faces``); a ``MultiDiscrete`` space. Action: a move id,
``Discrete(len(move_names))``. An episode starts from a uniformly random
state (or ``options={"scramble_moves": k}``: k random moves from solved) and
terminates when solved; the registered ids truncate at 250 moves.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from . import render, rewards
from .puzzles import StickerPuzzle, sticker_puzzle


def observation_space(puzzle: StickerPuzzle) -> spaces.MultiDiscrete[np.int8]:
    return spaces.MultiDiscrete(np.full(puzzle.stickers, len(puzzle.faces)), dtype=np.int8)


def scrambled(puzzle: StickerPuzzle, rng: np.random.Generator, count: int, options: dict | None) -> np.ndarray:
    """(count, stickers) start states: uniformly random, or ``options["scramble_moves"]`` random moves."""
    k = (options or {}).get("scramble_moves")
    if k is None:
        return puzzle.random_states(rng, count)
    states = np.tile(puzzle.solved, (count, 1))
    for move in rng.integers(len(puzzle.move_names), size=(int(k), count)):
        states = np.take_along_axis(states, puzzle.moves[move], axis=1)
    return states


class PuzzleEnv(gymnasium.Env):
    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self, puzzle: str = "pocket", reward: str = "research", subgoals: bool = False, render_mode: str | None = None
    ) -> None:
        self.puzzle = sticker_puzzle(puzzle)
        rewards.check_scheme(reward, subgoals, self.puzzle)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"unknown render_mode {render_mode!r}: use 'ansi' or 'rgb_array'")
        self.reward, self.subgoals, self.render_mode = reward, subgoals, render_mode
        self.observation_space = observation_space(self.puzzle)
        self.action_space = spaces.Discrete(len(self.puzzle.move_names))
        self.state, self.moves, self.stage = self.puzzle.solved.copy(), 0, 0

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.state = scrambled(self.puzzle, self.np_random, 1, options)[0]
        self.moves, self.stage = 0, int(rewards.stage(self.puzzle, self.state[None])[0])
        return self.state.copy(), self._info()

    def step(self, action) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.state = self.state[self.puzzle.moves[int(action)]]
        self.moves += 1
        solved = self.is_solved()
        gain = None
        if self.subgoals:
            stage = int(rewards.stage(self.puzzle, self.state[None])[0])
            gain, self.stage = np.array([stage - self.stage]), stage
        reward = float(rewards.rewards(self.reward, np.array([solved]), gain)[0])
        return self.state.copy(), reward, solved, False, self._info()

    def is_solved(self) -> bool:
        return bool(np.array_equal(self.state, self.puzzle.solved))

    def render(self) -> str | np.ndarray | None:
        if self.render_mode == "ansi":
            return render.ansi(self.puzzle, self.state)
        if self.render_mode == "rgb_array":
            return render.rgb_array(self.puzzle, self.state)
        return None

    def _info(self) -> dict[str, Any]:
        return {"solved": self.is_solved(), "moves": self.moves}
