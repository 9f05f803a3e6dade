"""Between runs, in simulation through every controller: jogging (one face turn or one servo op) and the
rig actions (home, motors on/off, reconnect)."""

import threading
import time

import pytest

import devices
import solver
from firmware_interface import DeviceFault
from robot import assemble
from robot.config import Config
from robot.errors import RobotError, Stopped
from robot.events import EventBus
from robot.history import History
from robot.motion import describe_fault
from robot.rig import rig_from_config
from robot.run import Runner, RunSettings
from robot_doubles import FAST_RIG, FLIP_SPIN, NO_TWO_PHASE, QUICK_HOME, wait_for
from solver.puzzles.cube.geometry import cube_rotation_permutation

SLOW_RIG = "[rig]\nquarter_turn_s = 0.2\nhalf_turn_s = 0.3\nsettle_s = 0.0\n" + QUICK_HOME
AVR_RIG = (
    FAST_RIG
    + """
[rig.stepper]
steps_per_quarter = 50
max_rate = 20000
accel = 1000000
[rig.direction]
U = 1
R = 1
F = 1
D = 1
L = -1
B = 1
[sim]
firmware = "avr"
"""
)
SCRAMBLE = "R U F' L2 D B'"


def build_in(directory, name, built: list, rig=FAST_RIG, controller=None, extra="", two_phase=False):
    """A simulated daemon holding a scrambled 3x3, its config and data under ``directory`` named ``name``, added
    to ``built`` (to be closed) as soon as it is; with the two-phase worker only for a test that solves that 3x3."""
    path = directory / f"robotd{name}.toml"
    solver_section = "" if two_phase else f"[solver]\n{NO_TWO_PHASE}"
    path.write_text(f'[robotd]\ndata_dir = "{directory / f"data{name}"}"\n{solver_section}{rig}\n{extra}')
    one = assemble.build(path, sim=True, web=False, controller=controller)
    built.append(one)
    one.simulation.prepare(puzzle=3, scramble=SCRAMBLE)
    return one


@pytest.fixture
def build(tmp_path):
    """``build(rig=..., controller=..., extra=..., two_phase=False)``: ``build_in`` the test's directory."""
    built: list = []
    yield lambda **options: build_in(tmp_path, len(built), built, **options)
    for one in built:
        one.close()


@pytest.fixture(scope="module")
def untouched(tmp_path_factory):
    """One default daemon for the tests that only read it or are refused: the cube must stay as it is."""
    built: list = []
    yield build_in(tmp_path_factory.mktemp("untouched"), 0, built)
    for one in built:
        one.close()


def jog_events(built) -> list[dict]:
    events = []
    built.daemon.bus.subscribe(lambda event: events.append(event) if event["kind"] == "jog" else None)
    return events


# ---------------------------------------------------------------- six-axis rigs


@pytest.mark.parametrize("controller", [None, "marlin", "grblhal"])
def test_a_jog_turns_the_cube_as_the_solver_says(build, controller):
    built = build(controller=controller)
    events = jog_events(built)
    for command in ("R", "U'", "F2"):
        before = built.simulation.firmware.cube
        reply = built.daemon.jog(command)
        assert reply["command"] == command and reply["outcome"] == "done"
        assert built.simulation.firmware.cube == solver.apply(before, command)
    assert [(e["run_id"], e["data"]["command"], e["data"]["outcome"]) for e in events] == [
        (None, "R", "done"),
        (None, "U'", "done"),
        (None, "F2", "done"),
    ]
    assert built.daemon.history.list_runs() == []  # a jog is not a run


def test_a_jog_of_a_reversed_motor_turns_its_face_the_right_way(build):
    """The firmware binary under simavr, L mounted reversed: the direction is applied once, as in a run."""
    devices.require_avr()
    built = build(rig=AVR_RIG)
    for command in ("L'", "R"):
        before = built.simulation.firmware.cube
        built.daemon.jog(command)
        assert built.simulation.firmware.cube == solver.apply(before, command)


def test_the_status_lists_the_18_face_turns(untouched):
    commands = untouched.daemon.status()["jog"]
    assert len(commands) == len(set(commands)) == 18
    assert commands[3:6] == ["R", "R'", "R2"]


