"""Where the cube is on a flip/spin rig: orientation, spinner position, cover state, and the ops that change them.

World frame: world U is up (the camera looks down at it), world D lies on
the spinner base, world F faces the user. An orientation says which cube
face is at each world position, as six cube-face letters in world order
U R F D L B ("URFDLB" is the cube as scanned). The 24 orientations are
numbered once, 0 being "URFDLB", and every table here is indexed by that
number.

The ops and their physics:

- ``flip``: cover open; whole-cube rotation x (world F goes to world U);
- ``spin q``: cover open; the base turns the whole cube q quarter turns
  clockwise seen from below (``cube_rotation_permutation("D")``);
- ``turn q``: cover at hold; the bottom layer turns q quarter turns (a world
  D face turn), the rest of the cube stays where it is;
- ``hold`` / ``release``: the cover closes on the upper layers / opens.

The spinner sits at -1, 0 or +1 quarter turns; spins and turns move it and
must keep it there. The whole-cube rotations are read off
``solver.puzzles.cube.geometry`` so the rig and the solver share one idea of space.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import NamedTuple

import numpy as np

from solver.puzzles.cube.geometry import FACES, cube_rotation_permutation

from ..errors import RobotError

WORLD = FACES  # world positions, in the same letter order as cube faces
OPEN, HOLD = "open", "hold"
SPINNER = (-1, 0, 1)
ROBOT_MOVES = ("flip", "spin", "turn")  # what the robot-move figures count; hold/release are not counted


class Op(NamedTuple):
    """One thing the rig does: ``flip``, ``spin``/``turn`` with signed quarter turns, ``hold``, ``release``."""

    kind: str
    quarters: int = 0

    @property
    def text(self) -> str:
        return f"{self.kind}{self.quarters:+d}" if self.kind in ("spin", "turn") else self.kind

    @property
    def is_robot_move(self) -> bool:
        return self.kind in ROBOT_MOVES


FLIP, HOLD_OP, RELEASE = Op("flip"), Op("hold"), Op("release")


def ops_text(ops: tuple[Op, ...] | list[Op]) -> str:
    """``"flip spin+1 hold turn+1 release"``."""
    return " ".join(op.text for op in ops)


def _rotated(faces: str, axis: str) -> str:
    """The orientation after a whole-cube quarter turn clockwise seen from world ``axis``."""
    source = cube_rotation_permutation(axis, 3)
    # the centre now at world w came from world source[centre(w)] // 9
    return "".join(faces[source[9 * w + 4] // 9] for w in range(6))


@cache
def _tables() -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    orientations = [FACES]
    index = {FACES: 0}
    for faces in orientations:  # grows while it is walked: a breadth-first closure
        for axis in ("R", "D"):
            turned = _rotated(faces, axis)
            if turned not in index:
                index[turned] = len(orientations)
                orientations.append(turned)
    flip = np.array([index[_rotated(f, "R")] for f in orientations], dtype=np.intp)
    spin = np.empty((len(orientations), 4), dtype=np.intp)
    for k, faces in enumerate(orientations):
        for q in range(4):
            spin[k, q] = index[faces]
            faces = _rotated(faces, "D")
    flip.setflags(write=False)
    spin.setflags(write=False)
    return tuple(orientations), flip, spin


ORIENTATIONS: tuple[str, ...] = _tables()[0]
FLIP_TABLE: np.ndarray = _tables()[1]  # orientation after a flip
SPIN_TABLE: np.ndarray = _tables()[2]  # [orientation, quarters mod 4] -> orientation after the spin
ORIENTATION_INDEX = {faces: k for k, faces in enumerate(ORIENTATIONS)}
N_STATES = len(ORIENTATIONS) * len(SPINNER) * 2


class Pose(NamedTuple):
    """The rig's state between ops: a small hashable value."""

    orientation: int = 0  # index into ORIENTATIONS
    spinner: int = 0  # -1, 0, +1 quarter turns
    cover: str = OPEN  # OPEN or HOLD

    @property
    def faces(self) -> str:
        """Cube face at each world position, world order U R F D L B."""
        return ORIENTATIONS[self.orientation]

    def cube_face(self, world: str) -> str:
        return self.faces[WORLD.index(world)]

    @property
    def bottom(self) -> str:
        """The cube face on the spinner, the one a ``turn`` turns."""
        return self.faces[3]

    @property
    def number(self) -> int:
        """A dense number 0..N_STATES-1 for tables and searches."""
        return (self.orientation * 3 + self.spinner + 1) * 2 + (self.cover == HOLD)

    @classmethod
    def from_index(cls, index: int) -> Pose:
        rest, held = divmod(index, 2)
        orientation, spinner = divmod(rest, 3)
        return cls(orientation, spinner - 1, HOLD if held else OPEN)

    @classmethod
    def of(cls, faces: str, spinner: int = 0, cover: str = OPEN) -> Pose:
        """The pose with cube faces ``faces`` at world U R F D L B."""
        if faces not in ORIENTATION_INDEX:
            raise RobotError(f"{faces!r} is not a cube orientation (six face letters, a rotation of URFDLB)")
        return cls(ORIENTATION_INDEX[faces], spinner, cover)

    def apply(self, op: Op) -> Pose:
        """The pose after ``op``; raises RobotError when the rig cannot do it from here."""
        kind, q = op
        if kind == "hold" or kind == "release":
            self._need(OPEN if kind == "hold" else HOLD, op)
            return self._replace(cover=HOLD if kind == "hold" else OPEN)
        if kind == "flip":
            self._need(OPEN, op)
            return self._replace(orientation=int(FLIP_TABLE[self.orientation]))
        if kind not in ("spin", "turn"):
            raise RobotError(f"unknown rig op {kind!r}")
        self._need(OPEN if kind == "spin" else HOLD, op)
        if q not in (-2, -1, 1, 2) or self.spinner + q not in SPINNER:
            raise RobotError(f"{op.text}: the spinner at {self.spinner:+d} cannot turn {q:+d} quarter turns")
        if kind == "turn":
            return self._replace(spinner=self.spinner + q)
        return Pose(int(SPIN_TABLE[self.orientation, q % 4]), self.spinner + q, self.cover)

    def _need(self, cover: str, op: Op) -> None:
        if self.cover != cover:
            raise RobotError(f"{op.text} needs the cover {cover}, it is {self.cover}")


HOME = Pose()  # cube as scanned, spinner at home, cover open


def spin_ops(spinner: int, half_spins: bool) -> Iterator[Op]:
    """The free spins the spinner can make from ``spinner``."""
    for q in (-2, -1, 1, 2) if half_spins else (-1, 1):
        if spinner + q in SPINNER:
            yield Op("spin", q)


def free_ops(pose: Pose, half_spins: bool) -> Iterator[Op]:
    """Ops that move the cube or the cover without turning a layer."""
    if pose.cover == HOLD:
        yield RELEASE
        return
    yield FLIP
    yield from spin_ops(pose.spinner, half_spins)
    yield HOLD_OP


def turn_ops(spinner: int) -> Iterator[Op]:
    """The held spins (layer turns) the spinner can make from ``spinner``."""
    for q in (-2, -1, 1, 2):
        if spinner + q in SPINNER:
            yield Op("turn", q)
