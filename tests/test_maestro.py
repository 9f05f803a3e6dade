"""The Maestro compact protocol (maestro.py), MaestroLink, SimulatedMaestro and the flip/spin mechanism."""

import random
import time

import numpy as np
import pytest

from firmware_interface import DeviceFault, DeviceReset, DeviceSilent, HandshakeError, PortError
from firmware_interface.flipspin_mechanism import FlipSpinMechanism
from firmware_interface.maestro import dialect as mp
from firmware_interface.maestro.link import MaestroLink, MaestroTiming
from firmware_interface.maestro.simulator import SimulatedMaestro
from solver import apply, scramble
from solver.puzzles.cube.cubie import solved_facelets
from solver.puzzles.cube.geometry import cube_rotation_permutation

SPIN, COVER = 0, 1
SLEW = 100.0  # µs per ms: a 500 µs servo move takes 5 ms
SUFFIX = {1: "", 2: "2", 3: "'"}


# ---------------------------------------------------------------- codec


def test_commands_encode_as_documented():
    # the manual's example: channel 2 to 1500 µs = 6000 quarter-µs
    assert mp.set_target(2, 6000) == bytes((0x84, 0x02, 0x70, 0x2E))
    assert mp.set_target(0, 0) == bytes((0x84, 0, 0, 0))
    assert mp.set_speed(1, 140) == bytes((0x87, 1, 140 & 0x7F, 140 >> 7))
    assert mp.set_accel(5, 255) == bytes((0x89, 5, 0x7F, 0x01))
    assert mp.get_position(3) == b"\x90\x03"
    assert mp.simple(mp.GET_MOVING) == b"\x93" and mp.simple(mp.GET_ERRORS) == b"\xa1"
    assert mp.simple(mp.GO_HOME) == b"\xa2"
    assert mp.word(bytes((0x70, 0x17))) == 6000
    for bad in (lambda: mp.set_target(0, 0x4000), lambda: mp.set_accel(0, 256), lambda: mp.get_position(128)):
        with pytest.raises(ValueError):
            bad()


def test_crc7_matches_the_manual():
    assert mp.crc7(bytes((0x83, 0x01))) == 0x17
    assert mp.crc7(bytes((0xAA, 0x01, 0x10, 0x00))) == 0x6B
    with_crc = mp.set_target(0, 6000, crc=True)
    assert with_crc[:4] == mp.set_target(0, 6000) and with_crc[4] == mp.crc7(with_crc[:4]) < 0x80


def test_every_error_bit_has_a_clear_message():
    for bit, (name, meaning) in mp.ERROR_BITS.items():
        text = mp.describe_errors(1 << bit)
        assert name in text and meaning in text and f"bit {bit}" in text
    assert mp.error_names(0b1_0001_0001) == [
        "serial signal error",
        "serial protocol error",
        "script program counter error",
    ]
    assert mp.describe_errors(0) == "" and mp.ERROR_MASK == 0x1FF


def test_parser_resynchronises_and_flags_malformed_input():
    parser = mp.CommandParser()
    assert parser.feed(mp.set_target(1, 6000)) == [mp.Command(0x84, (1, 0x70, 0x2E))]
    assert parser.errors == 0
    # a lost byte: the command is cut short by the next command byte, which is then read as it should be
    assert parser.feed(mp.set_target(1, 6000)[:3] + mp.get_position(1)) == [mp.Command(0x90, (1,))]
    assert parser.errors == mp.PROTOCOL_ERROR
    parser.errors = 0
    assert parser.feed(b"\x05\x06") == [] and parser.errors == mp.PROTOCOL_ERROR  # data where a command belongs
    parser.errors = 0
    assert parser.feed(b"\xff") == [] and parser.errors == mp.PROTOCOL_ERROR  # unknown command
    checked = mp.CommandParser(crc=True)
    damaged = bytearray(mp.set_target(0, 7000, crc=True))
    damaged[2] ^= 0x01
    assert checked.feed(bytes(damaged)) == [] and checked.errors == mp.CRC_ERROR
    assert checked.feed(mp.set_target(0, 7000, crc=True))[0].value == 7000


# ---------------------------------------------------------------- the mechanism on its own


