"""A Stop is never forgotten by the motion starting.

The stop lands at the worst moment, deterministically: after the runner last looked at its stop flag and
before the motion's entry point runs, or inside ``ready`` while the link is asked for its status (before the
estop's latched fault is cleared). The run, jog or rig action must end ``stopped`` with not one motion sent;
a reconnect or motors-on from the dashboard afterwards must still work, and so must the next run.
"""

import pytest

import solver
from firmware_interface import DeviceFault
from robot.config import Config
from robot.controllers.maestro import Servo
from robot.errors import Stopped
from robot.events import EventBus
from robot.flipspin import FlipSpinRig
from robot.history import History
from robot.motion import LinkMotion
from robot.rig import rig_from_config
from robot.run import Runner, RunSettings, ScanResult
from robot.servo_motion import ServoMotion

MOVES = {"plan", "home", "move"}  # what turns a face or a servo; enable/disable only switch drivers


class Sent:
    """A motion the fake link has sent: done at once, or refused while the link's fault was latched."""

    def __init__(self, fault: str | None):
        self.fault = fault

    def wait(self, timeout: float | None = None) -> dict:
        if self.fault is not None:
            raise DeviceFault(f"refused: {self.fault} latched", code=self.fault)
        return {}


class FakeLink:
    """A controller link in memory that records every frame (``sent``); ``estop`` latches an ``ESTOP`` fault
    that ``clear`` clears, and while it is latched every motion is refused. ``on_status`` runs once, the
    next time ``status`` is asked: the moment a stop can land inside the motion's ``ready``."""

    def __init__(self, motors=("U", "R", "F", "D", "L", "B")):
        self.motors, self.fault, self.sent = list(motors), None, []
        self.on_status = None

    def connect(self) -> dict:
        self.sent.append(("connect",))
        self.fault = None
        return {"motors": self.motors, "port": "/dev/fake", "protocol": 1, "firmware": "fake/1", "channels": 6}

    def status(self) -> dict:
        hook, self.on_status = self.on_status, None
        if hook is not None:
            hook()
        return {"connected": True, "fault": self.fault, "halted": False}

    def clear(self) -> None:
        self.sent.append(("clear",))
        self.fault = None

    def estop(self, wait: bool = True) -> None:
        self.sent.append(("estop",))
        self.fault = "ESTOP"

    def _send(self, *frame) -> Sent:
        self.sent.append(frame)
        return Sent(self.fault)

    def enable(self) -> Sent:
        return self._send("enable")

    def disable(self) -> Sent:
        return self._send("disable")

    def home(self) -> Sent:
        return self._send("home")

    def plan(self, entries) -> list[Sent]:
        return [self._send("plan", entry) for entry in entries]

    def move(self, targets) -> Sent:
        return self._send("move", targets)

    def set_speed(self, *args) -> Sent:
        return self._send("speed", *args)

    def set_accel(self, *args) -> Sent:
        return self._send("accel", *args)

    def moves(self) -> list[tuple]:
        return [frame for frame in self.sent if frame[0] in MOVES]

    def stopped_last(self) -> bool:
        """The board is left stopped: an estop came after the last clear or new session (one that ``ready``
        cleared is not)."""
        kinds = [frame[0] for frame in reversed(self.sent)]
        clears = [i for i, kind in enumerate(kinds) if kind in ("clear", "connect")]
        return "estop" in kinds and (not clears or kinds.index("estop") < clears[0])


class FixedScanner:
    def __init__(self, state: str):
        self.state = state

    def scan(self) -> ScanResult:
        return ScanResult(self.state, [1.0] * len(self.state))


SCRAMBLED = solver.apply(solver.scramble(2, seed=0, length=0)["state"], "R U F'")


def link_runner(tmp_path, link: FakeLink) -> tuple[Runner, LinkMotion]:
    rig = rig_from_config(Config({}).section("rig"))
    motion = LinkMotion(link, rig.motors, rig=rig)
    motion.connect()
    settings = RunSettings(verify=False, solve_fallback=None)
    runner = Runner(FixedScanner(SCRAMBLED), motion, rig, History(tmp_path / "h.sqlite"), EventBus(), settings)
    return runner, motion


def servo_runner(tmp_path, link: FakeLink) -> tuple[Runner, ServoMotion]:
    servos = {
        "spin": Servo(0, {-1: 1000.0, 0: 1500.0, 1: 2000.0}, 0, 0),
        "cover": Servo(1, {"open": 1500.0, "hold": 1200.0, "flip": 1900.0}, 0, 0),
    }
    rig = FlipSpinRig(size=2)
    motion = ServoMotion(link, servos, rig)
    motion.connect()
    runner = Runner(FixedScanner(SCRAMBLED), motion, rig, History(tmp_path / "h.sqlite"), EventBus(), RunSettings())
    return runner, motion


