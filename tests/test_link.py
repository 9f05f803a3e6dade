"""RigLink over a real pyserial port, against every device ``pytest --firmware`` names.

Tests taking ``port`` or ``device`` run against each of: the Python
simulator (``sim``), the firmware binary under simavr (``avr``) and a real
board's port; by default ``sim,avr``. On a real board they only turn faces
back and forth. Tests of what only the Python simulator can fake (stalled
motors, missing home switches) take ``sim``.
"""

import asyncio
import os
import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace

import pytest
import serial

from devices import read_line
from firmware_interface import (
    AckTimeout,
    ConfigError,
    DeviceFault,
    DeviceReset,
    DeviceSilent,
    HandshakeError,
    LinkError,
    LinkTiming,
    PortError,
    ProtocolVersionError,
    RigLink,
    SimulatedFirmware,
)
from firmware_interface.__main__ import main as cli
from firmware_interface.robotd.protocol import Command, Hello, StatusQuery, encode_frame
from solver import apply, scramble
from solver.puzzles.cube.cubie import solved_facelets
from solver.puzzles.cube.notation import format_moves, parse_moves

FAST = {"quarter_ms": 2, "half_ms": 3, "home_ms": 5}
SOLVED = solved_facelets(3)
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def start(**kwargs) -> SimulatedFirmware:
    sim = SimulatedFirmware(**{"timing": FAST, **kwargs})
    sim.start()
    return sim


@pytest.fixture
def sim():
    simulator = start()
    yield simulator
    simulator.stop()


def turns_of(sim):
    return [s for s in sim.executed() if s.verb in ("TURN", "PAIR")]


# ---------------------------------------------------------------- any device (simulator or --rig-port)


def test_handshake(port, connect):
    link = connect(port, enable=False)
    info = link.info
    assert info["protocol"] in (1, 2, 3) and info["rig"] == "six-axis" and info["motors"] == list("URFDLB")
    assert len(info["boot_id"]) == 8 and info["window"] >= 1 and info["queue"] >= 1
    assert link.status()["healthy"]


def test_turns_are_received_then_done_in_order(port, connect):
    link = connect(port)
    motions = link.moves("R U R' U' R U R' U' U2 U2")
    motions += [link.turn_pair("U", 1, "D", -1), link.turn_pair("U", -1, "D", 1)]
    assert all(m.wait_received(5) for m in motions)
    results = link.wait(motions, timeout=10)
    assert [r["mid"] for r in results] == [m.mid for m in motions]
    assert results[0]["command"] == "TURN R 1" and results[-1]["command"] == "PAIR U -1 D 1"
    assert link.status()["done_through"] == motions[-1].mid


def test_many_turns_through_the_window(port, connect):
    link = connect(port)
    motions = link.moves("U U' " * 40)
    link.wait(motions, timeout=20)
    status = link.status()
    assert status["healthy"] and status["on_device"] == 0 and status["in_flight"] == 0


def test_status_query_is_idempotent(port, connect):
    link = connect(port)
    first, second = link.query(), link.query()
    assert first["boot_id"] == second["boot_id"] == link.info["boot_id"]
    assert first["done_through"] == second["done_through"] and first["fault"] is None
    assert first["enabled"] == list("URFDLB")


def test_heartbeats_keep_an_idle_session_alive(port, connect):
    link = connect(port)
    time.sleep(1.3)  # longer than the device watchdog and the host's silence limit
    assert link.status()["healthy"]
    link.moves("F F'")
    link.wait(timeout=5)


def test_estop_when_idle_then_clear(port, connect):
    link = connect(port)
    ack = link.estop()
    assert ack["acknowledged_s"] < link.timing.estop_timeout
    with pytest.raises(DeviceFault, match="emergency stop"):
        link.turn("U", 1)
    assert link.query()["fault"] == "ESTOP"
    assert link.clear()["fault"] is None
    link.enable()  # an emergency stop turned the drivers off
    link.moves("B B'")
    link.wait(timeout=5)


def test_connect_again_opens_a_new_session(port, connect):
    link = connect(port)
    first = link.info["session"]
    link.moves("L L'")
    link.wait(timeout=5)
    info = link.connect()
    assert info["session"] != first and info["boot_id"] == link.info["boot_id"]
    link.moves("L' L")
    link.wait(timeout=5)


# ---------------------------------------------------------------- simulator: the virtual cube