def drive(mech, servo, point, steps=7, off=False):
    """Move a servo's horn to an end-point in small steps, as the simulator reports it."""
    channel = mech.channels[servo]
    start = mech.horns[servo]
    end = mech.end_points[servo][point] if point is not None else start
    for k in range(1, steps + 1):
        mech.servo_moved({channel: start + (end - start) * k / steps}, 0.0)
    if off:
        mech.servo_moved({channel: None}, 0.0)


def at_rest(mech):
    mech.servo_moved({SPIN: mech.end_points["spin"][0], COVER: mech.end_points["cover"]["open"]}, 0.0)
    return mech


def rotate(state, face, times=1):
    stickers = np.frombuffer(state.encode(), dtype=np.uint8)
    perm = cube_rotation_permutation(face, 3 if len(state) == 54 else 2)
    for _ in range(times % 4):
        stickers = stickers[perm]
    return stickers.tobytes().decode()


@pytest.mark.parametrize("size", [2, 3])
def test_mechanism_turns_the_cube_as_the_spec_says(size):
    start = scramble(size, seed=3)["state"]
    mech = at_rest(FlipSpinMechanism(start, size=size))
    expected = start
    drive(mech, "cover", "hold")
    drive(mech, "spin", 1)  # held: the bottom layer turns
    expected = apply(expected, "D")
    assert mech.cube == expected and mech.spinner == 1 and mech.cover == "hold"
    drive(mech, "cover", "open")
    drive(mech, "spin", -1)  # free, -1 to +1 the other way: whole cube twice
    expected = rotate(expected, "D", -2)
    assert mech.cube == expected
    drive(mech, "cover", "flip")
    expected = rotate(expected, "R")  # x: world F comes up
    drive(mech, "cover", "open")  # back from flip: nothing
    assert mech.cube == expected
    drive(mech, "cover", "hold")
    drive(mech, "spin", 1)  # held 180°
    expected = apply(expected, "D2")
    assert mech.cube == expected and mech.jammed is None
    assert mech.counts == {"flips": 1, "spins": 2, "layer_turns": 3}


def nothing(mechanism) -> None:
    """A setup that leaves the mechanism as it is."""


def test_mechanism_jams():
    cases = {  # name: (setup, the act that jams)
        "spin at flip": (lambda m: drive(m, "cover", "flip"), lambda m: drive(m, "spin", 1)),
        "spin while the cover moves": (nothing, lambda m: m.servo_moved({SPIN: 1600.0, COVER: 1400.0}, 0.0)),
        "flip with the spinner off-square": (
            lambda m: m.servo_moved({SPIN: 1700.0}, 0.0),
            lambda m: drive(m, "cover", "flip"),
        ),
        "hold with the spinner off-square": (
            lambda m: m.servo_moved({SPIN: 1700.0}, 0.0),
            lambda m: drive(m, "cover", "hold"),
        ),
        "switched off between end-points": (
            lambda m: m.servo_moved({SPIN: 1620.0}, 0.0),
            lambda m: m.servo_moved({SPIN: None}, 0.0),
        ),
    }
    for name, (setup, act) in cases.items():
        mech = at_rest(FlipSpinMechanism())
        setup(mech)
        before = mech.cube
        assert mech.jammed is None, name
        act(mech)
        assert mech.jammed, name
        drive(mech, "spin", -1)
        assert mech.cube == before, name  # jammed: the state stays as it was
    mech = at_rest(FlipSpinMechanism())
    drive(mech, "spin", 1, off=True)  # off at an end-point: it stays there, no jam
    assert mech.jammed is None and mech.spinner == 1
    mech.set_state(solved_facelets(3))
    assert mech.jammed is None


def test_a_spinner_that_stops_short_and_goes_on_turns_once():
    """A damaged target the host corrects: the base rests off-square, then reaches the end-point."""
    mech = at_rest(FlipSpinMechanism())
    drive(mech, "cover", "hold")
    mech.servo_moved({SPIN: 1650.0}, 0.0)
    mech.servo_moved({SPIN: 1200.0}, 0.0)  # overshoots the other way, through home
    drive(mech, "spin", 1)
    assert mech.cube == apply(solved_facelets(3), "D") and mech.jammed is None


# ---------------------------------------------------------------- link against the simulator


