"""GrblLink, its grblHAL codec and the simulated grblHAL board (firmware_interface/grbl/).

Status reports, alarms, feed holds, lines garbled with no checksum to catch
it, faces beside the turning one: grbl's own. Turns, faulty lines, resets,
silence and the e-stop, as MarlinLink has them too, are in test_line_links.py.
"""

import inspect
import time

import pytest

from firmware_interface import ConfigError, DeviceFault, HandshakeError
from firmware_interface.grbl.dialect import (
    LINE_NOISE_ERRORS,
    describe_alarm,
    describe_error,
    move_line,
    parse_axes_info,
    parse_reply,
    parse_status,
)
from firmware_interface.grbl.link import GrblLink
from firmware_interface.grbl.machine import GrblMachine
from firmware_interface.marlin.link import MarlinLink
from line_rigs import FEED, SOLVED, estop_mid_move, ready, rigs
from solver import apply

# ---------------------------------------------------------------- codec


def test_status_reports():
    idle = parse_status("<Idle|MPos:90.000,-180.000,0.000,0.000,0.000,0.000|Bf:35,1023|FS:0,0|WCO:1.000,0,0,0,0,0>")
    assert idle.state == "Idle" and idle.substate is None and idle.label == "Idle"
    assert idle.machine == (90.0, -180.0, 0.0, 0.0, 0.0, 0.0) and idle.wco == (1.0, 0, 0, 0, 0, 0)
    held = parse_status("<Hold:0|WPos:10.000,0.000,0.000|FS:0,0|WCO:80.000,0.000,0.000>")
    assert (held.state, held.substate, held.label) == ("Hold", 0, "Hold:0")
    assert held.mpos is None and held.machine == (90.0, 0.0, 0.0)  # WPos + WCO
    assert parse_status("<Run|WPos:1.000,2.000,3.000|FS:500,0>").machine is None  # no WCO in this one
    assert parse_status("<Alarm:3|MPos:0.000,0.000,0.000>").substate == 3
    assert parse_status("<Run|MPos:0.000,0.000,0.000|FS:27000,0>").feed == 27000.0
    for damaged in (
        "<Idle|MPos:9O.000,0.000>",
        "<Idel|MPos:0.000>",
        "<Idle|MPos:0.000",
        "<Idle|Bf:35,1023>",
        "<Idle|MPos:0.000|FS:0,0|garbage>",
    ):
        assert parse_status(damaged) is None, damaged


def test_replies():
    assert parse_reply("ok").kind == "ok"
    error = parse_reply("error:20")
    assert (error.kind, error.code) == ("error", 20)
    assert describe_error(20) == "error:20 unsupported or invalid G-code command"
    alarm = parse_reply("ALARM:1")
    assert (alarm.kind, alarm.code) == ("alarm", 1) and describe_alarm(1) == "ALARM:1 hard limit triggered"
    assert describe_alarm(3) == "ALARM:3 reset while in motion"
    assert parse_reply("error:2x").code is None  # damaged: no code rather than a wrong one
    assert parse_reply("GrblHAL 1.1f ['$' or '$HELP' for help]").text == "GrblHAL 1.1f"
    assert parse_reply("Grbl 1.1h ['$' for help]").text == "Grbl 1.1h"
    assert parse_reply("\x93\x07GrblHAL 1.1f ['$' or '$HELP' for help]").kind == "banner"
    assert parse_reply("[MSG:'$H'|'$X' to unlock]").text == "'$H'|'$X' to unlock"
    assert parse_reply("[VER:1.1f.20240101:]").kind == "info"
    assert parse_axes_info("AXS:6:XYZABC") == "XYZABC" and parse_axes_info("OPT:VN,35,1024") is None
    report = parse_reply("#%<Run|MPos:1.000,2.000,3.000|FS:100,0>")  # noise ahead of a report
    assert report.kind == "status" and report.status.mpos == (1.0, 2.0, 3.0)


