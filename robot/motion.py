"""Motion over the firmware link: a plan of motor commands, executed exactly once and in order.

The whole plan is handed to the link at once with ``link.plan`` (a
version-2 firmware gets it in as few PLAN frames as fit, a version-1 one
as TURN/PAIR frames; the link keeps its own window, so the rig never waits
for a round trip between turns); completions are awaited in order and
reported one by one.

At connect, a version-2 session gets SPEED (the rig's quarter-turn time)
and, when ``[rig.stepper]`` is configured, MOTOR for every motor, carrying
``[rig.direction]``: the firmware then inverts reversed motors itself and
the host sends face quarter turns as they are. Otherwise (version 1, or no
``[rig.stepper]``) the host flips reversed motors' turns. Either way the
direction is applied exactly once.
A link or device fault ends the plan with a ``RobotError`` that says what
happened: a stalled motor, a reset board, an unplugged cable.

``jog`` turns one face on its own (a builder checking a new rig): it goes
through the rig's planner and ``run_plan``, so motor names and directions
apply exactly as in a run. Between runs the dashboard can also ``home`` the
motors, switch them on or off (``set_motors``) and ``reconnect`` the link;
``rig_actions`` lists those this controller can do, and asking one it
cannot (a Marlin or grblHAL rig has no home switches; grblHAL switches its
drivers itself) is a ``RobotError`` that says why. Motors switched off are
switched on again by the next run or jog. A face an emergency stop left
part-way is turned to its nearest quarter turn before anything moves again
(``ready``, and a run's ``square_before_run`` before it scans), where the
controller reads back where its motors stopped (robot/squaring.py).

An emergency stop refuses every move until the next operation starts:
whoever starts one (a run, a jog, a rig action: ``robot.run.Runner``; a
script driving the motion itself) calls ``arm()`` first, and each entry
point (``run_plan``, ``run_feed``, ``jog``, ``home``, ``set_motors``,
``reconnect``, ``ready``) raises ``Stopped`` while the stop stands. An entry
point never clears it itself: a Stop pressed just before it ran would be
forgotten, its latched fault cleared and the plan carried out. A stop that
lands while ``ready`` clears a latched fault (or opens a new session) is
sent again rather than cleared with it.

``run_feed`` executes a plan that may still change ahead of the rig (a
3x3x3 solution the solvers are still improving, ``robot.live_plan``): it
takes commands one at a time and keeps only ``FEED_AHEAD_S`` of motor time
queued on the board, enough that the motors never wait for the host.

Under ``robotd --rig-only`` a ``follow`` (``robot.rig_only.FollowedCube``)
reads each command back from the controller; the plan then goes one
command at a time.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

from firmware_interface import ConfigError, DeviceFault, DeviceReset, DeviceSilent, LinkError, PortError, RigLink
from firmware_interface.motion import Motion
from firmware_interface.robotd.overlap import overlap_steps
from firmware_interface.steps import SPEED_MS
from solver import InvalidState
from solver.puzzles.cube.notation import MOVE_NAMES, parse_moves

from .errors import RobotError, Stopped
from .six_axis import MotorCommand, SixAxisRig
from .squaring import NO_POSITIONS, off_square_degrees, squared

log = logging.getLogger("robotd.motion")


RIG_ACTIONS = ("home", "motors", "reconnect", "square")
# run_feed keeps this much planned motor time, and at least FEED_AHEAD commands, queued on the board:
# a few hundred milliseconds cover a busy host's scheduling and the serial round trip many times over.
FEED_AHEAD_S = 0.3
FEED_AHEAD = 2


def feed_lead_s(rig: SixAxisRig | None) -> float:
    """How long before it begins ``run_feed`` takes a command, at most: what is queued ahead of it then is
    under ``FEED_AHEAD_S``, or a single command."""
    return max(FEED_AHEAD_S, rig.half_turn_s + rig.settle_s if rig is not None else 0.0)


class Follower(Protocol):
    """What follows each motor command as the controller reports it (``robot.rig_only.FollowedCube``)."""

    def turning(self, command: MotorCommand) -> AbstractContextManager[None]: ...


class MotionOverLink:
    """What motion over any controller link shares: waiting for a motion, the emergency stop, and which
    rig actions the controller cannot do (``cannot``: action -> why)."""

    def __init__(self, link, motion_timeout_s: float, cannot: dict[str, str] | None = None):
        self.link, self.motion_timeout_s = link, motion_timeout_s
        self.cannot = dict(cannot or {})
        if not hasattr(link, "off_square"):
            self.cannot.setdefault("square", NO_POSITIONS)
        self.motors_on: bool | None = None  # None: not known yet (before the first connect)
        self._stopping = threading.Event()

    def rig_actions(self) -> list[str]:
        """The rig actions (``RIG_ACTIONS``) this controller can do."""
        return [action for action in RIG_ACTIONS if action not in self.cannot]

    def _able(self, action: str) -> None:
        if action in self.cannot:
            raise RobotError(f"{action}: {self.cannot[action]}")

    def _wait(self, motion, what: str) -> None:
        try:
            motion.wait(self.motion_timeout_s)
        except LinkError as error:
            raise RobotError(f"could not {what}: {describe_fault(error)}") from None

    def arm(self) -> None:
        """A new operation (run, jog, rig action) starts: an earlier emergency stop no longer refuses moves."""
        self._stopping.clear()

    def ready(self) -> None:
        """Make the link usable for a new plan: reconnect after a reset or silence, clear a latched fault,
        switch the motors on; ``Stopped`` after an emergency stop (until ``arm``), moving nothing."""
        self._refuse_if_stopped()
        self._ready()

    def _ready(self) -> None:
        raise NotImplementedError

    def _refuse_if_stopped(self) -> None:
        """``Stopped`` after an emergency stop, until the next operation starts (``arm``)."""
        if self._stopping.is_set():
            raise Stopped("emergency stop")

    def _clear_fault(self, device: str) -> None:
        """Clear the link's latched fault (an emergency stop or a lost host turned the drivers off)."""
        try:
            self.link.clear()
        except LinkError as error:
            raise RobotError(f"{device}: could not clear the fault: {error}") from None
        self.motors_on = False
        self._stop_again_if_stopped()

    def _stop_again_if_stopped(self) -> None:
        """After the link dropped its latched faults (``clear``, a new session): an emergency stop that came
        meanwhile may have been dropped with them, so it is sent again and nothing moves."""
        if self._stopping.is_set():
            self.estop()
            raise Stopped("emergency stop")

    def estop(self) -> None:
        self._stopping.set()
        self.motors_on = False  # every controller switches its drivers (servos) off, or halts
        try:
            self.link.estop(wait=False)
        except LinkError as error:  # the port is gone: the device's watchdog stops the motors
            log.warning("emergency stop not sent: %s", error)


