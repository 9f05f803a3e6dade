"""A firmware as a board: what its motors do, seen from outside, on every device ``--firmware`` names.

On the simulated AVR the turns are counted from the STEP/DIR pins and the
drivers' state from the EN pins, so these tests check the motors, not what
the firmware says about them. See tests/devices.py for the devices.
"""

import random
import time

import pytest
import serial

import devices
from firmware_interface import DeviceReset, DeviceSilent, PortError
from firmware_interface.robotd.protocol import Command, Hello, Ping, StatusQuery
from solver import apply, scramble
from solver.puzzles.cube.cubie import solved_facelets
from solver.puzzles.cube.notation import format_moves

SOLVED = solved_facelets(3)


def test_the_cube_follows_turns_and_pairs(start_device, connect):
    state = scramble(3, seed=11)["state"]
    device = start_device(state=state)
    devices.needs_cube(device)
    link = connect(device)
    link.moves("R U2 F' D L2 B")
    link.wait([link.turn_pair("R", 1, "L", -1), link.turn_pair("F", 2, "B", -1)], timeout=10)
    assert device.cube == apply(state, "R U2 F' D L2 B R L' F2 B'")
    assert devices.quarter_turns(device) == 8 + 2 + 3


@pytest.mark.parametrize("turns", [200, pytest.param(1000, marks=pytest.mark.slow)])
def test_exactly_once_over_many_turns_through_a_faulty_line(start_device, connect, turns):
    rates = {"drop": 0.05, "corrupt": 0.01, "duplicate": 0.01, "noise": 0.01, "seed": 5}
    device = start_device(faults=rates)
    link = connect(device)
    rng = random.Random(8)
    moves = [rng.randrange(18) for _ in range(turns)]
    link.moves(moves)
    link.wait(timeout=120)
    assert device.cube == apply(SOLVED, format_moves(moves))
    assert devices.quarter_turns(device) == sum(2 if m % 3 == 1 else 1 for m in moves)
    counters = link.status()["counters"]
    assert counters["retransmissions"] > 0 and counters["decode_errors"] > 0


def test_an_emergency_stop_stops_the_motors_and_disables_the_drivers(device, connect):
    devices.needs_cube(device)
    link = connect(device)
    motions = link.moves("U2 D2 " * 30)
    motions[1].wait(5)
    ack = link.estop()
    assert ack["acknowledged_s"] < link.timing.estop_timeout
    assert link.query()["fault"] == "ESTOP"
    turned = devices.quarter_turns(device)
    time.sleep(0.3)
    assert devices.quarter_turns(device) == turned < 120  # nothing moved after the stop
    assert devices.enabled(device, link) == set()
    assert link.clear()["fault"] is None
    link.enable().wait(5)
    assert devices.enabled(device, link) == set("URFDLB")


def test_the_watchdog_stops_the_motors_when_the_host_falls_silent(device):
    """A host that stops talking mid-sequence (raw pyserial here) makes the board stop, go limp and latch HOSTLOST."""
    with serial.Serial(device.path, 115200, timeout=0.05) as raw:
        heard = devices.read_line(raw)
        while not heard.startswith((b"HB ", b"BOOT ")):  # a board takes bytes once it has booted
            heard = devices.read_line(raw)
        raw.write(
            Hello(1, "0000ABCD", 1).encode()
            + Command(1, "ENABLE", ("1",)).encode()
            + Command(2, "SPEED", ("2", "400")).encode()
        )
        raw.write(b"".join(Command(3 + i, "TURN", (str(3 + i), "U", "2")).encode() for i in range(8)))
        time.sleep(1.5)  # the watchdog is 1000 ms, the turns take longer
        before = devices.quarter_turns(device) if device.kind != "port" else None
        raw.reset_input_buffer()
        raw.write(StatusQuery(5).encode())
        reply = devices.read_line(raw)
        while reply and not reply.startswith(b"STATUS 5"):
            reply = devices.read_line(raw)
    assert b"fault=HOSTLOST" in reply and b" q=0 " in reply and b" en=- " in reply
    if before is not None:
        time.sleep(0.3)
        assert devices.quarter_turns(device) == before < 8 * 2 * 4
    if device.kind == "avr":
        assert device.enabled() == set()