def test_move_lines_are_absolute_and_pin_the_modal_state():
    assert move_line({"Y": 90.0}, {"Y": 0.0}, 6000) == "G90 G21 G94 G53 G1 Y90 F6000"
    assert move_line({"X": -180.0}, {"X": 90.0}, 6000) == "G90 G21 G94 G53 G1 X-180 F6000"
    # a pair: F along the path, so that each axis runs at the feed
    assert move_line({"X": 90.0, "A": -90.0}, {"X": 0.0, "A": 0.0}, 6000) == "G90 G21 G94 G53 G1 X90 A-90 F8485.2814"
    assert {1, 2, 20, 22, 25} <= LINE_NOISE_ERRORS and not {5, 8, 9, 15, 50} & LINE_NOISE_ERRORS


def test_same_public_interface_as_marlin():
    public = lambda cls: {n for n, _ in inspect.getmembers(cls) if not n.startswith("_")}  # noqa: E731
    assert public(MarlinLink) <= public(GrblLink)
    with pytest.raises(ConfigError, match="grblHAL axis letters"):
        GrblLink("/dev/null", axes={"U": "X", "R": "Y", "F": "Z", "D": "I", "L": "J", "B": "K"})


# ---------------------------------------------------------------- the simulated board, without a port


class Board:
    """A GrblMachine fed by hand, with its own clock."""

    def __init__(self, **options):
        self.said, self.done, self.now = [], [], 0.0
        self.machine = GrblMachine(letters="XYZABC", say=self.said.append, finished=self.done.append, **options)

    def send(self, data: bytes, at: float | None = None) -> list[str]:
        self.now = self.now if at is None else at
        del self.said[:]
        self.machine.receive(data, self.now)
        self.machine.advance(self.now)
        return list(self.said)

    def state(self, at: float) -> str:
        return self.send(b"?", at)[0]


def test_the_simulated_board_speaks_grbl():
    board = Board(hold_s=0.05)
    assert board.send(b"G91 G1 X90 F5400\n", 0.0) == ["ok"]  # 90 units at 5400/min: one second
    assert board.state(0.1).startswith("<Run|MPos:0.000,0.000,0.000,0.000,0.000,0.000|Bf:15,1024|FS:5400,0|WCO:")
    board.send(b"!", 0.2)
    assert board.state(0.22).startswith("<Hold:1|") and board.state(0.3).startswith("<Hold:0|")
    board.send(b"~", 0.5)  # 0.8 s of the move left
    assert board.state(1.25).startswith("<Run|") and not board.done
    assert board.state(1.35).startswith("<Idle|MPos:90.000,0.000,") and len(board.done) == 1
    assert board.send(b"g90 (absolute) g1 y-90 ; a comment\n", 2.0) == ["ok"]
    assert board.send(b"G4 P0.5\n") == ["ok"]
    for line, code in [
        (b"G1 X\n", 2),
        (b"5 G1\n", 1),
        (b"Q5\n", 20),
        (b"G0 G1 X1\n", 21),
        (b"X1 X2\n", 25),
        (b"G92 G1 X0\n", 24),
        (b"G4\n", 28),
        (b"G80 X1\n", 31),
        (b"$Y\n", 3),
        (b"F-1\n", 4),
    ]:
        assert board.send(line) == [f"error:{code}"], line
    assert board.send(b"\x18", 2.1) == [
        "ALARM:3",
        "GrblHAL 1.1f ['$' or '$HELP' for help]",
        "[MSG:'$H'|'$X' to unlock]",
    ]  # reset while moving: locked
    assert board.state(2.2).startswith("<Alarm|MPos:90.000,0.000,")  # the cut move never happened
    assert board.send(b"G1 X0\n") == ["error:9"]
    assert board.send(b"$X\n") == ["[MSG:Caution: Unlocked]", "ok"]
    assert board.send(b"$I\n")[2:] == ["[AXS:6:XYZABC]", "[FIRMWARE:grblHAL]", "ok"]
    assert board.send(b"\x18", 2.3) == ["GrblHAL 1.1f ['$' or '$HELP' for help]"]  # idle: no alarm
    assert board.send(b"G1 X10\n") == ["error:22"]  # a reset forgets the feed rate


