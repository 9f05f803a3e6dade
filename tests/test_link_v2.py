"""Protocol version 2 over a real pyserial port against the simulated firmware: negotiation, PLAN, MOTOR, JOG.

Version-1 behaviour is covered by test_link.py; here the host speaks version 2
to a version-2 simulator, and falls back against a version-1-only one.
"""

import random
import time

import pytest

from firmware_interface import ConfigError, DeviceFault, RigLink, SimulatedFirmware
from firmware_interface.steps import Step
from solver import apply
from solver.puzzles.cube.cubie import solved_facelets
from solver.puzzles.cube.geometry import FACES, OPPOSITE

FAST = {"quarter_ms": 2, "half_ms": 3, "home_ms": 5}
SOLVED = solved_facelets(3)
_NOTATION = {1: "", -1: "'", 2: "2", -2: "2"}


@pytest.fixture
def sims():
    started = []

    def make(**kwargs) -> SimulatedFirmware:
        sim = SimulatedFirmware(**{"timing": FAST, **kwargs})
        sim.start()
        started.append(sim)
        return sim

    yield make
    for sim in started:
        sim.stop()


def turns_of(sim):
    return [s for s in sim.executed() if s.verb in ("TURN", "PAIR")]


def sent_frames(trace, verb):
    """Distinct sequenced frames of ``verb`` the host sent, by sequence number (resends counted once)."""
    frames = {}
    for line in trace.read_text().splitlines():
        parts = line.rpartition("*")[0].split(" ")
        if len(parts) > 3 and parts[1] == ">" and parts[3] == verb:
            frames[int(parts[2])] = parts[4:]
    return [frames[k] for k in sorted(frames)]


def random_plan(n, seed, pairs=True):
    """``n`` plan entries (single turns and opposite pairs) and the same moves in solver notation."""
    rng = random.Random(seed)
    entries, notation = [], []
    for _ in range(n):
        face, q = rng.choice(FACES), rng.choice((-2, -1, 1, 2))
        if pairs and rng.random() < 0.2:
            other, q2 = OPPOSITE[face], rng.choice((-1, 1, 2))
            entries.append(((face, q), (other, q2)))
            notation += [face + _NOTATION[q], other + _NOTATION[q2]]
        else:
            entries.append((face, q))
            notation.append(face + _NOTATION[q])
    return entries, " ".join(notation)


# ---------------------------------------------------------------- negotiation


def test_v2_handshake_fields(sims, connect):
    sim = sims()
    link = connect(sim.path, enable=False)
    info = link.info
    assert info["protocol"] == 3 and info["plan"] == 16 and info["rate"] == 40000 and info["queue"] == 16
    big = sims(queue=64)
    assert connect(big.path, enable=False).info["plan"] == 48


def test_v2_host_falls_back_to_a_v1_only_device(sims, connect, tmp_path):
    sim = sims(protocol=1)
    trace = tmp_path / "trace.log"
    link = connect(sim.path, trace=trace)
    assert link.info["protocol"] == 1 and link.info["plan"] is None and link.info["rate"] is None
    entries, notation = random_plan(12, seed=1)
    motions = link.plan(entries)
    results = link.wait(motions, timeout=5)
    assert [r["mid"] for r in results] == [s.mid for s in turns_of(sim)]
    assert sim.cube == apply(SOLVED, notation)
    text = trace.read_text()
    assert "HELLO proto=3" in text and "HELLO proto=1" in text and " PLAN " not in text
    assert len(sent_frames(trace, "TURN")) + len(sent_frames(trace, "PAIR")) == 12
    for call in (lambda: link.setup_motor("U", 400, 8000, 200000), lambda: link.jog({"U": 10})):
        with pytest.raises(ConfigError, match="needs protocol version 2.*version-1 session"):
            call()
    assert link.status()["healthy"]


# ---------------------------------------------------------------- PLAN


