"""Motion on a flip/spin rig: robot operations (flip, spin, hold, turn, release) become servo moves.

Each op is one or two confirmed moves of a servo to an end-point (the
Maestro link completes a move only once the servo is there, see
``firmware_interface.maestro.link``): ``flip`` is the cover to flip and
back to open, ``hold``/``release`` the cover to hold/open, ``spin``/``turn``
the base to its next end-point. What the cube does meanwhile depends on the
cover, which is why ops run strictly one after the other.

The motion layer tracks where the servos really are (the spinner's
end-point and the cover), op by op; the rig's planner starts from there.
After an emergency stop the servos are switched off wherever they were:
``ready()`` puts them back to a known place (cover open, spinner at its
last end-point) before anything else moves.

``jog`` does one op on its own (a builder checking a new rig), after
checking it can be done from where the servos are. ``home`` opens the
cover and spins the base back to its home end-point (the cube turns with
it, and the rig keeps track); ``set_motors(False)`` switches both servos off
(no pulses: they can be moved by hand) and ``set_motors(True)`` re-seats
them as after an emergency stop; ``reconnect`` opens a new session.
Under ``robotd --rig-only`` each confirmed move's positions go to
``follow`` (``robot.rig_only.FollowedMechanism``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from firmware_interface import LinkError

from .errors import RobotError, Stopped
from .flipspin.pose import HOLD, OPEN, SPINNER, Op, Pose
from .motion import MotionOverLink, describe_fault

JOG_OPS = {
    op.text: op
    for op in (
        Op("flip"),
        Op("hold"),
        Op("release"),
        *(Op(kind, q) for kind in ("spin", "turn") for q in (1, -1, 2, -2)),
    )
}


class ServoFollower(Protocol):
    """What follows each servo move as the Maestro reports it (``robot.rig_only.FollowedMechanism``)."""

    def moved(self, result: dict | None) -> None: ...


# the cover each op starts from: spins and flips move the whole cube, turns need the upper layers held
_COVER_NEEDED = {"flip": OPEN, "hold": OPEN, "spin": OPEN, "release": HOLD, "turn": HOLD}


class ServoMotion(MotionOverLink):
    """The two servos of a flip/spin rig behind a ``MaestroLink``."""

    def __init__(self, link, servos: dict, rig, motion_timeout_s: float = 30.0):
        super().__init__(link, motion_timeout_s)
        self.servos, self.rig = servos, rig
        self.spinner, self.cover = 0, OPEN
        self.follow: ServoFollower | None = None  # robotd --rig-only: the virtual cube that follows each move

    def connect(self) -> dict:
        """Handshake, speeds and accelerations, then the rig to a known place: cover open, spinner home."""
        try:
            info = self.link.connect()
        except LinkError as error:
            raise RobotError(f"servo controller: {error}") from None
        self._stop_again_if_stopped()
        for servo in self.servos.values():
            self._wait(self.link.set_speed(servo.channel, servo.speed), "set the servo speed")
            self._wait(self.link.set_accel(servo.channel, servo.accel), "set the servo acceleration")
        self._to_known_place(spinner=0)
        return info

    def _to_known_place(self, spinner: int) -> None:
        self._move("cover", OPEN)
        self._move("spin", spinner)
        self.spinner, self.cover, self.motors_on = spinner, OPEN, True
        self.rig.reset(Pose(self.rig.pose.orientation, spinner, OPEN))

    def _ready(self) -> None:
        """Reconnect after a reset or silence, clear an e-stop and re-seat the servos, and re-seat them after
        they were switched off."""
        status = self.link.status()
        if not status["connected"]:
            self.connect()
            return
        if status["fault"] is not None:
            self._clear_fault("servo controller")
        if not self.motors_on:
            self._to_known_place(self.spinner)

    def do(self, ops: Sequence[Op]) -> None:
        """Carry out ops one by one; raises ``Stopped`` after an emergency stop, ``RobotError`` on a fault."""
        self._refuse_if_stopped()
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
        done = self.link.move({settings.channel: settings.target(point)}).wait(self.motion_timeout_s)
        if self.follow is not None:
            self.follow.moved(done)

    def run_plan(self, plan: Sequence, on_done: Callable[[int], None]) -> None:
        self.ready()
        for index, step in enumerate(plan):
            self.do(step.ops)
            on_done(index)

    def jog(self, command: str) -> None:
        """One op by its text (``"spin+1"``, ``"hold"``, ...), checked against where the servos are."""
        op = JOG_OPS.get(command.strip())
        if op is None:
            raise RobotError(f"jog {command!r}: not an op of the flip/spin rig; give one of {', '.join(JOG_OPS)}")
        self.ready()
        self._check_jog(op)
        before = Pose(self.rig.pose.orientation, self.spinner, self.cover)
        self.do([op])
        self.rig.reset(before.apply(op))  # the planner's next run starts from where the servos are

    def _check_jog(self, op: Op) -> None:
        kind, quarters = op
        needed = _COVER_NEEDED[kind]
        if kind in ("hold", "release") and self.cover != needed:
            raise RobotError(f"{op.text}: the cover is already {'at hold' if self.cover == HOLD else 'open'}")
        if self.cover != needed:
            first = "release" if needed == OPEN else "hold"
            raise RobotError(
                f"{op.text}: needs the cover {_cover_words(needed)}, it is {_cover_words(self.cover)}; {first} first"
            )
        if kind in ("spin", "turn") and self.spinner + quarters not in SPINNER:
            raise RobotError(
                f"{op.text}: {_spinner_limit(self.spinner, quarters)}; "
                f"{' or '.join(_spinner_options(kind, self.spinner))} instead"
            )

    def jog_commands(self) -> list[str]:
        return list(JOG_OPS)

    def home(self) -> str:
        """Cover open, base back at its home end-point: the ops that get there, tracked like a jog's."""
        self.ready()
        ops = ([Op("release")] if self.cover == HOLD else []) + ([Op("spin", -self.spinner)] if self.spinner else [])
        pose = Pose(self.rig.pose.orientation, self.spinner, self.cover)
        self.do(ops)
        for op in ops:
            pose = pose.apply(op)
        self.rig.reset(pose)
        done = " then ".join(op.text for op in ops) or "nothing to move"
        return f"cover open, base at its home end-point ({done})"

    def set_motors(self, enabled: bool) -> str:
        """Both servos off (no pulses), or back on at a known place (cover open, base where it was)."""
        self.ready()
        if enabled:
            return "cover open, base at its last end-point"
        for servo in self.servos.values():
            self._wait(self.link.move({servo.channel: 0}), "switch the servos off")
        self.motors_on = False
        return (
            "servos off (no pulses): they can be moved by hand, but leave the base where it is; "
            "the next run or jog switches them on again"
        )

    def reconnect(self) -> str:
        """A new session with the Maestro, then the servos to a known place."""
        self._refuse_if_stopped()
        info = self.connect()
        return f"a new session with the Maestro ({info.get('channels', '?')} channels) on {info['port']}; servos on"

    def status(self) -> dict:
        return {**self.link.status(), "spinner": self.spinner, "cover": self.cover}


def _cover_words(cover: str) -> str:
    return "at hold (holding the upper layers)" if cover == HOLD else "open"


def _spinner_limit(spinner: int, quarters: int) -> str:
    room = max(SPINNER) - spinner if quarters > 0 else spinner - min(SPINNER)
    at = f"the spinner is at {spinner:+d}" if spinner else "the spinner is at home (0)"
    if room == 0:
        return f"{at} and cannot turn further that way"
    return f"{at} and can turn only {room} quarter turn that way (it stays within -1..+1)"


def _spinner_options(kind: str, spinner: int) -> list[str]:
    """The spins (or turns) the spinner can make from ``spinner``, nearest first."""
    return [Op(kind, q).text for q in (1, -1, 2, -2) if spinner + q in SPINNER]
