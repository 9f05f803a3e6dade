"""Overlapping turns (protocol version 3): the timing model, the reference device, the AVR firmware and the cube.

A turn of an adjacent face starts once every motor still turning has no more
than its ``overlap=`` steps left; the simulated cubes jam when a face starts
turning while an adjacent one is further than their tolerance from aligned.
"""

import time
from pathlib import Path

import pytest
import serial

import devices
from firmware_interface import RigLink, SimulatedFirmware
from firmware_interface.robotd.avr import AvrFirmware
from firmware_interface.robotd.overlap import Ramp, overlap_steps, profile_seconds, schedule
from firmware_interface.robotd.protocol import Ack, Command, Done, FaultReport, Hello, Rej
from firmware_interface.virtual_cube import CORNER_CUTTING_DEG
from robot.six_axis import SixAxisRig
from solver import apply, scramble, solve
from solver.puzzles.cube.cubie import solved_facelets
from solver.puzzles.cube.geometry import FACES, OPPOSITE
from solver.puzzles.cube.notation import format_moves, parse_moves
from test_protocol import Device

SOLVED = solved_facelets(3)
STEPS, RATE, ACCEL = 200, 8000, 160_000  # a 71 ms quarter turn (a triangle)


def opposite(a: str, b: str) -> bool:
    return OPPOSITE[a] == b


def quarter() -> Ramp:
    return Ramp(STEPS, RATE, ACCEL)


# ---------------------------------------------------------------- the timing model


def test_a_ramp_is_the_trapezoid_of_section_16():
    for ramp in (Ramp(800, 8000, 160_000), Ramp(200, 8000, 160_000), Ramp(1600, 8000, 40_000)):
        assert ramp.time_at(ramp.steps) == pytest.approx(ramp.seconds)
        assert ramp.seconds == pytest.approx(profile_seconds(ramp.steps, ramp.rate, ramp.accel))
        for done in (1, ramp.steps / 3, ramp.steps / 2, ramp.steps - 7):
            assert ramp.steps_left(ramp.time_at(done)) == pytest.approx(ramp.steps - done)


def test_overlap_steps_stay_within_the_angle():
    assert overlap_steps(15, 800) == 133 and overlap_steps(15, 200) == 33 and overlap_steps(0, 800) == 0
    assert overlap_steps(90, 50) == 50 and overlap_steps(45, 3) == 1


def test_who_waits_for_whom():
    q = quarter()
    overlap = {f: 33 for f in FACES}
    _, u, f = schedule([{"R": q}, {"U": q}, {"F": q}], overlap, opposite)
    assert u[0] == pytest.approx(q.time_at(STEPS - 33))  # U: once R is within 33 steps of aligned
    assert f[0] == pytest.approx(u[0] + q.time_at(STEPS - 33))  # F: once U is (R is long done)
    _, u, d = schedule([{"R": q}, {"U": q}, {"D": q}], overlap, opposite)
    assert d[0] == pytest.approx(u[0])  # D with U: R let both go, U is opposite
    same = schedule([{"R": q}, {"R": q}], overlap, opposite)
    assert same[1][0] == pytest.approx(q.seconds)  # the same motor must stop first
    across = schedule([{"U": q}, {"D": q}], overlap, opposite)
    assert across[1][0] == 0  # an opposite face never waits
    none = schedule([{"R": q}, {"U": q}], {}, opposite)
    assert none[1][0] == pytest.approx(q.seconds)  # overlap 0: one turn after the other


def test_the_rig_estimate_overlaps_with_stepper_only():
    moves = parse_moves("R U2 F' U D' R' B2")

    def rig(overlap_deg, stepper=True):
        return SixAxisRig(
            {f: f for f in FACES},
            {f: 1 for f in FACES},
            0.15,
            0.25,
            0.02,
            True,
            stepper={f: (800, 8000, 160_000.0) for f in FACES} if stepper else None,
            overlap_deg=overlap_deg,
        )

    sequential, overlapped = rig(0).planned_s(moves), rig(15).planned_s(moves)
    assert sequential == pytest.approx(4 * 0.15 + 2 * 0.25)  # n/v + v/A each, U D' as one
    assert sequential - overlapped > 5 * 0.03  # five adjacent hand-overs, ~41 ms each at 15°
    assert rig(15, stepper=False).planned_s(moves) == rig(0, stepper=False).planned_s(moves)


