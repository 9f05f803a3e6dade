"""MarlinLink, its G-code codec and the simulated Marlin 2.1 board (firmware_interface/marlin/).

Here only what Marlin does alone: line numbers and checksums, Resend, busy
keepalives, the M112 halt. The behaviour every line-based link shares is
tested once per dialect in test_line_links.py.
"""

import time

import pytest

from firmware_interface import DeviceFault
from firmware_interface.marlin.dialect import (
    checksum,
    move_command,
    numbered,
    parse_position,
    parse_reply,
    split_numbered,
)
from line_rigs import SOLVED, estop_mid_move, ready, rigs
from solver import apply

# ---------------------------------------------------------------- codec


def test_checksums_match_hand_computed_values():
    # 'N'^'1'^' '^'G'^'9'^'1' = 0x4E^0x31^0x20^0x47^0x39^0x31 = 0x10
    assert checksum("N1 G91") == 16
    assert numbered(1, "G91") == b"N1 G91*16\n"
    # 'N'^'0'^' '^'M'^'1'^'1'^'0'^' '^'N'^'0' = 0x4D^0x31^0x31^0x30 ^ ('N'^'0'^' ')*2 ^ ... = 125
    assert checksum("N0 M110 N0") == 125
    assert numbered(0, "M110 N0") == b"N0 M110 N0*125\n"
    assert split_numbered("N12 G1 X9*77") == (12, "G1 X9", 77)
    assert split_numbered("M112") == (None, "M112", None)


def test_reply_parsing():
    assert parse_reply("ok").kind == "ok" and parse_reply("ok").n is None
    ok = parse_reply("ok N42 P15 B3")
    assert (ok.kind, ok.n, ok.planner, ok.buffer) == ("ok", 42, 15, 3)
    assert parse_reply("Resend: 7").kind == "resend" and parse_reply("Resend: 7").n == 7
    assert parse_reply("rs N8").n == 8 and parse_reply("rs 9").n == 9
    assert parse_reply("busy: processing").kind == "busy"
    err = parse_reply("Error:Line Number is not Last Line Number+1, Last Line: 11")
    assert err.kind == "error" and err.line_error and err.n == 11
    err = parse_reply("Error:checksum mismatch, Last Line: 3")
    assert err.line_error and err.n == 3
    halted = parse_reply("Error:Printer halted. kill() called!")
    assert halted.halted and not halted.line_error
    assert parse_reply("start").kind == "start"
    assert parse_reply("echo:Marlin 2.1.2").kind == "banner" and parse_reply("Marlin 2.1.2.1").text == "2.1.2.1"
    assert parse_reply('echo:Unknown command: "M999"').kind == "echo"
    assert parse_position("X:90.00 Y:-180.00 Z:0.00 E:0.00 Count X:7200 Y:0 Z:0") == {
        "X": 90.0,
        "Y": -180.0,
        "Z": 0.0,
        "E": 0.0,
    }


def test_move_encoding():
    assert move_command([("Y", 1)], 90.0, 6000) == "G1 Y90 F6000"
    assert move_command([("X", -2)], 90.0, 6000) == "G1 X-180 F6000"
    # a pair: both axes in one line, F along the path so each axis runs at the feed
    assert move_command([("X", 1), ("I", -1)], 90.0, 6000) == "G1 X90 I-90 F8485.2814"


# ---------------------------------------------------------------- link against the simulator


@pytest.fixture
def rig():
    with rigs("marlin") as make:
        yield make


def test_handshake_waits_for_the_boot_banner(rig):
    sim, link = rig({"boot_ms": 300})  # resets on open, deaf while in its bootloader
    info = ready(link)
    assert info["dialect"] == "marlin" and info["firmware"] == "Marlin 2.1.2"
    assert info["motors"] == list("URFDLB")
    state = sim.info()
    assert state["relative"] and state["enabled"] and state["last_line"] == 3


def test_resend_is_honoured(rig):
    sim, link = rig()
    ready(link)
    link._write(numbered(50, "G1 X90"))  # out of order: Marlin refuses it and asks for its next line
    time.sleep(0.1)
    motions = link.plan([("R", 1), ("U", 1)])
    link.wait(motions, timeout=2)
    assert sim.cube == apply(SOLVED, "R U")
    assert sim.info()["line_errors"] >= 1 and link.status()["counters"]["resends"] >= 1
    assert link.status()["healthy"]


def test_error_from_the_board_surfaces(rig):
    sim, link = rig()
    ready(link)
    sim.send("Error:Heating failed, system stopped! Heater_ID: 0")
    time.sleep(0.05)
    with pytest.raises(DeviceFault) as caught:
        link.plan([("R", 1)])
    assert caught.value.code == "ERROR" and "Heating failed" in str(caught.value)
    assert link.status()["fault"]["code"] == "ERROR"
    assert link.clear()["position"]["R"] == 0.0  # not a halt: clear() goes on
    link.turn("R", 1).wait(2)


def test_a_lost_keepalive_during_m400_is_not_silence(rig):
    sim, link = rig({"busy_ms": 2500})  # as if every other keepalive of a 1.25 s M113 were lost
    ready(link)
    link.set_speed(2600).wait(1)  # the M400 waits 2.6 s: 2.5 s without a word, over the 2 s silence
    link.turn("F", 1).wait(6)
    assert link.status()["healthy"] and sim.cube == apply(SOLVED, "F")


def test_after_an_estop_the_board_stays_halted_until_reset(rig):
    """M112 halts Marlin until a reset: clear() refuses and says so; connecting again (the port reopened, which
    resets the board) goes on. The e-stop itself: test_line_links.py."""
    sim, link = rig()
    ready(link)
    estop_mid_move(sim, link)
    with pytest.raises(DeviceFault, match="reset"):
        link.clear()
    assert link.status()["halted"] and sim.info()["halted"]
    ready(link)
    link.turn("U", 1).wait(2)
    assert sim.cube == apply(SOLVED, "L U")


def test_busy_does_not_time_out(rig):
    sim, link = rig({"busy_ms": 300})
    ready(link)
    link.set_speed(2600).wait(1)  # one quarter turn in 2.6 s: longer than the 2 s silence
    link.turn("F", 1).wait(5)
    assert link.status()["counters"]["busy"] >= 5 and link.status()["healthy"]
    assert sim.cube == apply(SOLVED, "F")
