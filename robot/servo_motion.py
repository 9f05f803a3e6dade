"""Motion on a flip/spin rig: robot operations (flip, spin, hold, turn, release) become servo moves.

Each op is one or two confirmed moves of a servo to an end-point (the
Maestro link completes a move only once the servo is there, see
``firmware_interface.maestro_link``): ``flip`` is the cover to flip and
back to open, ``hold``/``release`` the cover to hold/open, ``spin``/``turn``
the base to its next end-point. What the cube does meanwhile depends on the
cover, which is why ops run strictly one after the other.

The motion layer tracks where the servos really are (the spinner's
end-point and the cover), op by op; the rig's planner starts from there.
After an emergency stop the servos are switched off wherever they were:
``ready()`` puts them back to a known place (cover open, spinner at its
last end-point) before anything else moves.
"""

from __future__ import annotations

from typing import Callable, Sequence

from firmware_interface import LinkError

from .errors import RobotError
from .flipspin.pose import OPEN, Op, Pose
from .motion import MotionOverLink, describe_fault
from .run import Stopped


class ServoMotion(MotionOverLink):
    """The two servos of a flip/spin rig behind a ``MaestroLink``."""

    def __init__(self, link, servos: dict, rig, motion_timeout_s: float = 30.0):
        super().__init__(link, motion_timeout_s)
        self.servos, self.rig = servos, rig
        self.spinner, self.cover = 0, OPEN

    def connect(self) -> dict:
        """Handshake, speeds and accelerations, then the rig to a known place: cover open, spinner home."""
        try:
            info = self.link.connect()
        except LinkError as error:
            raise RobotError(f"servo controller: {error}") from None
        for servo in self.servos.values():
            self._wait(self.link.set_speed(servo.channel, servo.speed), "set the servo speed")
            self._wait(self.link.set_accel(servo.channel, servo.accel), "set the servo acceleration")
        self._to_known_place(spinner=0)
        return info

    def _to_known_place(self, spinner: int) -> None:
        self._move("cover", OPEN)
        self._move("spin", spinner)
        self.spinner, self.cover = spinner, OPEN
        self.rig.reset(Pose(self.rig.pose.orientation, spinner, OPEN))

    def ready(self) -> None:
        """Make the servos usable: reconnect after a reset or silence, clear an e-stop and re-seat them."""
        status = self.link.status()
        if not status["connected"]:
            self.connect()
        elif status["fault"] is not None:
            try:
                self.link.clear()
            except LinkError as error:
                raise RobotError(f"servo controller: could not clear the fault: {error}") from None
            self._to_known_place(self.spinner)

    def do(self, ops: Sequence[Op]) -> None:
        """Carry out ops one by one; raises ``Stopped`` after an emergency stop, ``RobotError`` on a fault."""
        try:
            for op in ops:
                self._op(op)
        except LinkError as error:
            if self._stopping.is_set():
                raise Stopped("emergency stop") from None
            raise RobotError(describe_fault(error)) from None

    def _op(self, op: Op) -> None:
        kind, quarters = op
        if kind == "flip":
            self._move("cover", "flip")
            self._move("cover", OPEN)
        elif kind in ("hold", "release"):
            self._move("cover", "hold" if kind == "hold" else OPEN)
            self.cover = "hold" if kind == "hold" else OPEN
        elif kind in ("spin", "turn"):
            self._move("spin", self.spinner + quarters)
            self.spinner += quarters
        else:
            raise RobotError(f"the flip/spin rig has no op {kind!r}")

    def _move(self, servo: str, point) -> None:
        settings = self.servos[servo]
        if point not in settings.end_points:
            raise RobotError(f"the {servo} servo has no end-point {point!r}")
        self.link.move({settings.channel: settings.target(point)}).wait(self.motion_timeout_s)

    def run_plan(self, plan: Sequence, on_done: Callable[[int], None]) -> None:
        self._stopping.clear()
        self.ready()
        for index, step in enumerate(plan):
            self.do(step.ops)
            on_done(index)

    def status(self) -> dict:
        return {**self.link.status(), "spinner": self.spinner, "cover": self.cover}
