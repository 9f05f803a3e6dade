"""Many puzzles stepped at once with numpy: one gather per step, solved checks and same-step autoreset.

States are an (N, stickers) int8 array; a step gathers every row through
its move's permutation row. A puzzle that is solved or reaches the step
limit starts again in the same step (``AutoresetMode.SAME_STEP``): the
returned observation is the new start, and ``info["final_obs"]`` (valid
where ``info["_final_obs"]``) holds the state it ended in.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from . import render, rewards
from .env import observation_space, scrambled
from .puzzles import sticker_puzzle


class PuzzleVectorEnv(VectorEnv):
    metadata = {"render_modes": ["ansi", "rgb_array"], "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        num_envs: int,
        puzzle: str = "pocket",
        reward: str = "research",
        subgoals: bool = False,
        max_episode_steps: int = 250,
        render_mode: str | None = None,
    ) -> None:
        self.puzzle = sticker_puzzle(puzzle)
        rewards.check_scheme(reward, subgoals, self.puzzle)
        self.num_envs, self.reward, self.subgoals = num_envs, reward, subgoals
        self.max_episode_steps, self.render_mode = max_episode_steps, render_mode
        self.single_observation_space = observation_space(self.puzzle)
        self.single_action_space = spaces.Discrete(len(self.puzzle.move_names))
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.states = np.tile(self.puzzle.solved, (num_envs, 1))
        self.moves = np.zeros(num_envs, dtype=np.int64)
        self.stage = rewards.stage(self.puzzle, self.states)
        self._options: dict | None = None

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        if seed is not None:
            self._np_random, self._np_random_seed = seeding.np_random(seed)
        self._options = options
        self.states = scrambled(self.puzzle, self.np_random, self.num_envs, options)
        self.moves[:] = 0
        self.stage = rewards.stage(self.puzzle, self.states)
        return self.states.copy(), self._info(np.zeros(self.num_envs, dtype=bool))

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self.states = np.take_along_axis(self.states, self.puzzle.moves[np.asarray(actions)], axis=1)
        self.moves += 1
        solved = self._solved()
        gain = None
        if self.subgoals:
            stage = rewards.stage(self.puzzle, self.states)
            gain, self.stage = stage - self.stage, stage
        reward = rewards.rewards(self.reward, solved, gain)
        truncated = ~solved & (self.moves >= self.max_episode_steps)
        info = self._info(solved)
        done = solved | truncated
        if done.any():
            info |= {"final_obs": self.states.copy(), "_final_obs": done}
            self._restart(done)
        return self.states.copy(), reward, solved, truncated, info

    def _restart(self, done: np.ndarray) -> None:
        fresh = scrambled(self.puzzle, self.np_random, int(done.sum()), self._options)
        self.states[done] = fresh
        self.moves[done] = 0
        self.stage[done] = rewards.stage(self.puzzle, fresh)

    def _solved(self) -> np.ndarray:
        return (self.states == self.puzzle.solved).all(axis=1)

    def _info(self, solved: np.ndarray) -> dict[str, Any]:
        return {"solved": solved, "moves": self.moves.copy()}

    def render(self) -> tuple | None:
        if self.render_mode == "ansi":
            return tuple(render.ansi(self.puzzle, s) for s in self.states)
        if self.render_mode == "rgb_array":
            return tuple(render.rgb_array(self.puzzle, s) for s in self.states)
        return None