# ---------------------------------------------------------------- the reference device


def _device(overlap: int, proto: int = 3, jam_deg: float | None = None) -> Device:
    device = Device(proto=3, quarter_ms=0, half_ms=0)  # no SPEED limit: the motors' own rate
    device.fw.jam_deg = jam_deg
    device.session(proto=proto)
    extra = (f"overlap={overlap}",) if proto >= 3 else ()
    for seq, face in enumerate(FACES, 101):
        args = (str(seq - 99), face, f"steps={STEPS}", f"rate={RATE}", f"accel={ACCEL // 100}", "dir=1", *extra)
        assert device.send(Command(seq, "MOTOR", args).encode()) == [Ack(seq)]
    device.run(0.01)
    return device


def _run_plan(device: Device, turns: tuple[str, ...]) -> dict[int, float]:
    """Send a PLAN from motion id 8; the time of each DONE since it was sent."""
    start = device.now
    device.send(Command(107, "PLAN", ("8", *turns)).encode())
    done = {}
    for _ in range(400):
        done.update({m.mid: device.now - start for m in device.run(0.005) if isinstance(m, Done)})
    return done


def test_the_device_overlaps_adjacent_turns_as_the_model_says():
    turns = ("R1", "U2", "F-1", "U1D-1", "L1")
    done = _run_plan(_device(overlap_steps(15, STEPS)), turns)
    q, h = quarter(), Ramp(2 * STEPS, RATE, ACCEL)
    model = schedule([{"R": q}, {"U": h}, {"F": q}, {"U": q, "D": q}, {"L": q}], {f: 33 for f in FACES}, opposite)
    assert sorted(done) == [8, 9, 10, 11, 12]
    assert 0 <= done[12] - model[-1][1] <= 0.0101  # the device ticks every 5 ms here: start and DONE a tick late
    sequential = _run_plan(_device(0), turns)
    assert 0 <= sequential[12] - (4 * q.seconds + h.seconds) <= 6 * 0.0051  # each turn a tick late at most
    assert sequential[12] - done[12] > 4 * 0.02


def test_the_device_cube_jams_beyond_its_tolerance():
    device = _device(overlap_steps(15, STEPS), jam_deg=10)
    device.send(Command(107, "PLAN", ("8", "R1", "U1")).encode())
    out = device.run(0.3)
    fault = [m for m in out if isinstance(m, FaultReport)]
    assert fault and fault[0].code == "STALL" and fault[0].motor == "U" and fault[0].mid == 9
    assert not [m for m in out if isinstance(m, Done)] and device.fw.cube.facelets == SOLVED


def test_a_version_2_session_neither_takes_overlap_nor_overlaps():
    device = Device(proto=3)
    device.session(proto=2)
    args = ("2", "U", "steps=200", "rate=8000", "accel=1600", "dir=1", "overlap=10")
    reply = device.send(Command(101, "MOTOR", args).encode())[0]
    assert isinstance(reply, Rej) and reply.code == "BADARG"
    done = _run_plan(_device(33, proto=2), ("R1", "U1", "D1"))
    assert 0 <= done[10] - 3 * quarter().seconds <= 4 * 0.0051  # one after the other, each a tick late at most


# ---------------------------------------------------------------- the AVR firmware under simavr

AVR_STEPS = 100
AVR_MOTOR = {"steps": AVR_STEPS, "rate": 20000, "accel": 1_000_000}  # a 20 ms quarter turn


def _avr_rig(overlap_deg: float) -> SixAxisRig:
    stepper = {f: (AVR_STEPS, AVR_MOTOR["rate"], float(AVR_MOTOR["accel"])) for f in FACES}
    # quarter_turn_s below the motors' 20 ms: no SPEED limit, as the link here sends no SPEED
    return SixAxisRig(
        {f: f for f in FACES}, {f: 1 for f in FACES}, 0.01, 0.02, 0.0, True, stepper=stepper, overlap_deg=overlap_deg
    )