# ---------------------------------------------------------------- link against the simulator


@pytest.fixture
def rig():
    with rigs("grblhal") as make:
        yield make


def test_handshake_waits_for_the_banner_and_sets_the_board_up(rig):
    sim, link = rig({"boot_ms": 300})  # resets on open, deaf while it boots
    info = ready(link)
    assert info["dialect"] == "grblhal" and info["protocol"] == 1
    assert info["firmware"] == "grblHAL 1.1f.20240101" and info["axis_count"] == 6
    assert info["motors"] == list("URFDLB") and info["axis_letters"] == "XYZABC"
    assert list(dict.fromkeys(sim.accepted)) == ["$I", "$X", "G90G21G94"]
    assert link.query()["position"] == dict.fromkeys("URFDLB", 0.0)


def test_a_board_that_does_not_reset_on_open_is_soft_reset(rig):
    sim, link = rig({"reset_on_open": False, "classic": True})  # banner "Grbl 1.1h ['$' for help]"
    link.connect()
    link.close()
    again = GrblLink(sim.path, feed=FEED)  # the banner came and went: only a soft reset brings it back
    try:
        assert ready(again)["firmware"] == "grblHAL 1.1f.20240101"
        assert sim.estop_times()
        again.turn("R", 1).wait(2)
    finally:
        again.close()
    assert sim.cube == apply(SOLVED, "R")


def test_what_is_not_a_usable_grbl_board_fails_the_handshake(rig):
    sim, link = rig({"axis_count": 4, "axes": {"U": "X", "R": "Y", "F": "Z", "D": "A"}})
    with pytest.raises(HandshakeError, match="the board has axes XYZA; axes B, C are mapped to faces"):
        link.connect()


def test_a_board_that_starts_in_alarm_is_unlocked(rig):
    sim, link = rig({"start_locked": True})
    ready(link)
    assert not sim.info()["locked"]
    link.turn("F", -1).wait(2)
    assert sim.cube == apply(SOLVED, "F'")


def test_work_positions_and_more_axes(rig):
    # WPos reports with G92 offsets left in the board, and an 8-axis board with faces on U and V
    axes = {"U": "X", "R": "Y", "F": "Z", "D": "U", "L": "V", "B": "C"}
    sim, link = rig({"axes": axes, "axis_count": 8, "report_wpos": True, "offsets": {"X": 12.5, "U": -3.0}}, axes=axes)
    info = ready(link)
    assert info["axis_letters"] == "XYZABCUV"
    link.plan([("D", 1), (("R", 2), ("L", -1)), ("U", -1)])[-1].wait(2)
    assert sim.cube == apply(SOLVED, "D R2 L' U'")
    assert link.query()["position"] == {"U": -90.0, "R": 180.0, "F": 0.0, "D": 90.0, "L": -90.0, "B": 0.0}


@pytest.mark.parametrize(
    "find, replace, why",
    [
        ("Y90 ", "Y9Q ", "error"),  # error:2 bad number format: sent again
        ("Y90 ", "Y30 ", "position"),  # a valid line to the wrong place: found from the position
        ("Y90 ", "Z90 ", "position"),  # the wrong face: put back first, then the right one
        ("F270000", "F2.0000", "runaway"),  # a crawl: held, reset, sent again
    ],
)
def test_a_garbled_line_is_found_and_sent_again(rig, find, replace, why):
    sim, link = rig()
    ready(link)
    sim.mangle_next(find, replace)
    link.plan([("U", 1), ("R", 1), ("F", 2)])[-1].wait(5)
    assert sim.cube == apply(SOLVED, "U R F2")
    counters = link.status()["counters"]
    assert counters["resends"] >= 1 and link.status()["healthy"]
    if why == "error":
        assert sim.info()["errors"] == [2] and counters["line_errors"] == 1
    if why == "runaway":
        assert counters["runaways"] == 1 and len(sim.estop_times()) == 1