def test_a_25_move_solution_goes_in_two_plan_frames(sims, connect, tmp_path):
    """The first frame carries one turn, so the motors start after the shortest time on the wire."""
    sim = sims(queue=64)
    trace = tmp_path / "trace.log"
    link = connect(sim.path, trace=trace)
    entries, notation = random_plan(25, seed=5, pairs=False)
    done = []
    motions = link.plan(entries)
    for m in motions:
        m.completed.add_done_callback(lambda f, m=m: done.append(m.mid))
    results = link.wait(motions, timeout=5)
    plans = sent_frames(trace, "PLAN")
    assert [len(p) for p in plans] == [2, 25]  # first motion id and its turns
    assert [r["mid"] for r in results] == [m.mid for m in motions] == [s.mid for s in turns_of(sim)]
    assert sorted(done) == done == [m.mid for m in motions]
    assert results[0]["command"] == f"TURN {entries[0][0]} {entries[0][1]}"
    assert sim.cube == apply(SOLVED, notation)
    assert link.status()["counters"]["frames_sent"] < 20


def test_a_plan_larger_than_the_queue_is_split_and_flow_controlled(sims, connect, tmp_path):
    sim = sims()  # queue 16
    trace = tmp_path / "trace.log"
    link = connect(sim.path, trace=trace)
    entries, notation = random_plan(70, seed=6)
    motions = link.plan(entries)
    status = link.status()
    assert status["on_device"] <= 16 and status["backlog"] >= 70 - 16
    link.wait(motions, timeout=10)
    plans = sent_frames(trace, "PLAN")
    assert 2 <= len(plans) < 20 and sum(len(p) - 1 for p in plans) == 70
    assert all(len(p) - 1 <= 16 for p in plans)
    assert [s.mid for s in turns_of(sim)] == [m.mid for m in motions]
    assert sim.cube == apply(SOLVED, notation)
    assert link.status()["healthy"] and link.query()["fault"] is None  # never QFULL


def test_a_plan_frame_is_limited_by_the_frame_size(sims, connect, tmp_path):
    sim = sims(queue=64)
    trace = tmp_path / "trace.log"
    link = connect(sim.path, trace=trace)
    entries = [(("U", -1), ("D", -1))] * 40  # 5 characters a turn: > 200 bytes
    link.wait(link.plan(entries), timeout=5)
    plans = sent_frames(trace, "PLAN")
    assert len(plans) == 3 and len(plans[0]) == 2 and sum(len(p) - 1 for p in plans) == 40  # one turn first
    assert all(len(" ".join(p)) < 200 for p in plans)


def test_plan_exactly_once_through_a_lossy_line(sims, connect):
    sim = sims(
        faults={"drop": 0.1, "corrupt": 0.02, "duplicate": 0.05, "to_device": {"drop": 0.25}, "seed": 11},
        timing={"quarter_ms": 0, "half_ms": 0, "home_ms": 0},
    )
    link = connect(sim.path)
    entries, notation = random_plan(300, seed=7)
    motions = link.plan(entries)
    link.wait(timeout=30)
    assert [s.mid for s in turns_of(sim)] == [m.mid for m in motions]
    assert sim.cube == apply(SOLVED, notation)
    info = sim.info()
    assert link.status()["counters"]["retransmissions"] > 0
    assert info["to_device"]["dropped"] > 0 and info["to_host"]["duplicated"] > 0


def test_a_bad_plan_entry_sends_nothing(sims, connect):
    sim = sims()
    link = connect(sim.path)
    for entries, words in [
        ([("U", 1), ("X", 1)], "'X' is no motor"),
        ([("U", 3)], "-2 -1 1 2"),
        ([(("U", 1), ("R", 1))], "not opposite"),
        (["U1"], "plan entry"),
    ]:
        with pytest.raises(ConfigError, match=words):
            link.plan(entries)
    assert link.status()["on_device"] == 0 and len(sim.executed()) == 1  # ENABLE only
    assert link.plan([]) == []


def test_estop_mid_plan_empties_the_queue_and_turns_the_drivers_off(sims, connect):
    sim = sims(timing={"quarter_ms": 40, "half_ms": 60})
    link = connect(sim.path)
    entries, _ = random_plan(40, seed=8)
    motions = link.plan(entries)
    motions[1].wait(5)
    ack = link.estop()
    info = sim.info()
    assert info["queued"] == 0 and info["enabled"] == [] and info["fault"] == "ESTOP"
    ran = [m for m in motions if m.completed.exception() is None]
    assert ack["done_through"] == ran[-1].mid and len(ran) == len(turns_of(sim)) < len(motions)
    assert all(m.completed.exception().code == "ESTOP" for m in motions[len(ran) :])
    assert link.query()["enabled"] == []
    link.clear()
    with pytest.raises(DeviceFault, match="DISABLED"):  # drivers stay off until ENABLE
        link.turn("U", 1).wait(5)
    link.clear()
    link.enable()
    link.plan([("U", 1), ("U", -1)])
    link.wait(timeout=5)