def stop_first(runner: Runner, call):
    """``call``, with a Stop pressed just before it: after the runner's own check, before the motion starts."""

    def raced(*args):
        runner.stop("stop from the dashboard")
        return call(*args)

    return raced


def test_a_stop_just_before_run_plan_ends_the_run_without_a_turn(tmp_path):
    runner, motion = link_runner(tmp_path, link := FakeLink())
    motion.run_plan = stop_first(runner, motion.run_plan)  # type: ignore[method-assign]
    link.sent.clear()
    summary = runner.run()
    assert summary["outcome"] == "stopped", summary["error"]
    assert link.moves() == [] and link.stopped_last()


def test_a_stop_while_ready_asks_the_link_is_not_cleared_with_the_fault(tmp_path):
    runner, _ = link_runner(tmp_path, link := FakeLink())

    def stop_in_ready(event: dict) -> None:
        if event["kind"] == "phase" and event["data"]["phase"] == "executing":
            link.on_status = lambda: runner.stop("stop from the dashboard")

    runner.bus.subscribe(stop_in_ready)
    link.sent.clear()
    summary = runner.run()
    assert summary["outcome"] == "stopped", summary["error"]
    assert link.moves() == [] and link.stopped_last()  # ready cleared the estop's fault, then stopped again


@pytest.mark.parametrize("make", [link_runner, servo_runner], ids=["link", "servo"])
def test_a_stop_just_before_a_jog_or_rig_action_moves_nothing(tmp_path, make):
    runner, motion = make(tmp_path, link := FakeLink())
    motion.jog = stop_first(runner, motion.jog)
    link.sent.clear()
    with pytest.raises(Stopped, match="stop from the dashboard"):
        runner.jog(runner.jog_commands()[0])
    with pytest.raises(Stopped, match="stop from the dashboard"):
        runner.rig_action("home", stop_first(runner, motion.home))
    assert link.moves() == [] and link.stopped_last()


@pytest.mark.parametrize("make", [link_runner, servo_runner], ids=["link", "servo"])
def test_a_stop_while_ready_asks_the_link_stops_a_rig_action(tmp_path, make):
    runner, motion = make(tmp_path, link := FakeLink())
    link.sent.clear()
    link.on_status = lambda: runner.stop("stop from the dashboard")
    with pytest.raises(Stopped, match="stop from the dashboard"):
        runner.rig_action("home", motion.home)
    assert link.moves() == [] and link.stopped_last()


@pytest.mark.parametrize("make", [link_runner, servo_runner], ids=["link", "servo"])
def test_after_a_stop_the_dashboards_recovery_and_the_next_jog_work(tmp_path, make):
    runner, motion = make(tmp_path, link := FakeLink())
    with pytest.raises(Stopped):
        runner.rig_action("home", stop_first(runner, motion.home))
    assert runner.rig_action("motors on", lambda: motion.set_motors(True))["outcome"] == "done"
    runner.stop("stop from the dashboard")  # idle: nothing to stop, and nothing refused after it
    assert runner.rig_action("reconnect", motion.reconnect)["outcome"] == "done"
    link.sent.clear()
    assert runner.jog(runner.jog_commands()[0])["outcome"] == "done"
    assert link.moves() and not link.stopped_last()


def test_after_a_stopped_run_the_next_run_turns_the_cube(tmp_path):
    runner, motion = link_runner(tmp_path, link := FakeLink())
    run_plan = motion.run_plan
    motion.run_plan = stop_first(runner, run_plan)  # type: ignore[method-assign]
    assert runner.run()["outcome"] == "stopped"
    motion.run_plan = run_plan  # type: ignore[method-assign]
    link.sent.clear()
    summary = runner.run()
    assert summary["outcome"] == "done", summary["error"]
    assert len([frame for frame in link.moves() if frame[0] == "plan"]) == len(summary["solution"].split())


@pytest.mark.parametrize("make", [link_runner, servo_runner], ids=["link", "servo"])
def test_a_stopped_motion_refuses_every_entry_point_until_armed(tmp_path, make):
    _, motion = make(tmp_path, link := FakeLink())
    motion.estop()
    link.sent.clear()
    for call in (lambda: motion.run_plan([], lambda i: None), motion.home, motion.reconnect, motion.ready):
        with pytest.raises(Stopped, match="emergency stop"):
            call()
    for enabled in (True, False):
        with pytest.raises(Stopped, match="emergency stop"):
            motion.set_motors(enabled)
    assert link.sent == []
    motion.arm()
    motion.home()
    assert link.moves()