def test_the_virtual_cube_follows_the_moves(sim, connect):
    state = scramble(3, seed=4)["state"]
    sim.set_state(state)
    link = connect(sim.path)
    link.moves("R U2 F' D L2 B")
    link.turn_pair("R", 1, "L", -1)
    link.wait(timeout=5)
    assert sim.cube == apply(state, "R U2 F' D L2 B R L'")


def test_exactly_once_and_in_order_through_a_lossy_line(connect):
    rates = {"drop": 0.1, "corrupt": 0.01, "duplicate": 0.01, "seed": 7}
    sim = start(faults=rates, timing={"quarter_ms": 0, "half_ms": 0, "home_ms": 0})
    try:
        link = connect(sim.path)
        moves = [random.Random(3).randrange(18) for _ in range(400)]
        motions = link.moves(moves)
        link.wait(timeout=60)
        assert [s.mid for s in turns_of(sim)] == [m.mid for m in motions]
        assert sim.cube == apply(SOLVED, format_moves(moves))
        assert link.status()["counters"]["retransmissions"] > 0
        assert sim.info()["to_device"]["dropped"] > 0 and sim.info()["to_host"]["corrupted"] > 0
    finally:
        sim.stop()


def test_delayed_frames_are_tolerated(connect):
    sim = start(faults={"delay": 0.05, "delay_ms": 40, "drop": 0.02, "seed": 2})
    try:
        link = connect(sim.path)
        motions = link.moves("R U R' U' " * 25)
        link.wait(timeout=30)
        assert [s.mid for s in turns_of(sim)] == [m.mid for m in motions]
        assert sim.cube == apply(SOLVED, "R U R' U' " * 25)
    finally:
        sim.stop()


def test_sequence_numbers_wrap_around(sim, connect, monkeypatch):
    monkeypatch.setattr("firmware_interface.robotd.link.random.randrange", lambda a, b: 65530)
    link = connect(sim.path)
    link.moves("U R F D L B " * 3)
    link.wait(timeout=5)
    assert link.query()["received_through"] == (65530 + 18) % 65536
    assert sim.cube == apply(SOLVED, "U R F D L B " * 3)


# ---------------------------------------------------------------- simulator: handshake


def test_handshake_with_a_board_that_resets_on_open(connect):
    sim = start(reset_on_open=True, boot_ms=300)
    try:
        booted_before = sim.info()["boot_id"]
        link = connect(sim.path)
        assert link.info["boot_id"] == sim.info()["boot_id"] != booted_before
        link.moves("U U'")
        link.wait(timeout=5)
    finally:
        sim.stop()


def test_unknown_protocol_version_is_a_clear_error():
    sim = start(protocol=4, min_protocol=4)
    try:
        with RigLink(sim.path) as link:
            with pytest.raises(ProtocolVersionError, match="protocol version 4.*speaks versions 1 to 3"):
                link.connect()
    finally:
        sim.stop()


def _pty_device(lines=()):
    """A pty whose other end says ``lines`` again and again (nothing when empty)."""
    master, slave = os.openpty()
    path = os.ttyname(slave)
    stop = threading.Event()

    def chatter():
        while not stop.wait(0.05):
            for line in lines:
                try:
                    os.write(master, line)
                except OSError:
                    return

    threading.Thread(target=chatter, daemon=True).start()
    return path, lambda: (stop.set(), os.close(master), os.close(slave))


@pytest.mark.parametrize("lines,words", [((), "nothing received"), ((b"Grbl 1.1h ['$' for help]\r\n",), "Grbl 1.1h")])
def test_a_device_that_never_answers(lines, words):
    path, close = _pty_device(lines)
    try:
        link = RigLink(path, timing=replace(LinkTiming.pty(), boot_timeout=0.4))
        with pytest.raises(HandshakeError, match=words):
            link.connect()
        link.close()
    finally:
        close()


def test_port_errors_say_what_is_wrong(sim, connect):
    with pytest.raises(PortError, match="no such device"):
        RigLink("/dev/serial/by-id/usb-no-such-board").connect()
    connect(sim.path)
    with pytest.raises(PortError, match="in use by another program"):
        RigLink(sim.path).connect()


def test_bad_commands_are_refused_before_sending(sim, connect):
    link = connect(sim.path)
    for call, words in [
        (lambda: link.turn("X", 1), "'X' is no motor"),
        (lambda: link.turn("U", 3), "-2 -1 1 2"),
        (lambda: link.turn_pair("U", 1, "R", 1), "not opposite"),
        (lambda: link.moves("U Q"), "move 2"),
        (lambda: link.set_speed(5), "20..10000"),
    ]:
        with pytest.raises(ConfigError, match=words):
            call()
    assert link.status()["healthy"]
    with pytest.raises(LinkError, match="not connected"):
        RigLink(sim.path).turn("U", 1)