# ---------------------------------------------------------------- MOTOR and JOG


def _turn_time(link, face):
    start = time.monotonic()
    link.turn(face, 1).wait(5)
    return time.monotonic() - start


def test_motor_setup_changes_the_turn_time(sims, connect):
    sim = sims()
    link = connect(sim.path)
    assert _turn_time(link, "R") < 0.15  # MotorTiming: 2 ms
    link.setup_motor("R", steps=200, rate=1000, accel=10000, direction=-1).wait(5)
    assert sim.info()["motor_setup"]["R"] == (200, 1000, 100, -1, 0)  # version 3: overlap=0
    slow = _turn_time(link, "R")  # 200/1000 + 1000/10000 = 0.3 s
    assert 0.28 <= slow < 1.0
    assert _turn_time(link, "L") < 0.15  # other motors unchanged
    link.setup_motor("U", 400, 8000, 150).wait(5)  # 150 steps/s² → 2 hundreds
    assert sim.info()["motor_setup"]["U"] == (400, 8000, 2, 1, 0)
    assert sim.cube == apply(SOLVED, "R R L")


def test_bad_motor_arguments(sims, connect):
    sim = sims()
    link = connect(sim.path)
    for kwargs, words in [
        ({"steps": 0}, "steps per quarter turn.*1..20000"),
        ({"steps": 2.5}, "whole number"),
        ({"rate": 40001}, "rate.*1..40000"),
        ({"accel": 0}, "accel.*above 0"),
        ({"accel": 7_000_000}, "at most 6553500"),
        ({"direction": 0}, "1 or -1"),
        ({"motor": "X"}, "'X' is no motor"),
    ]:
        args = {"motor": "U", "steps": 400, "rate": 8000, "accel": 200000, "direction": 1, **kwargs}
        with pytest.raises(ConfigError, match=words):
            link.setup_motor(**args)
    for steps, words in [({"U": 0}, "not 0"), ({"U": 40000}, "-32767..32767"), ({}, "mapping"), ({"Q": 5}, "no motor")]:
        with pytest.raises(ConfigError, match=words):
            link.jog(steps)
    assert link.status()["healthy"]
    bad = link._submit(lambda mid: Step("MOTOR", mid, motors=("U",), setup=(400, 8000, 0, 1)))  # past the checks
    with pytest.raises(DeviceFault, match="BADARG.*accel must be 1..65535") as caught:
        bad.wait(5)
    assert caught.value.code == "BADARG"


def test_jog_moves_no_face(sims, connect):
    sim = sims()
    link = connect(sim.path)
    link.setup_motor("U", 400, 8000, 200000).wait(5)
    result = link.jog({"U": 37, "D": -5}).wait(5)
    assert result["command"] == "JOG U 37 D -5"
    assert sim.executed()[-1] == Step("JOG", result["mid"], (("U", 37), ("D", -5)))
    assert sim.cube == SOLVED
    link.turn("U", 1).wait(5)
    assert sim.cube == apply(SOLVED, "U")


# ---------------------------------------------------------------- robotd: LinkMotion and [rig.stepper]


def _rig(tmp_path, text):
    from robot.config import Config
    from robot.rig import rig_from_config

    path = tmp_path / "robotd.toml"
    path.write_text(text)
    config = Config.load(path)
    rig = rig_from_config(config.section("rig"))
    config.check_unused()
    return rig


STEPPER_RIG = """[rig]
quarter_turn_s = 0.05
half_turn_s = 0.08
settle_s = 0.0
[rig.direction]
U = 1
R = -1
F = 1
D = 1
L = 1
B = 1
[rig.stepper]
max_rate = 30000
accel = 1999950
[rig.stepper.steps_per_quarter]
U = 400
R = 800
F = 400
D = 400
L = 400
B = 400
"""