def test_a_refused_line_is_a_fault(rig):
    sim, link = rig()
    ready(link)
    sim.mangle_next("G90 G21 G94 G53 G1 Z90 F270000", "$H", times=2)  # refused twice: not line noise
    with pytest.raises(DeviceFault) as caught:
        link.turn("F", 1).wait(2)
    assert caught.value.code == "ERROR" and "error:5 homing is not enabled" in str(caught.value)
    link.clear()
    link.turn("F", 1).wait(2)
    assert sim.cube == apply(SOLVED, "F")


def test_an_alarm_is_a_fault_that_says_what_it_means(rig):
    sim, link = rig()
    ready(link)
    link.turn("R", 1).wait(2)
    sim.alarm(1)
    time.sleep(0.05)
    with pytest.raises(DeviceFault) as caught:
        link.turn("U", 1)
    assert caught.value.code == "ALARM" and "ALARM:1 hard limit triggered" in str(caught.value)
    assert link.status()["fault"]["code"] == "ALARM"
    assert link.clear()["position"]["R"] == 90.0  # $X, then on from where the board is
    link.turn("U", 1).wait(2)
    assert sim.cube == apply(SOLVED, "R U")


def test_a_feed_hold_nobody_asked_for_is_resumed(rig):
    sim, link = rig()
    ready(link)
    link.set_speed(200).wait(1)
    motions = link.plan([("R", 1), ("U", 1)])
    motions[0].wait_received(2)
    sim.feed_hold()
    link.wait(motions, timeout=3)
    assert link.status()["counters"]["resumes"] >= 1
    assert sim.cube == apply(SOLVED, "R U")


def test_after_an_estop_clear_and_a_new_plan_work(rig):
    """The reset grblHAL stays in alarm (ALARM:3) until clear() unlocks it. The e-stop itself: test_line_links.py."""
    sim, link = rig()
    ready(link)
    estop_mid_move(sim, link)
    assert sim.info()["locked"] and link.status()["fault"]["code"] == "ESTOP"
    assert link.clear()["state"] == "Idle" and not sim.info()["locked"]
    link.set_speed(20).wait(1)
    link.plan([("U", 1), (("F", 1), ("B", 1))])[-1].wait(2)
    assert sim.cube == apply(SOLVED, "L U F B")


def test_a_face_beside_the_turning_one_moving_too_is_a_fault(rig):
    """A garbled line that turns F while R turns: no later line can undo that, so the move fails and says so."""
    sim, link = rig()
    ready(link)
    sim.mangle_next("G1 Y90", "G1 Z45 Y90")
    with pytest.raises(DeviceFault) as caught:
        link.turn("R", 1).wait(5)
    assert caught.value.code == "STRAY" and "F turned during" in str(caught.value)


def test_one_garbled_report_of_a_face_beside_is_no_fault(rig):
    """A status report has no checksum either: F seen moved in one report alone is not believed."""
    sim, link = rig()
    ready(link)
    sim.mangle_next("Idle|MPos:0.000,90.000,0.000", "Idle|MPos:0.000,90.000,45.000", direction="to_host")
    link.turn("R", 1).wait(5)
    assert link.status()["healthy"] and sim.cube == apply(SOLVED, "R")


def test_the_opposite_face_moving_too_is_put_back(rig):
    """L moving with R jams nothing: it is turned back and the move goes on."""
    sim, link = rig()
    ready(link)
    sim.mangle_next("G1 Y90", "G1 B180 Y90")
    link.turn("R", 1).wait(5)
    assert sim.cube == apply(SOLVED, "R")
