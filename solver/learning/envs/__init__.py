"""Reinforcement learning on the puzzles: Gymnasium environments (optional extra ``[rl]``).

Importing this package registers ``robotd/Pocket-v0``, ``robotd/Cube3-v0``,
``robotd/Skewb-v0`` and ``robotd/Pyraminx-v0`` (250-move step limit) and
their vectorised forms; nothing outside ``solver.learning.envs`` imports it, so
the robot itself never needs gymnasium.
"""

from __future__ import annotations

import gymnasium

from .env import PuzzleEnv
from .puzzles import StickerPuzzle, sticker_puzzle
from .vector import PuzzleVectorEnv

MAX_EPISODE_STEPS = 250
ENV_IDS = {
    "pocket": "robotd/Pocket-v0",
    "cube3": "robotd/Cube3-v0",
    "skewb": "robotd/Skewb-v0",
    "pyraminx": "robotd/Pyraminx-v0",
}


def _register() -> None:
    for puzzle, env_id in ENV_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(
                env_id,
                entry_point=_entry_point(PuzzleEnv),
                max_episode_steps=MAX_EPISODE_STEPS,
                kwargs={"puzzle": puzzle},
                vector_entry_point=_entry_point(PuzzleVectorEnv),
            )


def _entry_point(cls: type) -> str:
    """gymnasium's "module:attribute" form (its creator protocols type a callable as taking ``**kwargs`` only)."""
    return f"{cls.__module__}:{cls.__qualname__}"


_register()

__all__ = ["ENV_IDS", "MAX_EPISODE_STEPS", "PuzzleEnv", "PuzzleVectorEnv", "StickerPuzzle", "sticker_puzzle"]