@pytest.mark.parametrize(
    "command, words",
    [
        ("R U", "'R U': 2 moves"),
        ("X", "'X': not a face turn"),
        ("r", "'r': not a face turn"),
        ("", "no move"),
        ("spin+1", "not a face turn"),
    ],
)
def test_a_bad_face_turn_says_what_is_accepted(untouched, command, words):
    before = untouched.simulation.firmware.cube
    with pytest.raises(RobotError) as caught:
        untouched.daemon.jog(command)
    assert words in str(caught.value) and "U D L R F B" in str(caught.value)
    assert untouched.simulation.firmware.cube == before


def test_a_stalled_motor_fails_the_jog_with_the_reason(build):
    built = build(extra='[sim.faults]\nstall = ["R"]\n')
    events = jog_events(built)
    with pytest.raises(RobotError, match="a motor stalled"):
        built.daemon.jog("R")
    assert events[-1]["data"]["outcome"] == "error" and "a motor stalled" in events[-1]["data"]["message"]
    assert built.daemon.runner.jogging is None


def test_a_jog_during_a_run_is_refused(build):
    built = build(rig=SLOW_RIG)
    run_id = built.daemon.start_run(puzzle=2, scramble="R U R' U' F2")
    with pytest.raises(RobotError, match=rf"a run is in progress \(run {run_id}, \w+\): stop it first"):
        built.daemon.jog("R")
    built.daemon.stop()
    assert built.daemon.runner.wait(10)


# ---------------------------------------------------------------- the flip/spin rig


def test_hold_turn_release_turns_the_bottom_layer(build):
    built = build(rig=FLIP_SPIN)
    assert built.daemon.status()["jog"] == [
        "flip",
        "hold",
        "release",
        "spin+1",
        "spin-1",
        "spin+2",
        "spin-2",
        "turn+1",
        "turn-1",
        "turn+2",
        "turn-2",
    ]
    before = built.simulation.firmware.cube
    for command in ("hold", "turn+1", "release"):
        assert built.daemon.jog(command)["outcome"] == "done"
    # the mechanism turns the layer on the spinner, world D, a quarter clockwise seen from below
    assert built.simulation.firmware.cube == solver.apply(before, "D")
    pose = built.daemon.status()["rig"]["pose"]
    assert (pose["spinner"], pose["cover"]) == (1, "open")  # the next run plans from where the servos are


# Servos that reach each end-point within one cycle of the simulator (its horns move by wall-clock time; a flip
# is 400 µs, a quarter spin 500 µs), and a link that waits out a simulator thread starved by busy threads: the
# cube's turns then do not depend on how the threads are scheduled.
STEADY_FLIP_SPIN = FLIP_SPIN.replace("servo_us_per_ms = 40.0", "servo_us_per_ms = 1000.0") + (
    "[controller.maestro.timing]\nreply_timeout = 0.5\nsilence = 5.0\n"
)


def servos_at_rest(simulated) -> bool:
    """Every powered horn of the simulated Maestro has reached its pulse's target (the mechanism has seen it)."""
    info = simulated.info()
    return all(target == 0 or horn * 4 == target for target, horn in zip(info["targets"], info["horns"]))


def test_spin_and_flip_turn_the_whole_cube(build):
    built = build(rig=STEADY_FLIP_SPIN)
    cube = built.simulation.firmware
    for command, axis in (("spin-1", "D"), ("flip", "R")):
        before = cube.cube
        built.daemon.jog(command)
        wait_for(lambda: servos_at_rest(cube))
        turns = 3 if command == "spin-1" else 1  # spin-1 is a quarter counter-clockwise seen from below
        permutation = cube_rotation_permutation(axis, 3)
        for _ in range(turns):
            before = "".join(before[i] for i in permutation)
        assert cube.cube == before