@pytest.fixture
def rig():
    made = []

    def make(state=None, size=3, crc=False, timing=None, **sim_options):
        mech = FlipSpinMechanism(state, size=size)
        sim = SimulatedMaestro(mechanism=mech, homes=mech.home_targets(), slew_us_per_ms=SLEW, crc=crc, **sim_options)
        sim.start()
        link = MaestroLink(sim.path, crc=crc, timing=timing or MaestroTiming.pty(servo_us_per_ms=SLEW))
        made.append((sim, link))
        return sim, link, mech

    yield make
    for sim, link in made:
        link.close()
        sim.stop()


class Plan:
    """Rig operations as servo moves, with the cube they should leave (worked out independently)."""

    def __init__(self, mech, state):
        self.mech, self.state, self.moves = mech, state, []
        self.spinner, self.cover = 0, "open"
        self.counts = {"flips": 0, "spins": 0, "layer_turns": 0}

    def cover_to(self, point):
        self.moves.append({COVER: self.mech.pulse("cover", point)})
        if self.cover == "open" and point == "flip":
            self.state = rotate(self.state, "R")
            self.counts["flips"] += 1
        self.cover = point

    def spin_to(self, point):
        q = point - self.spinner
        self.moves.append({SPIN: self.mech.pulse("spin", point)})
        if self.cover == "hold":
            self.state = apply(self.state, "D" + SUFFIX[q % 4])
            self.counts["layer_turns"] += abs(q)
        else:
            self.state = rotate(self.state, "D", q)
            self.counts["spins"] += abs(q)
        self.spinner = point

    def random(self, count, seed):
        rng = random.Random(seed)
        while len(self.moves) < count:
            choice = rng.random()
            if choice < 0.5:
                self.spin_to(rng.choice([p for p in (-1, 0, 1) if p != self.spinner]))
            elif choice < 0.8:
                self.cover_to("hold" if self.cover == "open" else "open")
            elif self.cover == "open":
                self.cover_to("flip")
                self.cover_to("open")
        return self


def run(link, moves, timeout=5):
    return [link.move(targets).wait(timeout) for targets in moves]


@pytest.mark.parametrize("size", [2, 3])
def test_servo_moves_turn_the_cube_exactly(rig, size):
    start = scramble(size, seed=5)["state"]
    sim, link, mech = rig(start, size=size)
    info = link.connect()
    assert info["dialect"] == "maestro" and info["channels"] == 6 and info["positions"][SPIN] == 6000
    plan = Plan(mech, start)
    plan.cover_to("hold"), plan.spin_to(1), plan.cover_to("open"), plan.spin_to(0)
    plan.cover_to("flip"), plan.cover_to("open"), plan.spin_to(-1), plan.cover_to("hold"), plan.spin_to(1)
    plan.cover_to("open"), plan.spin_to(-1)
    results = run(link, plan.moves)
    assert [r["mid"] for r in results] == list(range(1, len(plan.moves) + 1))
    assert mech.jammed is None and sim.cube == plan.state and mech.counts == plan.counts
    assert mech.counts == {"flips": 1, "spins": 4, "layer_turns": 3}
    status = link.status()
    assert status["healthy"] and status["counters"]["moves_done"] == len(plan.moves)
    assert status["targets"] == {COVER: 6000, SPIN: 4000}


@pytest.mark.parametrize(
    "crc, faults",
    [
        (True, {"drop": 0.03, "corrupt": 0.03, "duplicate": 0.03, "noise": 0.03, "delay": 0.01, "delay_ms": 30}),
        (
            False,
            {
                "to_device": {"drop": 0.04, "duplicate": 0.04},
                "to_host": {"drop": 0.03, "corrupt": 0.03, "duplicate": 0.03, "noise": 0.03},
            },
        ),
    ],
)
def test_a_noisy_line_loses_and_doubles_nothing(rig, crc, faults):
    start = scramble(3, seed=11)["state"]
    sim, link, mech = rig(start, crc=crc, faults={**faults, "seed": 21})
    link.connect()
    plan = Plan(mech, start).random(70, seed=4)
    run(link, plan.moves, timeout=10)
    assert mech.jammed is None
    assert sim.cube == plan.state and mech.counts == plan.counts  # nothing lost, nothing twice
    counters, sent = link.status()["counters"], sim.info()
    print("link counters:", counters, "\nsim to_device:", sent["to_device"], "\nsim to_host:", sent["to_host"])
    assert counters["retries"] > 0 and counters["moves_done"] == len(plan.moves)
    assert sent["to_device"]["dropped"] and sent["to_host"]["dropped"] and sent["to_host"]["corrupted"]
    if crc:
        assert counters["error_bits"]["serial CRC error"] + counters["error_bits"]["serial protocol error"] > 0