# ---------------------------------------------------------------- simulator: faults


def test_silence_is_detected_and_the_last_frames_dumped(sim, connect, tmp_path):
    link = connect(sim.path, fault_log_dir=tmp_path)
    sim.set_state(SOLVED)
    motions = link.moves("U R " * 20)
    motions[3].wait(5)
    sim.go_silent()
    with pytest.raises(DeviceSilent, match="nothing heard"):
        link.wait(timeout=3)
    err = link.status()["fault"]
    assert err["type"] == "DeviceSilent" and err["done_through"] >= motions[3].mid
    done = [m for m in motions if m.completed.exception() is None]
    assert len(done) == len(turns_of(sim))  # what completed is exactly what ran
    logs = list(tmp_path.iterdir())
    assert len(logs) == 1 and " > " in logs[0].read_text()
    assert cli(["decode", str(logs[0])]) == 0


def test_unplugging_is_detected(sim, connect):
    link = connect(sim.path)
    motions = link.moves("F B " * 20)
    motions[0].wait(5)
    sim.close_port()
    with pytest.raises(PortError, match="port vanished"):
        link.wait(timeout=3)
    with pytest.raises(PortError):
        link.turn("U", 1)


def test_a_reset_mid_sequence_is_an_error_not_a_restart(connect):
    sim = start(faults={"reset_after": 6})
    try:
        link = connect(sim.path)
        motions = link.moves("U R F D L B " * 4)
        with pytest.raises(DeviceReset, match="reset mid-sequence.*connect\\(\\) again"):
            link.wait(timeout=5)
        time.sleep(0.2)
        done = [m for m in motions if m.completed.exception() is None]
        ran = [s.mid for s in turns_of(sim)]
        assert len(ran) == 5  # ENABLE was step 1 of 6
        assert [m.mid for m in done] == ran[: len(done)]  # confirmed ones ran; the last may be unconfirmed
        assert all(isinstance(m.completed.exception(), DeviceReset) for m in motions[len(done) :])
        assert link.connect()["boot_id"] == sim.info()["boot_id"]
        link.enable().wait(5)
        link.turn("U", 1).wait(5)
    finally:
        sim.stop()


def test_a_stalled_motor_stops_the_sequence(sim, connect):
    link = connect(sim.path)
    sim.stall("F")
    motions = link.moves("U R F D L B")
    with pytest.raises(DeviceFault, match="STALL.*motor F, motion 4 \\(TURN F 1\\)") as caught:
        link.wait(timeout=5)
    assert caught.value.code == "STALL"
    assert [m.completed.exception() is None for m in motions] == [True, True, False, False, False, False]
    assert sim.cube == apply(SOLVED, "U R")
    sim.stall("F", False)
    link.clear()
    link.turn("F", 1).wait(5)


def test_homing_without_a_switch_is_a_limit_fault(sim, connect):
    link = connect(sim.path)
    sim.home_switch_missing("L")
    with pytest.raises(DeviceFault, match="LIMIT"):
        link.home().wait(5)


def test_estop_empties_a_long_queue(connect):
    sim = start(timing={"quarter_ms": 40, "half_ms": 60})
    try:
        link = connect(sim.path)
        motions = link.moves("U R F D L B " * 20)
        motions[1].wait(5)
        ack = link.estop()
        assert sim.estop_times() and sim.info()["queued"] == 0
        assert ack["done_through"] == link.status()["done_through"]
        ran = [m for m in motions if m.completed.exception() is None]
        assert len(ran) == len(turns_of(sim)) < len(motions)
        assert all(m.completed.exception().code == "ESTOP" for m in motions[len(ran) :])
        time.sleep(0.2)
        assert len(turns_of(sim)) == len(ran)  # nothing moved after the stop
    finally:
        sim.stop()