@pytest.mark.parametrize(
    "setup, command, message",
    [
        ((), "turn+1", "turn+1: needs the cover at hold (holding the upper layers), it is open; hold first"),
        (("hold",), "spin+1", "spin+1: needs the cover open, it is at hold (holding the upper layers); release first"),
        (("hold",), "flip", "flip: needs the cover open"),
        ((), "release", "release: the cover is already open"),
        (("hold",), "hold", "hold: the cover is already at hold"),
        (
            ("spin+1",),
            "spin+1",
            "spin+1: the spinner is at +1 and cannot turn further that way; spin-1 or spin-2 instead",
        ),
        ((), "spin+2", "spin+2: the spinner is at home (0) and can turn only 1 quarter turn that way"),
        (
            ("hold", "turn-1"),
            "turn-2",
            "turn-2: the spinner is at -1 and cannot turn further that way; turn+1 or turn+2",
        ),
        ((), "spin+3", "jog 'spin+3': not an op of the flip/spin rig; give one of flip, hold, release, spin+1"),
        ((), "R", "not an op of the flip/spin rig"),
    ],
)
def test_an_op_the_rig_cannot_do_from_here_is_refused_with_the_way_out(build, setup, command, message):
    built = build(rig=FLIP_SPIN)
    for op in setup:
        built.daemon.jog(op)
    before = built.simulation.firmware.cube
    with pytest.raises(RobotError) as caught:
        built.daemon.jog(command)
    assert message in str(caught.value)
    assert built.simulation.firmware.cube == before


def test_the_servo_controllers_faults_have_plain_meanings():
    for code, words in (
        ("TARGET", "a servo did not reach its target"),
        ("PROTOCOL", "the servo controller keeps reporting a serial protocol error"),
        ("SCRIPT", "the servo controller's script stopped with an error"),
    ):
        assert describe_fault(DeviceFault("channel 0 stays at 1400 µs", code=code, port="/dev/x")).startswith(words)


# ---------------------------------------------------------------- the runner: runs and jogs exclude each other

# ---------------------------------------------------------------- rig actions: home, motors, reconnect


def rig_events(built) -> list[dict]:
    events = []
    built.daemon.bus.subscribe(lambda event: events.append(event["data"]) if event["kind"] == "rig" else None)
    return events


def test_robotds_firmware_switches_its_motors_off_and_a_jog_on_again(build):
    built = build()
    board, events = built.simulation.firmware, rig_events(built)
    assert built.daemon.status()["rig_actions"] == ["home", "motors", "reconnect"]
    reply = built.daemon.set_motors(False)
    assert reply["action"] == "motors off" and "turn freely by hand" in reply["message"]
    assert board.info()["enabled"] == [] and built.daemon.status()["motors_on"] is False
    before = board.cube
    built.daemon.jog("R")
    assert board.cube == solver.apply(before, "R")
    assert board.info()["enabled"] == sorted("URFDLB") and built.daemon.status()["motors_on"] is True
    assert [(e["action"], e["outcome"]) for e in events] == [("motors off", "done")]


def test_home_sends_home_to_every_motor_and_says_what_a_board_without_switches_does(build):
    built = build()
    homes = len([step for step in built.simulation.firmware.executed() if step.verb == "HOME"])
    reply = built.daemon.home()
    assert [step.verb for step in built.simulation.firmware.executed()].count("HOME") == homes + 1
    assert "every motor was sent HOME" in reply["message"] and "square the faces by hand" in reply["message"]


def test_reconnect_opens_a_new_session_after_the_board_reset(build):
    built = build()
    link = built.daemon.link_status
    session = link()["handshake"]["session"]
    built.simulation.firmware.reset()
    deadline = time.time() + 10
    while link()["healthy"]:
        assert time.time() < deadline, "the link did not notice the reset"
        time.sleep(0.01)
    reply = built.daemon.reconnect()
    assert reply["action"] == "reconnect" and "a new session with robotd-sim" in reply["message"]
    assert link()["healthy"] and link()["handshake"]["session"] != session
    assert built.simulation.firmware.info()["enabled"] == sorted("URFDLB")


def test_marlin_switches_its_motors_but_has_nothing_to_home_against(build):
    built = build(controller="marlin")
    board = built.simulation.firmware
    assert built.daemon.status()["rig_actions"] == ["motors", "reconnect", "square"]
    with pytest.raises(RobotError, match=r"^home: a Marlin rig has no home switches \(robotd never sends G28\)"):
        built.daemon.home()
    built.daemon.set_motors(False)
    assert board.info()["enabled"] is False
    built.daemon.set_motors(True)
    assert board.info()["enabled"] is True


def test_grblhal_can_only_reconnect_and_square_its_faces(build):
    built = build(controller="grblhal")
    assert built.daemon.status()["rig_actions"] == ["reconnect", "square"]
    assert built.daemon.square()["message"] == "every face was square: nothing to turn"
    with pytest.raises(RobotError, match=r"^home: a grblHAL rig has no home switches"):
        built.daemon.home()
    with pytest.raises(RobotError, match=r"^motors off: grblHAL switches its drivers itself"):
        built.daemon.set_motors(False)
    assert "a new session with grblHAL" in built.daemon.reconnect()["message"]


