"""MarlinLink, its G-code codec and the simulated Marlin 2.1 board (marlin_sim.py)."""

import time

import pytest

from firmware_interface import DeviceFault, DeviceReset, DeviceSilent
from firmware_interface.marlin.dialect import (
    checksum,
    move_command,
    numbered,
    parse_position,
    parse_reply,
    split_numbered,
)
from firmware_interface.marlin.link import MarlinLink, MarlinTiming
from firmware_interface.marlin.simulator import SimulatedMarlin
from solver import apply
from solver.puzzles.cube.cubie import solved_facelets

SOLVED = solved_facelets(3)
FEED = 270000.0  # a quarter turn (90 units) in 20 ms
NAMES = {1: "", -1: "'", 2: "2", -2: "2"}


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
    made = []

    def make(sim_options=None, **link_options):
        sim = SimulatedMarlin(**(sim_options or {}))
        sim.start()
        link = MarlinLink(sim.path, **{"feed": FEED, **link_options})
        made.append((sim, link))
        return sim, link

    yield make
    for sim, link in made:
        link.close()
        sim.stop()


def ready(link):
    info = link.connect()
    link.enable().wait(2)
    link.home().wait(2)
    return info


def random_plan(count, seed):
    import random

    rng = random.Random(seed)
    entries, moves = [], []
    for _ in range(count):
        face = rng.choice("URFDLB")
        q = rng.choice((1, -1, 2))
        if rng.random() < 0.3:
            other = {"U": "D", "D": "U", "R": "L", "L": "R", "F": "B", "B": "F"}[face]
            q2 = rng.choice((1, -1, 2))
            entries.append(((face, q), (other, q2)))
            moves += [face + NAMES[q], other + NAMES[q2]]
        else:
            entries.append((face, q))
            moves.append(face + NAMES[q])
    return entries, " ".join(moves)


def test_handshake_waits_for_the_boot_banner(rig):
    sim, link = rig({"boot_ms": 300})  # resets on open, deaf while in its bootloader
    info = ready(link)
    assert info["dialect"] == "marlin" and info["firmware"] == "Marlin 2.1.2"
    assert info["motors"] == list("URFDLB")
    state = sim.info()
    assert state["relative"] and state["enabled"] and state["last_line"] == 3


def test_turns_and_pairs_end_with_the_right_cube(rig):
    sim, link = rig()
    ready(link)
    entries, moves = random_plan(25, seed=1)
    motions = link.plan(entries)
    for index, motion in enumerate(motions):
        motion.wait(5)
        # truthful: when a motion is done, the board has finished that move
        assert len(sim.moves_done) >= index + 1
    assert sim.cube == apply(SOLVED, moves)
    assert len(sim.moves_done) == 25
    assert link.status()["healthy"] and link.status()["done_through"] == motions[-1].mid


@pytest.mark.parametrize("advanced_ok", [False, True])
def test_exactly_once_through_a_lossy_line(rig, advanced_ok):
    faults = {"drop": 0.05, "corrupt": 0.01, "duplicate": 0.01, "seed": 7}
    sim, link = rig({"faults": faults, "advanced_ok": advanced_ok}, timing=MarlinTiming(probe_after=0.1), feed=FEED * 4)
    ready(link)
    entries, moves = random_plan(200, seed=2)
    motions = link.plan(entries)
    link.wait(motions, timeout=30)
    link.query()  # M400 is behind every move: all done by M114's ok
    assert sim.cube == apply(SOLVED, moves)
    assert len(sim.moves_done) == 200  # no move doubled, none lost
    numbers = [n for n, command in sim.accepted if n is not None and not command.startswith("M110")]
    assert len(numbers) == len(set(numbers)) and numbers == sorted(numbers)
    counts = sim.info()
    assert counts["to_device"]["dropped"] and counts["to_host"]["dropped"] and counts["line_errors"]
    assert link.status()["counters"]["resends"]


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


def test_reset_mid_run_is_device_reset(rig):
    sim, link = rig()
    ready(link)
    motions = link.plan([("R", 1)] * 40)
    motions[2].wait(2)
    sim.reset()
    with pytest.raises(DeviceReset):
        motions[-1].wait(2)
    assert not link.status()["connected"]
    ready(link)  # a new session works
    link.turn("U", 1).wait(2)


def test_silence_is_device_silent(rig):
    sim, link = rig()
    ready(link)
    link.plan([("R", 1)] * 3)[0].wait(2)
    sim.go_silent()
    motion = link.turn("U", 1)
    with pytest.raises(DeviceSilent, match="no reply"):
        motion.wait(7)  # an earlier M400 is still unanswered: busy_silence (5 s) applies


def test_a_lost_keepalive_during_m400_is_not_silence(rig):
    sim, link = rig({"busy_ms": 2500})  # as if every other keepalive of a 1.25 s M113 were lost
    ready(link)
    link.set_speed(2600).wait(1)  # the M400 waits 2.6 s: 2.5 s without a word, over the 2 s silence
    link.turn("F", 1).wait(6)
    assert link.status()["healthy"] and sim.cube == apply(SOLVED, "F")


def test_estop_stops_the_queue_and_later_moves_fail(rig):
    sim, link = rig()
    ready(link)
    motions = link.plan([("R", 1)] * 50)
    motions[1].wait(2)
    sent = time.monotonic()
    result = link.estop(wait=False).result(1)
    assert result["acknowledged_s"] >= 0  # how fast: bench/controllers.py
    assert sim.kill_times and sim.kill_times[0] >= sent
    done = len(sim.moves_done)
    time.sleep(0.1)
    assert len(sim.moves_done) == done < 50
    with pytest.raises(DeviceFault) as caught:
        motions[-1].wait(1)
    assert caught.value.code == "ESTOP"
    with pytest.raises(DeviceFault):
        link.turn("U", 1)
    with pytest.raises(DeviceFault, match="reset"):
        link.clear()
    assert link.status()["halted"]


def test_busy_does_not_time_out(rig):
    sim, link = rig({"busy_ms": 300})
    ready(link)
    link.set_speed(2600).wait(1)  # one quarter turn in 2.6 s: longer than the 2 s silence
    link.turn("F", 1).wait(5)
    assert link.status()["counters"]["busy"] >= 5 and link.status()["healthy"]
    assert sim.cube == apply(SOLVED, "F")
