"""A motors-only dry run (``robotd --rig-only``): the real controller turns, a virtual cube follows what it reports.

The user's board on ``[serial] port`` runs the plan as in a real run; the
cube the simulated camera sees is turned by what the controller reports it
did, never by what robotd meant to send, so the run's verification (a
re-scan of that cube) catches a turn the controller lost or added.

- A six-axis rig on Marlin or grblHAL: before and after each motor command
  the link's ``query()`` reads the faces' positions (M114, a status report);
  each face turns by its travel in quarter turns (``units_per_quarter`` of
  ``[controller.KIND]``, signed by ``[rig] direction``). The plan goes one
  command at a time for this, so a dry run takes a round trip or two longer
  per command than a real run.
- robotd's own firmware reports which motions it finished, not positions:
  the cube turns by each motion once the firmware reports it done, and the
  run says so (``read_back``).
- A flip/spin rig on a Maestro: each servo move's completion carries the
  positions the Maestro reports for its channels; they move a simulated
  flip/spin mechanism (``firmware_interface.flipspin_mechanism``) with the
  cube in it, as the simulated Maestro's would.

``follower`` makes the one that fits the rig; the motion (``LinkMotion``,
``ServoMotion``) calls it through its ``follow`` attribute. The cube has one
writer at a time, the run's or a jog's thread (they exclude each other);
the dashboard's camera may read it meanwhile and, at worst, see it between
two quarter turns (each swaps one array), as a real camera would: no lock.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator

from firmware_interface import LinkError
from firmware_interface.flipspin_mechanism import FlipSpinMechanism
from firmware_interface.virtual_cube import VirtualCube

from .controllers import Controller
from .controllers.maestro import mechanism
from .errors import RobotError
from .six_axis import MotorCommand, SixAxisRig

log = logging.getLogger("robotd.rig_only")

SUFFIX = {1: "", 2: "2", 3: "'"}
POSITIONS = "the faces' positions the controller reports after each command ({how})"
MOTIONS = "the motions the controller reports done: {why}, so a turn it reports done but did not make goes unnoticed"


class FollowedCube:
    """A six-axis rig's virtual cube, turned by each face's travel as the controller reports it."""

    def __init__(self, link, rig: SixAxisRig, units_per_quarter: float | None, why_no_positions: str):
        self.link, self.rig, self.units_per_quarter = link, rig, units_per_quarter
        self.path = link.port
        self._faces = {motor: face for face, motor in rig.motors.items()}
        self._cube = VirtualCube()
        self._why_not = None if units_per_quarter else why_no_positions
        self.differences: list[str] = []
        self._commands = 0  # commands followed since the cube was set (its run's command number)

    @property
    def cube(self) -> str:
        return self._cube.facelets

    def set_state(self, state: str) -> None:
        """A new cube for a new run; what the last run's read-back found is forgotten."""
        self._cube.set_state(state)
        self.differences, self._commands = [], 0

    def read_back(self) -> dict:
        """How the cube follows the controller, and where the controller did other than robotd sent."""
        if self._why_not is None:
            follows = POSITIONS.format(how=f"{self.units_per_quarter:g} units per quarter turn")
        else:
            follows = MOTIONS.format(why=self._why_not)
        return {"follows": follows, "positions": self._why_not is None, "differences": list(self.differences)}

    @contextlib.contextmanager
    def turning(self, command: MotorCommand) -> Iterator[None]:
        """Around one command on the link: the cube turns as the controller reports it moved."""
        self._commands += 1
        before = self._positions()
        try:
            yield
        except BaseException:
            self._after_failure(command, before)
            raise
        if before is None:
            self._turn({turn.face: turn.quarter_turns for turn in command.turns})
        else:
            self._follow(command, before, self._positions())

    def _positions(self) -> dict[str, float] | None:
        """Each motor's position, as the controller reports it (None: it reports none). LinkError goes on."""
        if self._why_not is not None:
            return None
        position = self.link.query().get("position")
        if position is None:
            self._why_not = "its status report has no positions"
            log.warning("rig-only: the controller reports no positions; the cube follows %s", MOTIONS)
            return None
        missing = [motor for motor in self._faces if position.get(motor) is None]
        if missing:
            raise RobotError(f"rig-only: the controller's position report has no {', '.join(missing)}")
        return {motor: float(position[motor]) for motor in self._faces}

    def _follow(self, command: MotorCommand, before: dict, after: dict | None) -> None:
        if after is None:
            return
        units = self.units_per_quarter or 1.0
        reported: dict[str, int] = {}
        for motor, face in self._faces.items():
            travel = after[motor] - before[motor]
            quarters = travel / units
            if abs(quarters - round(quarters)) > 0.01:
                raise RobotError(
                    f"rig-only: after {command.text} the controller reports face {face} {travel:+g} units from "
                    f"where it was, not a whole number of quarter turns ({units:g} units each): the cube would jam"
                )
            if round(quarters) % 4:
                reported[face] = round(quarters) * self.rig.direction.get(face, 1)
        self._turn(reported)
        sent = {turn.face: turn.quarter_turns for turn in command.turns}
        if _effect(reported) != _effect(sent):
            self.differences.append(
                f"command {self._commands} ({command.text}): the controller turned {_turns_text(reported)}, "
                f"robotd sent {_turns_text(sent)}"
            )
            log.warning("rig-only: %s", self.differences[-1])

    def _after_failure(self, command: MotorCommand, before: dict | None) -> None:
        """A command that failed may have moved a face or two: follow what the controller still reports."""
        if before is None:
            return
        try:
            self._follow(command, before, self._positions())
        except (LinkError, RobotError) as error:
            log.warning("rig-only: no read-back after the failed command %s: %s", command.text, error)

    def _turn(self, turns: dict[str, int]) -> None:
        for face, quarters in turns.items():
            self._cube.turn(face, quarters)


