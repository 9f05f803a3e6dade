"""The cube inside a simulated rig: every simulator turns it as its motors would."""

from __future__ import annotations

import numpy as np

from solver import InvalidState
from solver.puzzles.cube.cubie import from_facelets, solved_facelets
from solver.puzzles.cube.facelets import check_letters
from solver.puzzles.cube.geometry import face_turn_permutation

from .errors import ConfigError

# How far (degrees) a face may be off aligned when an adjacent face starts turning, for an ordinary cube:
# a third of the 45 degrees of corner cutting speedcubes are sold on (docs/hardware.md, "Overlapping turns").
# The simulated rigs' cubes jam beyond it; it is also robotd's default [rig] overlap_deg.
CORNER_CUTTING_DEG = 15.0


class VirtualCube:
    """The cube in the simulated rig, as a facelet string in its own colour letters."""

    def __init__(self, state: str | None = None, size: int = 3):
        self.set_state(state if state is not None else solved_facelets(size))

    def set_state(self, state: str) -> None:
        try:
            self.size = check_letters(state)
            from_facelets(state)  # refuse an impossible cube
        except InvalidState as err:
            raise ConfigError(f"simulator cube state: {err}") from None
        self._stickers = np.frombuffer(state.encode(), dtype=np.uint8).copy()

    def turn(self, face: str, quarter_turns: int) -> None:
        """Turn a face by signed quarter turns (+ clockwise looking at the face)."""
        source = face_turn_permutation(face, self.size)
        for _ in range(quarter_turns % 4):
            self._stickers = self._stickers[source]

    @property
    def facelets(self) -> str:
        return self._stickers.tobytes().decode()