class LinkMotion(MotionOverLink):
    """The rig's motors behind a ``RigLink``; reconnects and clears latched faults before each plan."""

    def __init__(
        self,
        link: RigLink,
        motors: dict[str, str],
        motion_timeout_s: float = 30.0,
        *,
        rig: SixAxisRig | None = None,
        cannot: dict[str, str] | None = None,
    ):
        super().__init__(link, motion_timeout_s, cannot)
        self.motors, self.rig = motors, rig
        self.device_direction = False  # True: the firmware applies [rig.direction] (MOTOR dir=)
        self.squared: str | None = None  # what the last ready() turned to square, if anything
        self.by_hand = False  # the motors were switched off: the faces may have been squared by hand since
        self.follow: Follower | None = None  # robotd --rig-only: the virtual cube that follows each command

    def connect(self) -> dict:
        """Handshake, check the firmware has every configured motor, energise and home them."""
        try:
            info = self.link.connect()
        except LinkError as error:
            raise RobotError(f"serial link: {error}") from None
        self._stop_again_if_stopped()
        missing = sorted(set(self.motors.values()) - set(info["motors"]))
        if missing:
            raise RobotError(
                f"serial link: the firmware on {info['port']} has no motor {', '.join(missing)} "
                f"(it reports {', '.join(info['motors'])}); check [rig.motors]"
            )
        self.device_direction = False
        if info.get("protocol", 1) >= 2 and self.rig is not None:
            self._set_up_motors()
        self._enable()
        self._wait(self.link.home(), "home the motors")
        return info

    def _enable(self) -> None:
        self._wait(self.link.enable(), "enable the motors")
        self.motors_on = True
        if self.by_hand and "square" not in self.cannot:  # squared by hand while off: that is square now
            self._wait(self.link.home(), "take the faces as square")
        self.by_hand = False

    def ready(self) -> None:
        """``MotionOverLink.ready``, then every face a stop left between two quarter turns turned to the nearest
        one (``squared`` says what was turned): whole turns from part-way would jam the faces beside it."""
        super().ready()
        self.squared = self._square()

    def square_before_run(self) -> str | None:
        """At the start of a run, before it scans: ``ready`` (a part-turned face would spoil the scan too); what
        squaring turned, if anything. Nothing for a controller that reports no positions."""
        if "square" in self.cannot:
            return None
        self.ready()
        return self.squared

    def square_faces(self) -> str:
        """The dashboard's Square faces: ``ready`` without waiting for a run, saying what it turned."""
        self._able("square")
        self.ready()
        return self.squared or squared({})

    def _square(self) -> str | None:
        off = off_square_degrees(self.link, {motor: face for face, motor in self.motors.items()})
        if not off:
            return None
        try:
            motions = self.link.square()
        except LinkError as error:
            raise RobotError(f"could not square the faces: {describe_fault(error)}") from None
        for motion in motions:
            self._wait(motion, "square the faces")
        log.info("%s", squared(off))
        return squared(off)

    def _set_up_motors(self) -> None:
        """Version 2: SPEED from the rig's quarter-turn time, MOTOR for every motor of ``[rig.stepper]``."""
        rig = self.rig
        if rig is None:  # a link motion always drives a six-axis rig
            raise RobotError("serial link: no six-axis rig to set the motors up for")
        try:
            low, high = SPEED_MS
            motions = [self.link.set_speed(min(high, max(low, round(rig.quarter_turn_s * 1000))))]
            if rig.stepper is not None:
                for face, motor in self.motors.items():
                    steps, rate, accel = rig.stepper[face]
                    direction, overlap = rig.direction.get(face, 1), overlap_steps(rig.overlap_deg, steps)
                    motions.append(self.link.setup_motor(motor, steps, rate, accel, direction, overlap))
        except ConfigError as error:
            raise RobotError(f"serial link: [rig.stepper] does not suit the firmware: {error}") from None
        except LinkError as error:
            raise RobotError(f"could not set the motors up: {describe_fault(error)}") from None
        for motion in motions:
            self._wait(motion, "set the motors up")
        self.device_direction = rig.stepper is not None

    def _ready(self) -> None:
        self._usable()
        if not self.motors_on:
            self._enable()

    def _usable(self) -> None:
        status = self.link.status()
        if not status["connected"] or status.get("halted"):
            self.connect()  # a halted Marlin listens again only after a reset: reopening the port does it
        elif status["fault"] is not None:
            self._clear_fault("serial link")

    def run_plan(self, plan: Sequence[MotorCommand], on_done: Callable[[int], None]) -> None:
        self.ready()
        with self._plan_errors():
            if self.follow is not None:
                self._run_followed(plan, on_done, self.follow)
                return
            motions = self.link.plan([self._entry(command) for command in plan])
            for index, motion in enumerate(motions):
                motion.wait(self.motion_timeout_s)
                on_done(index)

    @property
    def feed_lead_s(self) -> float:
        return feed_lead_s(self.rig)

    def run_feed(self, take: Callable[[], MotorCommand | None], on_done: Callable[[int], None]) -> None:
        """Like ``run_plan`` for a plan that may change ahead of the rig: ``take`` gives the next command
        (None: the plan is done), and is called only while less than ``FEED_AHEAD_S`` is queued."""
        self.ready()
        with self._plan_errors():
            if self.follow is not None:
                self._run_followed(iter(take, None), on_done, self.follow)
                return
            queued: deque[tuple[Motion, float]] = deque()
            index = 0
            while True:
                while len(queued) < FEED_AHEAD or sum(seconds for _, seconds in queued) < FEED_AHEAD_S:
                    command = take()
                    if command is None:
                        break
                    queued.append((self.link.plan([self._entry(command)])[0], command.seconds))
                if not queued:
                    return
                queued.popleft()[0].wait(self.motion_timeout_s)
                on_done(index)
                index += 1

    @contextmanager
    def _plan_errors(self) -> Iterator[None]:
        """A link fault as the ``RobotError`` that says what happened, or ``Stopped`` after an emergency stop."""
        try:
            yield
        except LinkError as error:
            if self._stopping.is_set():
                raise Stopped("emergency stop") from None
            raise RobotError(describe_fault(error)) from None

    def _run_followed(self, plan: Iterable[MotorCommand], on_done: Callable[[int], None], follow: Follower) -> None:
        """One command at a time, each read back by ``follow`` before the next is sent."""
        for index, command in enumerate(plan):
            with follow.turning(command):
                self.link.plan([self._entry(command)])[0].wait(self.motion_timeout_s)
            on_done(index)

    def _entry(self, command: MotorCommand):
        """A command as a ``link.plan`` entry; reversed motors flipped here unless the firmware does it."""
        turns = [(t.motor, t.quarter_turns if self.device_direction else t.motor_quarter_turns) for t in command.turns]
        return turns[0] if len(turns) == 1 else tuple(turns)

    def jog(self, command: str) -> None:
        """Turn one face, e.g. ``"R'"``: planned by the rig, carried out and awaited like a run's plan."""
        move = parse_jog(command)
        if self.rig is None:
            raise RobotError("jog: this motion has no rig layout ([rig]) to plan a face turn with")
        self.run_plan(self.rig.plan([move]), lambda index: None)

    def jog_commands(self) -> list[str]:
        """The 18 face turns, per face: clockwise, counter-clockwise, half."""
        return [MOVE_NAMES[3 * face + turns] for face in range(6) for turns in (0, 2, 1)]

    def home(self) -> str:
        """HOME for every motor (robotd's own firmware: against its home switches, if the board has any)."""
        self._able("home")
        self.ready()
        self._wait(self.link.home(), "home the motors")
        return (
            "every motor was sent HOME: a board with home switches turns each face to its switch; one without "
            "(robotd's reference board) only confirms it, so square the faces by hand first"
        )

    def set_motors(self, enabled: bool) -> str:
        """Energise the drivers, or switch them off so that the faces turn by hand."""
        self._able("motors")
        if enabled:
            self.ready()
            return "the drivers hold the faces"
        self._refuse_if_stopped()
        self._usable()
        self._wait(self.link.disable(), "switch the motors off")
        self.motors_on, self.by_hand = False, True
        return "the faces turn freely by hand; the next run or jog switches the motors on again"

    def reconnect(self) -> str:
        """A new session on the link (the port opened again if it was lost), then motors on and homed."""
        self._refuse_if_stopped()
        info = self.connect()
        firmware = info.get("firmware") or "unknown firmware"
        return f"a new session with {firmware} on {info['port']}; motors on"

    def status(self) -> dict:
        return self.link.status()


