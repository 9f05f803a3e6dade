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


class FaceMotors:
    """The motors that turn a ``VirtualCube``'s faces (``faces``: axis -> face), each ``quarter_steps`` (axis ->
    steps) a quarter turn: a face turns when its motor reaches another multiple of a quarter turn, as a harness
    counting the real board's steps sees it; a motor a stop left between two holds the face at the last one."""

    def __init__(self, cube: VirtualCube, faces: dict[str, str], quarter_steps: dict[str, float]):
        self.cube, self.faces, self.quarter_steps = cube, faces, quarter_steps
        self.power_on()

    def power_on(self) -> None:
        """Every motor at step 0, which is where its face is."""
        self.steps = {axis: 0.0 for axis in self.faces}
        self.quarter = {axis: 0 for axis in self.faces}

    def move(self, axis: str, steps: float) -> None:
        """``axis`` moved by ``steps`` (signed)."""
        face = self.faces.get(axis)
        if face is None:
            return
        before = self.steps[axis]
        after = before + steps
        if abs(after - round(after)) < 1e-3:
            after = round(after)  # on a whole step: the parts of a turn (133.33 steps each) add up to it
        self.steps[axis] = after
        unit = self.quarter_steps[axis]
        last = (after // unit if after > before else -(-after // unit)) * unit
        if (before < last <= after or after <= last < before) and round(last / unit) != self.quarter[axis]:
            quarter = round(last / unit)
            self.cube.turn(face, quarter - self.quarter[axis])
            self.quarter[axis] = quarter