def test_flip_spin_home_brings_the_base_back_and_the_next_run_still_solves(build):
    built = build(rig=FLIP_SPIN, two_phase=True)
    mechanism = built.simulation.firmware.mechanism
    for op in ("spin+1", "hold"):
        built.daemon.jog(op)
    assert (mechanism.spinner, mechanism.cover) == (1, "hold")
    reply = built.daemon.home()
    assert reply["message"] == "cover open, base at its home end-point (release then spin-1)"
    assert (mechanism.spinner, mechanism.cover) == (0, "open")
    summary = built.once(puzzle=3, seed=2)  # the cube turned with the base: the rig kept track of it
    assert summary["outcome"] == "done" and summary["solved"], summary.get("error")


def test_flip_spin_servos_off_and_on(build):
    built = build(rig=FLIP_SPIN)
    board = built.simulation.firmware
    built.daemon.set_motors(False)
    assert board.info()["targets"][:2] == [0, 0] and built.daemon.status()["motors_on"] is False
    built.daemon.set_motors(True)
    assert all(board.info()["targets"][:2]) and built.simulation.firmware.mechanism.cover == "open"
    assert built.daemon.jog("flip")["outcome"] == "done"


class HeldMotion:
    """A motion whose jog waits until released (or e-stopped): a jog caught in the middle."""

    def __init__(self):
        self.started, self.release, self.halted = threading.Event(), threading.Event(), threading.Event()
        self.jogged = []

    def arm(self):
        self.halted.clear()

    def jog(self, command):
        self.started.set()
        while not self.release.wait(0.005):
            if self.halted.is_set():
                raise Stopped("emergency stop")
        self.jogged.append(command)

    def jog_commands(self):
        return ["R"]

    def run_plan(self, plan, on_done):
        raise AssertionError("no run may start during a jog")

    def estop(self):
        self.halted.set()


def held_runner(tmp_path):
    bus = EventBus()
    events = []
    bus.subscribe(events.append)
    motion = HeldMotion()
    runner = Runner(
        motion, motion, rig_from_config(Config({}).section("rig")), History(tmp_path / "h.sqlite"), bus, RunSettings()
    )
    return runner, motion, events


def jog_in_background(runner, command):
    outcome = {}

    def jog():
        try:
            outcome["reply"] = runner.jog(command)
        except RobotError as error:
            outcome["error"] = error

    thread = threading.Thread(target=jog)
    thread.start()
    return thread, outcome


def test_a_run_or_another_jog_cannot_start_during_a_jog(tmp_path):
    runner, motion, events = held_runner(tmp_path)
    thread, outcome = jog_in_background(runner, "R")
    assert motion.started.wait(10)
    assert runner.status()["jogging"] == "R"
    with pytest.raises(RobotError, match=r"a jog \(R\) is in progress: start the run once it has ended"):
        runner.start()
    with pytest.raises(RobotError, match=r"a jog \(R\) is in progress"):
        runner.jog("R")
    motion.release.set()
    thread.join(10)
    assert outcome["reply"]["outcome"] == "done" and motion.jogged == ["R"]
    assert runner.jogging is None and runner.phase == "idle" and runner.history.list_runs() == []
    assert [(e["kind"], e["run_id"], e["data"]["outcome"]) for e in events] == [("jog", None, "done")]
    runner.close()


def test_stop_halts_a_jog(tmp_path):
    runner, motion, events = held_runner(tmp_path)
    thread, outcome = jog_in_background(runner, "R")
    assert motion.started.wait(10)
    runner.stop("stop from the dashboard")
    thread.join(10)
    assert isinstance(outcome["error"], Stopped) and motion.halted.is_set() and motion.jogged == []
    assert sorted(e["kind"] for e in events) == ["jog", "stop_requested"]  # either order: e-stop goes first
    jog = next(e for e in events if e["kind"] == "jog")
    assert jog["data"]["outcome"] == "stopped" and runner.jogging is None
    runner.close()


def test_a_motion_without_jog_says_so(tmp_path):
    runner, _, _ = held_runner(tmp_path)
    runner.motion = object()
    assert runner.jog_commands() == []
    with pytest.raises(RobotError, match="cannot jog"):
        runner.jog("R")
    runner.close()