def parse_jog(command: str) -> int:
    """The one face turn ``command`` names (solver move id); RobotError for anything else."""
    accepted = "one face turn: U D L R F B, each optionally followed by ' or 2 (e.g. R, R', R2)"
    try:
        moves = parse_moves(command)
    except InvalidState:
        raise RobotError(f"jog {command!r}: not a face turn; give {accepted}") from None
    if len(moves) != 1:
        raise RobotError(f"jog {command!r}: {f'{len(moves)} moves' if moves else 'no move'}; give {accepted}")
    return moves[0]


_FAULT_KINDS = {
    "STALL": "a motor stalled",
    "HALTED": "the motor controller halted (kill or M112) and waits for a reset",
    "ALARM": "the motor controller raised an alarm",
    "ERROR": "the motor controller refused a command",
    "ESTOP": "the motors were stopped by an emergency stop",
    "STRAY": "a face that should have stayed still moved",
    # the Maestro servo controller (firmware_interface.maestro.session)
    "TARGET": "a servo did not reach its target",
    "TIMEOUT": "a servo move did not finish in time",
    "PROTOCOL": "the servo controller keeps reporting a serial protocol error",
    "SCRIPT": "the servo controller's script stopped with an error",
}


def describe_fault(error: LinkError) -> str:
    """A one-line reason for a failed plan, naming the fault class first."""
    if isinstance(error, DeviceReset):
        kind = "the motor board reset during the run"
    elif isinstance(error, DeviceSilent):
        kind = "the motor board went silent (unplugged or crashed)"
    elif isinstance(error, PortError):
        kind = "the serial port was lost (cable unplugged?)"
    elif isinstance(error, DeviceFault) and getattr(error, "code", None) in _FAULT_KINDS:
        kind = _FAULT_KINDS[error.code]
    elif isinstance(error, DeviceFault):
        kind = f"the motor board reported a fault ({getattr(error, 'code', None)})"
    else:
        kind = "serial link failure"
    return f"{kind}: {error}"