def _effect(turns: dict[str, int]) -> dict[str, int]:
    return {face: q % 4 for face, q in turns.items() if q % 4}


def _turns_text(turns: dict[str, int]) -> str:
    return " ".join(f"{face}{SUFFIX[q]}" for face, q in _effect(turns).items()) or "nothing"


class FollowedMechanism:
    """A flip/spin rig's virtual cube in a simulated mechanism, moved by the servo positions the Maestro reports."""

    def __init__(self, moved: FlipSpinMechanism, port: str):
        self.mechanism, self.path = moved, port

    @property
    def cube(self) -> str:
        return self.mechanism.cube

    def set_state(self, state: str) -> None:
        self.mechanism.set_state(state)

    def read_back(self) -> dict:
        jammed = self.mechanism.jammed
        return {
            "follows": "the servo positions the Maestro reports after each move",
            "positions": True,
            "differences": [] if jammed is None else [f"the cube jammed: {jammed}"],
        }

    def moved(self, result: dict | None) -> None:
        """A servo move is done: its channels' positions (quarter-µs, 0: no pulses) move the mechanism."""
        positions = (result or {}).get("positions") or {}
        horns = {channel: (value / 4 if value else None) for channel, value in positions.items()}
        self.mechanism.servo_moved(horns, time.monotonic())


def why_unsolved(board: FollowedCube | FollowedMechanism) -> str | None:
    """For a failed verification: where the controller did other than robotd sent, in words."""
    differences = board.read_back()["differences"]
    if not differences:
        return None
    return "the controller's read-back differs from what robotd sent: " + "; ".join(differences)


def follower(controller: Controller, link, rig, size: int) -> FollowedCube | FollowedMechanism:
    """The virtual cube that follows this controller on this rig (robotd --rig-only)."""
    if rig.kind == "flip-spin":
        return FollowedMechanism(mechanism(controller, size), link.port)
    if not isinstance(rig, SixAxisRig):
        raise RobotError(f"robotd --rig-only cannot follow a {rig.kind} rig: no virtual cube for it")
    units = getattr(controller.settings, "units_per_quarter", None)
    board = "robotd's own firmware" if controller.kind == "robotd" else f"a {controller.kind} controller"
    why = f"{board} reports which motions it finished, not positions"
    return FollowedCube(link, rig, units, why)


def attach(motion, board: FollowedCube | FollowedMechanism, kind: str) -> None:
    """Let ``motion`` report each move to ``board``; a motion that cannot is a clear error."""
    if not hasattr(motion, "follow"):
        raise RobotError(
            f"a {kind} controller cannot run robotd --rig-only: its motion reports no moves to follow; "
            "use robotd --sim, or a camera and a real run"
        )
    motion.follow = board