@pytest.mark.parametrize("damage", ["lost", "damaged"])
def test_a_target_that_did_not_take_is_sent_again(rig, monkeypatch, damage):
    """Lost bytes, or (no CRC) a data byte damaged into another target: the read-back catches it."""
    sim, link, mech = rig()
    link.connect()
    link.move({COVER: mech.pulse("cover", "hold")}).wait(2)
    write, spoiled = link.io.write, []

    def spoil(*packets, **options):
        if not spoiled and any(p[0] == mp.SET_TARGET for p in packets):
            spoiled.append(packets)
            packets = [p for p in packets if p[0] != mp.SET_TARGET]
            if damage == "damaged":  # 2000 µs arrives as 1750 µs: the base stops off-square
                packets.append(mp.set_target(SPIN, 7000))
        write(*packets, **options)

    monkeypatch.setattr(link.io, "write", spoil)
    link.move({SPIN: mech.pulse("spin", 1)}).wait(2)
    assert spoiled and link.status()["counters"]["resends"] == 1
    assert mech.spinner == 1 and mech.jammed is None and mech.cube == apply(solved_facelets(3), "D")


def test_a_target_the_maestro_clamps_is_a_fault_naming_the_channel(rig):
    sim, link, mech = rig(limits={SPIN: (4000, 8000)})
    link.connect()
    with pytest.raises(DeviceFault) as caught:
        link.move({SPIN: 3000}).wait(3)
    assert caught.value.code == "TARGET" and "channel 0 stays at 1000 µs instead of 750 µs" in str(caught.value)
    link.clear()
    link.move({SPIN: mech.pulse("spin", 0)}).wait(2)


def test_speed_limits_are_kept_and_waited_for(rig):
    sim, link, mech = rig()
    link.connect()
    link.set_speed(SPIN, 200).wait(1)  # 5 µs per ms: 500 µs in about 0.1 s
    link.set_accel(SPIN, 100).wait(1)
    result = link.move({SPIN: mech.pulse("spin", 1)}).wait(3)
    assert result["positions"] == {SPIN: 8000} and mech.spinner == 1
    assert sim.info()["speeds"][SPIN] == 200 and sim.info()["accels"][SPIN] == 100
    sim.reset()  # an unnoticed reset forgets them; the next move sends them again
    with pytest.raises(DeviceReset):
        link.move({SPIN: mech.pulse("spin", 0)}).wait(3)


def test_reset_mid_run_is_device_reset(rig):
    sim, link, mech = rig()
    link.connect()
    run(link, [{SPIN: mech.pulse("spin", 1)}])
    before = mech.cube
    sim.reset()  # every channel home: the base turns the cube back
    time.sleep(0.05)
    assert mech.spinner == 0 and mech.cube == rotate(before, "D", -1)
    with pytest.raises(DeviceReset) as caught:
        link.move({COVER: mech.pulse("cover", "hold")}).wait(3)
    assert "channel 0 went to 1500 µs while it was held at 2000 µs" in str(caught.value)
    assert not link.status()["connected"]
    link.connect()  # a new session works
    run(link, [{COVER: mech.pulse("cover", "hold")}])


def test_reset_after_some_moves_is_noticed(rig):
    sim, link, mech = rig(faults={"reset_after": 3})
    link.connect()
    plan = Plan(mech, mech.cube)
    plan.cover_to("hold"), plan.spin_to(1), plan.spin_to(-1), plan.cover_to("open"), plan.spin_to(0)
    with pytest.raises(DeviceReset):
        run(link, plan.moves)
    assert sim.resets == 1


def test_unplugged_cable_is_port_error(rig):
    sim, link, mech = rig(faults={"close_after": 2})
    link.connect()
    with pytest.raises(PortError):
        run(
            link,
            [{COVER: mech.pulse("cover", "hold")}, {SPIN: mech.pulse("spin", 1)}, {COVER: mech.pulse("cover", "open")}],
        )
    assert not link.status()["connected"]


def test_silence_is_device_silent(rig):
    sim, link, mech = rig()
    link.connect()
    sim.go_silent()
    with pytest.raises(DeviceSilent):
        link.move({COVER: mech.pulse("cover", "hold")}).wait(3)
    with pytest.raises(DeviceSilent):
        link.move({COVER: mech.pulse("cover", "open")})