def test_rig_stepper_config_is_read_and_checked(tmp_path):
    from robot.errors import ConfigError as RobotConfigError

    rig = _rig(tmp_path, STEPPER_RIG)
    assert rig.stepper["R"] == (800, 30000, 1999950) and rig.stepper["U"] == (400, 30000, 1999950)
    assert _rig(tmp_path, "[rig]\n").stepper is None
    for text, words in [
        (
            "[rig.stepper]\nsteps_per_quarter = 400\nmax_rate = 100\naccel = 5\nspeed = 3\n",
            r":5: \[rig.stepper\] speed: unknown option "
            r"\(known here: accel, max_rate, steps_per_quarter\)",
        ),
        (
            "[rig.stepper]\nsteps_per_quarter = 0\nmax_rate = 100\naccel = 5\n",
            r":2: \[rig.stepper\] steps_per_quarter: must be a whole number of steps 1..20000",
        ),
        (
            "[rig.stepper]\nsteps_per_quarter = 400\nmax_rate = 100\n",
            r":1: \[rig.stepper\] accel: required option is missing",
        ),
        (
            "[rig.stepper]\nsteps_per_quarter = 400\naccel = 5\n[rig.stepper.max_rate]\nU = 1\n",
            r"max_rate\]?:? needs all six faces",
        ),
    ]:
        with pytest.raises(RobotConfigError, match=words):
            _rig(tmp_path, text)


@pytest.mark.parametrize("protocol", [1, 2, 3])
def test_link_motion_sets_motors_up_and_applies_the_direction_once(sims, tmp_path, protocol):
    from robot.motion import LinkMotion
    from solver.puzzles.cube.notation import parse_moves

    sim = sims(protocol=protocol)
    rig = _rig(tmp_path, STEPPER_RIG)
    trace = tmp_path / "trace.log"
    link = RigLink(sim.path, trace=trace)
    try:
        motion = LinkMotion(link, rig.motors, rig=rig)
        motion.connect()
        plan = rig.plan(parse_moves("R U D' F2 R'"))
        done = []
        motion.run_plan(plan, done.append)
        assert done == list(range(len(plan))) == [0, 1, 2, 3]  # U D' go as one PAIR
    finally:
        link.close()
    setup = sim.info()["motor_setup"]
    if protocol >= 2:  # the firmware reverses R (the simulator's cube sees face turns as sent)
        assert motion.device_direction
        # version 3: overlap= from the default overlap_deg, 15°: 133 of 800 steps, 66 of 400
        overlap = ((133,), (66,)) if protocol == 3 else ((), ())
        assert setup["R"] == (800, 30000, 20000, -1, *overlap[0]) and setup["U"] == (400, 30000, 20000, 1, *overlap[1])
        assert sim.cube == apply(SOLVED, "R U D' F2 R'") and len(sent_frames(trace, "PLAN")) == 2
        assert [args[1:] for args in sent_frames(trace, "SPEED")] == [["50"]]
    else:  # the host flips R's turns; a version-1 device knows nothing of it
        assert not motion.device_direction and setup == {}
        assert sim.cube == apply(SOLVED, "R' U D' F2 R") and " PLAN " not in trace.read_text()


def test_link_motion_without_stepper_sends_no_motor(sims, tmp_path):
    from robot.motion import LinkMotion

    sim = sims()
    rig = _rig(tmp_path, "[rig]\n[rig.direction]\nU = -1\nR = 1\nF = 1\nD = 1\nL = 1\nB = 1\n")
    link = RigLink(sim.path)
    try:
        motion = LinkMotion(link, rig.motors, rig=rig)
        motion.connect()
        from solver.puzzles.cube.notation import parse_moves

        motion.run_plan(rig.plan(parse_moves("U R")), lambda i: None)
        motion.estop()
        time.sleep(0.05)
        motion.arm()  # a new operation: the stop no longer refuses it
        motion.run_plan(rig.plan(parse_moves("R'")), lambda i: None)  # clears, re-enables the drivers
    finally:
        link.close()
    assert sim.info()["motor_setup"] == {} and sim.cube == apply(SOLVED, "U' R R'")
