"""Motion over the firmware link: a plan of motor commands, executed exactly once and in order.

All commands of a plan are handed to the link at once (it keeps its own
window of frames in flight, so the rig never waits for a round trip
between turns); completions are awaited in order and reported one by one.
A link or device fault ends the plan with a ``RobotError`` that says what
happened: a stalled motor, a reset board, an unplugged cable.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable, Sequence

from firmware_interface import DeviceFault, DeviceReset, DeviceSilent, LinkError, PortError, RigLink

from .errors import RobotError
from .rig import MotorCommand
from .run import Stopped

log = logging.getLogger("robotd.motion")


class LinkMotion:
    """The rig's motors behind a ``RigLink``; reconnects and clears latched faults before each plan."""

    def __init__(self, link: RigLink, motors: dict[str, str], motion_timeout_s: float = 30.0):
        self.link, self.motors = link, motors
        self.motion_timeout_s = motion_timeout_s
        self._stopping = threading.Event()

    def connect(self) -> dict:
        """Handshake, check the firmware has every configured motor, energise and home them."""
        try:
            info = self.link.connect()
        except LinkError as error:
            raise RobotError(f"serial link: {error}") from None
        missing = sorted(set(self.motors.values()) - set(info["motors"]))
        if missing:
            raise RobotError(f"serial link: the firmware on {info['port']} has no motor {', '.join(missing)} "
                             f"(it reports {', '.join(info['motors'])}); check [rig.motors]")
        self._wait(self.link.enable(), "enable the motors")
        self._wait(self.link.home(), "home the motors")
        return info

    def ready(self) -> None:
        """Make the link usable for a new plan: reconnect after a reset or silence, clear a latched fault."""
        status = self.link.status()
        if not status["connected"]:
            self.connect()
        elif status["fault"] is not None:
            try:
                self.link.clear()
            except LinkError as error:
                raise RobotError(f"serial link: could not clear the fault: {error}") from None

    def run_plan(self, plan: Sequence[MotorCommand], on_done: Callable[[int], None]) -> None:
        self._stopping.clear()
        self.ready()
        try:
            motions = [self._submit(command) for command in plan]
            for index, motion in enumerate(motions):
                motion.wait(self.motion_timeout_s)
                on_done(index)
        except LinkError as error:
            if self._stopping.is_set():
                raise Stopped("emergency stop") from None
            raise RobotError(describe_fault(error)) from None

    def _submit(self, command: MotorCommand):
        turns = command.turns
        if len(turns) == 1:
            return self.link.turn(turns[0].motor, turns[0].motor_quarter_turns)
        first, second = turns
        return self.link.turn_pair(first.motor, first.motor_quarter_turns, second.motor, second.motor_quarter_turns)

    def _wait(self, motion, what: str) -> None:
        try:
            motion.wait(self.motion_timeout_s)
        except LinkError as error:
            raise RobotError(f"could not {what}: {describe_fault(error)}") from None

    def estop(self) -> None:
        self._stopping.set()
        try:
            self.link.estop(wait=False)
        except LinkError as error:  # the port is gone: the device's watchdog stops the motors
            log.warning("emergency stop not sent: %s", error)

    def status(self) -> dict:
        return self.link.status()


def describe_fault(error: LinkError) -> str:
    """A one-line reason for a failed plan, naming the fault class first."""
    if isinstance(error, DeviceReset):
        kind = "the motor board reset during the run"
    elif isinstance(error, DeviceSilent):
        kind = "the motor board went silent (unplugged or crashed)"
    elif isinstance(error, PortError):
        kind = "the serial port was lost (cable unplugged?)"
    elif isinstance(error, DeviceFault) and getattr(error, "code", None) == "STALL":
        kind = "a motor stalled"
    elif isinstance(error, DeviceFault):
        kind = f"the motor board reported a fault ({getattr(error, 'code', None)})"
    else:
        kind = "serial link failure"
    return f"{kind}: {error}"