def _avr_solve(jam_deg: float, overlap_deg: float, moves: list[list[int]], trace: Path | None = None):
    devices.require_avr()
    board = AvrFirmware(steps_per_quarter=AVR_STEPS, jam_deg=jam_deg, trace=trace)
    rig = _avr_rig(overlap_deg)
    try:
        with RigLink(board.start()) as link:
            link.connect()
            overlap = overlap_steps(overlap_deg, AVR_STEPS)
            setup = [link.setup_motor(f, **AVR_MOTOR, direction=1, overlap=overlap) for f in FACES]
            link.wait([link.enable(), *setup], timeout=5)
            assert link.info["protocol"] == 3
            for solution in moves:
                plan = [[(t.motor, t.quarter_turns) for t in c.turns] for c in rig.plan(solution)]
                link.wait(link.plan([t[0] if len(t) == 1 else tuple(t) for t in plan]), timeout=20)
        return board.jams(), board.cube
    finally:
        board.stop()


def _solutions(count: int) -> list[list[int]]:
    solutions = [solve(scramble(3, seed=300 + i)["state"], budget_s=0.3) for i in range(count)]
    assert all(solution.found for solution in solutions)
    return [parse_moves(solution.text) for solution in solutions]


def test_avr_turns_overlap_on_time_and_never_jam_at_the_default(tmp_path):
    for n, solution in enumerate(_solutions(2)):
        trace = tmp_path / f"trace{n}"
        jams, cube = _avr_solve(CORNER_CUTTING_DEG, CORNER_CUTTING_DEG, [solution], trace)
        assert jams == [] and cube == apply(SOLVED, format_moves(solution))
        edges = [line.split()[1:3] for line in trace.read_text().splitlines() if line.startswith("S ")]
        axes = [int(axis) for _, axis in edges]
        # a step of one face between two of an adjacent face: the next turn began before the last one ended
        triples = zip(axes, axes[1:], axes[2:])
        assert sum(1 for a, b, c in triples if a == c != b and not opposite(FACES[a], FACES[b])) > 5
        # each turn starts when the protocol says (the same face coming back must not hold a later turn up)
        motor_s = (int(edges[-1][0]) - int(edges[0][0])) / 16e6
        assert motor_s == pytest.approx(_avr_rig(CORNER_CUTTING_DEG).planned_s(solution), rel=0.03)


def test_avr_cube_jams_when_the_overlap_exceeds_its_tolerance():
    jams, cube = _avr_solve(5.0, CORNER_CUTTING_DEG, [parse_moves("R U F")])
    assert jams and jams[0][:2] == ("U", "R") and 5.0 < jams[0][2] <= CORNER_CUTTING_DEG
    assert cube != apply(SOLVED, "R U F")


def test_overlap_deg_is_read_and_checked(tmp_path):
    from robot.errors import ConfigError as RobotConfigError
    from test_link_v2 import _rig

    assert _rig(tmp_path, "[rig]\n").overlap_deg == CORNER_CUTTING_DEG == 15
    assert _rig(tmp_path, "[rig]\noverlap_deg = 7.5\n").overlap_deg == 7.5
    for value in ("-1", "46", '"a lot"'):
        with pytest.raises(RobotConfigError, match=r":2: \[rig\] overlap_deg"):
            _rig(tmp_path, f"[rig]\noverlap_deg = {value}\n")


def test_a_version_2_device_gets_motor_without_overlap():
    sim = SimulatedFirmware(timing={"quarter_ms": 2, "half_ms": 3}, protocol=2)
    sim.start()
    try:
        with RigLink(sim.path) as link:
            assert link.connect()["protocol"] == 2
            link.setup_motor("U", 200, 8000, 160_000, 1, overlap=33).wait(5)
    finally:
        sim.stop()
    assert sim.info()["motor_setup"]["U"] == (200, 8000, 1600, 1)


def test_avr_a_version_2_host_gets_a_session_without_overlap():
    devices.require_avr()
    board = AvrFirmware(steps_per_quarter=AVR_STEPS)
    board.start()
    try:
        with serial.Serial(board.path, 115200, timeout=0.1) as raw:
            reply, deadline = b"", time.monotonic() + 3
            while b"session=0000BEEF" not in reply and time.monotonic() < deadline:
                raw.write(Hello(2, "0000BEEF", 100).encode())
                reply = devices.read_line(raw)
            assert b" proto=2 " in reply and b"fw=robotd-avr/3.0" in reply
            args = ("1", "U", "steps=100", "rate=20000", "accel=100", "dir=1", "overlap=10")
            raw.write(Command(100, "MOTOR", args).encode())
            lines = [devices.read_line(raw) for _ in range(5)]
            assert any(line.startswith(b"REJ 100 BADARG") for line in lines)
    finally:
        board.stop()