def test_the_device_stops_when_the_host_falls_silent():
    """A host that stops talking mid-sequence (here: raw pyserial) makes the firmware stop and latch HOSTLOST."""
    sim = start(timing={"half_ms": 200})
    try:
        with serial.Serial(sim.path, 115200, timeout=0.05) as raw:
            raw.write(Hello(1, "0000ABCD", 1).encode() + Command(1, "ENABLE", ("1",)).encode())
            raw.write(b"".join(Command(2 + i, "TURN", (str(2 + i), "U", "2")).encode() for i in range(10)))
            time.sleep(1.3)  # the watchdog is 1000 ms, the turns take 2 s
            raw.reset_input_buffer()
            raw.write(StatusQuery(5).encode())
            reply = read_line(raw)
            while reply and not reply.startswith(b"STATUS 5"):
                reply = read_line(raw)
        assert b"fault=HOSTLOST" in reply and b" q=0 " in reply
        assert 0 < len(turns_of(sim)) < 10
    finally:
        sim.stop()


def test_the_link_works_from_asyncio(sim, connect):
    link = connect(sim.path)

    async def solve_and_run():
        loop = asyncio.get_running_loop()
        motions = link.moves("R U R' U'")
        results = await asyncio.gather(*(asyncio.wrap_future(m.completed) for m in motions))
        status = await loop.run_in_executor(None, link.query)
        return results, status

    results, status = asyncio.run(solve_and_run())
    assert [r["command"] for r in results] == ["TURN R 1", "TURN U 1", "TURN R -1", "TURN U -1"]
    assert status["done_through"] == results[-1]["mid"]


def test_on_fault_callback_and_trace_file(connect, tmp_path, capsys):
    faults = []
    sim = start()
    try:
        trace = tmp_path / "trace.log"
        link = connect(sim.path, trace=trace, on_fault=faults.append)
        sim.stall("D")
        with pytest.raises(DeviceFault):
            link.turn("D", 2).wait(5)
        link.close()
    finally:
        sim.stop()
    assert len(faults) == 1 and faults[0].code == "STALL" and faults[0].log
    assert cli(["decode", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "HELLO     open session" in out and "FAULT     STALL (motor stalled)" in out


# ---------------------------------------------------------------- command lines


def test_cli_frame_and_decode_errors(capsys, tmp_path):
    assert cli(["frame", "STATUS 1"]) == 0
    assert capsys.readouterr().out == encode_frame("STATUS 1").decode()
    assert cli(["frame", "A*B"]) == 2
    assert cli(["decode", str(tmp_path / "missing.log")]) == 2
    assert "error: cannot read" in capsys.readouterr().err
    capture = tmp_path / "capture.txt"
    capture.write_bytes(encode_frame("ACK 5") + b"ACK 5*0000\n")
    assert cli(["decode", str(capture)]) == 0
    out = capsys.readouterr().out
    assert "received through #5" in out and "CRC" in out


def test_simulator_command_line():
    env = dict(os.environ, PYTHONPATH=REPO)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "firmware_interface.robotd.simulator",
            "--rig",
            "six-axis",
            "--drop",
            "0.05",
            "--quarter-ms",
            "1",
            "--half-ms",
            "1",
            "--seed",
            "1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=REPO,
    )
    try:
        path = proc.stdout.readline().decode().strip()
        with RigLink(path) as link:
            link.connect()
            link.enable()
            link.moves("R U R' U'")
            link.wait(timeout=10)
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0 and path.startswith("/dev/")
    assert b"5 steps executed" in err
    bad = subprocess.run(
        [sys.executable, "-m", "firmware_interface.robotd.simulator", "--stall", "X"],
        capture_output=True,
        env=env,
        cwd=REPO,
    )
    assert bad.returncode == 2 and bad.stderr.startswith(b"error: ")


def test_simulator_settings_are_checked():
    with pytest.raises(ConfigError, match="unknown key 'qarter_ms'"):
        SimulatedFirmware(timing={"qarter_ms": 3})
    with pytest.raises(ConfigError, match="probability"):
        SimulatedFirmware(faults={"drop": 1.5})
    with pytest.raises(ConfigError, match="unknown key 'dorp'"):
        SimulatedFirmware(faults={"dorp": 0.1})
    with pytest.raises(ConfigError, match="unknown rig"):
        SimulatedFirmware(rig="two-gripper")
    with pytest.raises(ConfigError, match="unknown key"):
        LinkTiming.from_config({"ack_timout": 0.1})
    with pytest.raises(ConfigError, match="within 1 s"):
        LinkTiming(silence=1.5)


def test_moves_accept_solver_move_indices(sim, connect):
    link = connect(sim.path)
    link.moves(parse_moves("F2 L'"))
    link.wait(timeout=5)
    assert sim.cube == apply(SOLVED, "F2 L'")
    assert isinstance(AckTimeout("x"), LinkError)