def test_a_board_reset_mid_run_is_reported_and_a_new_session_works(device, connect):
    if device.kind == "port":
        pytest.skip("cannot reset a real board from here")
    link = connect(device)
    motions = link.moves("U R F D L B " * 10)
    motions[3].wait(5)
    device.reset()
    with pytest.raises(DeviceReset):
        link.wait(timeout=5)
    link.connect()
    link.enable().wait(5)
    devices.prepare(link)
    link.turn("U", 1).wait(5)


def test_a_hung_board_is_detected_within_a_second(device, connect):
    if device.kind == "port":
        pytest.skip("cannot hang a real board from here")
    link = connect(device)
    motions = link.moves("F B " * 20)
    motions[0].wait(5)
    hung = time.monotonic()
    device.go_silent()
    with pytest.raises(DeviceSilent):
        link.wait(timeout=5)
    assert time.monotonic() - hung < 1.5


def test_unplugging_is_detected(device, connect):
    if device.kind == "port":
        pytest.skip("unplug it yourself")
    link = connect(device)
    link.moves("F B " * 20)[0].wait(5)
    device.close_port()
    with pytest.raises(PortError):
        link.wait(timeout=3)


def test_a_version_1_host_still_gets_a_session(device):
    with serial.Serial(device.path, 115200, timeout=0.1) as raw:
        raw.reset_input_buffer()
        deadline = time.monotonic() + 3
        reply = b""
        while b"session=0000BEEF" not in reply and time.monotonic() < deadline:
            raw.write(Hello(1, "0000BEEF", 100).encode())
            reply = devices.read_line(raw)
        assert b"proto=1" in reply and b"motors=U,R,F,D,L,B" in reply
        raw.write(Command(100, "PLAN", ("1", "U1")).encode())
        lines = [devices.read_line(raw) for _ in range(5)]
        assert any(line.startswith(b"REJ 100 BADCMD") for line in lines)


def test_a_damaged_estop_line_does_not_stop_or_stall_the_motors(device):
    """A board may stop pulses the moment a line starting 'ESTOP ' arrives, but one that fails its check
    must leave the turn running to its end, reported done and not faulted."""
    with serial.Serial(device.path, 115200, timeout=0.05) as raw:
        heard = devices.read_line(raw)
        while not heard.startswith((b"HB ", b"BOOT ")):
            heard = devices.read_line(raw)
        raw.write(
            Hello(1, "0000ABCE", 1).encode()
            + Command(1, "ENABLE", ("1",)).encode()
            + Command(2, "SPEED", ("2", "300")).encode()
            + Command(3, "TURN", ("3", "U", "1")).encode()
        )
        time.sleep(0.1)
        raw.write(b"ESTOP 9*0000\n" + b"ESTOP " + b"9" * 250 + b"\n")
        lines, deadline, ping = [], time.monotonic() + 3, time.monotonic()
        while not any(line.startswith(b"DONE 3") for line in lines) and time.monotonic() < deadline:
            if time.monotonic() - ping > 0.25:  # a host's heartbeat: the watchdog is not what is tested
                raw.write(Ping(7).encode())
                ping = time.monotonic()
            lines.append(devices.read_line(raw))
        raw.write(StatusQuery(6).encode())
        status = devices.read_line(raw)
        while status and not status.startswith(b"STATUS 6"):
            status = devices.read_line(raw)
    assert any(line.startswith(b"DONE 3") for line in lines), b"".join(lines).decode(errors="replace")
    assert any(line.startswith(b"NAK 4 CRC") for line in lines)
    assert b"fault=NONE" in status