def test_estop_stops_latches_and_clear_goes_on(rig):
    sim, link, mech = rig()
    link.connect()
    link.set_speed(SPIN, 10)  # 0.25 µs per ms: the base would take 2 s
    moving = link.move({SPIN: mech.pulse("spin", 1)})
    moving.wait_received(1)
    time.sleep(0.1)
    called = time.monotonic()
    result = link.estop()
    print(
        f"e-stop after the call: written {result['written_s'] * 1000:.2f} ms, device switched off "
        f"{(sim.off_times[0] - called) * 1000:.2f} ms, confirmed {result['confirmed_s'] * 1000:.2f} ms"
    )
    assert result["positions"] == {ch: 0 for ch in range(6)}
    assert sim.info()["targets"] == [0] * 6
    with pytest.raises(DeviceFault) as caught:
        moving.wait(1)
    assert caught.value.code == "ESTOP"
    with pytest.raises(DeviceFault):
        link.move({COVER: mech.pulse("cover", "hold")})
    assert "spin servo was switched off between end-points" in mech.jammed
    horns = sim.info()["horns"]
    time.sleep(0.05)
    assert sim.info()["horns"] == horns  # nothing moves any more
    assert link.clear()["positions"][SPIN] == 0
    mech.set_state(solved_facelets(3))  # the cube put back square by hand
    link.set_speed(SPIN, 0).wait(1)
    for targets in ({SPIN: mech.pulse("spin", 0)}, {COVER: mech.pulse("cover", "hold")}, {SPIN: mech.pulse("spin", 1)}):
        link.move(targets)
    link.wait(timeout=5)
    assert mech.cube == apply(solved_facelets(3), "D") and link.status()["healthy"]


def test_serial_errors_are_counted_and_script_errors_are_faults(rig):
    sim, link, mech = rig(script=True)
    assert link.connect()["script_running"]
    sim.raise_errors(1 << 0 | 1 << 2)  # noise on the line: counted, the move goes on
    link.move({COVER: mech.pulse("cover", "hold")}).wait(2)
    bits = link.status()["counters"]["error_bits"]
    assert bits["serial signal error"] == 1 and bits["serial buffer full"] == 1
    assert link.status()["counters"]["serial_errors"] == 1 and link.status()["healthy"]
    sim.raise_errors(1 << 7)
    with pytest.raises(DeviceFault) as caught:
        link.query()
    assert caught.value.code == "SCRIPT" and "script call stack error" in str(caught.value)
    assert "subroutines" in str(caught.value)


def test_script_error_bits_without_a_script_are_a_damaged_reply(rig):
    sim, link, mech = rig()
    link.connect()
    sim.raise_errors(1 << 6)
    assert link.query()["errors"] == ["script stack error"]
    assert link.status()["counters"]["implausible_errors"] == 1 and link.status()["healthy"]


@pytest.mark.parametrize(
    "host_crc, device_crc, says", [(True, False, "protocol error"), (False, True, "CRC enabled on the Maestro")]
)
def test_crc_setting_mismatch_fails_the_handshake(rig, host_crc, device_crc, says):
    sim, _, mech = rig(crc=device_crc)
    link = MaestroLink(sim.path, crc=host_crc, timing=MaestroTiming.pty(boot_timeout=0.3))
    try:
        with pytest.raises(HandshakeError, match=says):
            link.connect()
    finally:
        link.close()


def test_no_maestro_on_the_port_fails_the_handshake(rig):
    sim, _, _ = rig()
    sim.go_silent()
    with MaestroLink(sim.path, timing=MaestroTiming.pty(boot_timeout=0.3)) as link:
        with pytest.raises(HandshakeError, match="no Maestro on this port"):
            link.connect()
    with pytest.raises(PortError, match="no such device"):
        MaestroLink("/dev/no-such-maestro").connect()


def test_go_home(rig):
    sim, link, mech = rig()
    link.connect()
    run(link, [{COVER: mech.pulse("cover", "hold")}])
    result = link.home().wait(3)
    assert result["positions"][COVER] == 6000 and mech.cover == "open"
    link.move({SPIN: mech.pulse("spin", -1)}).wait(2)  # the homed positions are what it holds now
