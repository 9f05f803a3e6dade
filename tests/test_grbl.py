"""GrblLink, its grblHAL codec and the simulated grblHAL board (firmware_interface/grbl/).

Status reports, alarms, feed holds, lines garbled with no checksum to catch
it, faces beside the turning one: grbl's own. Turns, faulty lines, resets,
silence and the e-stop, as MarlinLink has them too, are in test_line_links.py.
The last part runs on the stock grbl binary (shared/stock-firmware) under
simavr and on our simulator of that build alike: the simulator's answers,
identification, alarm recovery, the homing lock and the e-stop's late banner.
It skips where simavr or the binary is missing (fails instead with
ROBOTD_REQUIRE_AVR=1 where the toolchain is installed, as
test_stock_firmware.py does).
"""

import inspect
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import serial

import devices
from firmware_interface import ConfigError, DeviceFault, HandshakeError, avr_board
from firmware_interface.grbl.alarms import alarm_advice, describe_alarm, needs_reset, settings_warnings
from firmware_interface.grbl.dialect import (
    DEFAULT_AXES,
    LINE_NOISE_ERRORS,
    describe_error,
    move_line,
    parse_axes_info,
    parse_reply,
    parse_status,
)
from firmware_interface.grbl.identity import BoardReport, not_grbl, refusal, too_old
from firmware_interface.grbl.limits import move_feed as grbl_move_feed
from firmware_interface.grbl.link import GrblLink
from firmware_interface.grbl.machine import UNLOCK_HINT, GrblMachine
from firmware_interface.grbl.simulator import SimulatedGrbl
from firmware_interface.marlin.link import MarlinLink
from firmware_interface.marlin.simulator import SimulatedMarlin
from firmware_interface.pin_trace import motion_spans, step_cycles
from firmware_interface.stock_firmware import missing_stock, stock_board
from firmware_interface.turn_speed import least_turn_s
from line_rigs import FEED, SOLVED, estop_mid_move, planned_spans, ready, rigs
from robot_doubles import wait_for
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


def test_what_the_board_says_of_itself_is_judged():
    assert (parse_reply("$20=1").kind, parse_reply("$20=1").code, parse_reply("$20=1").text) == ("setting", 20, "1")
    assert too_old("Grbl 0.9j") and too_old("Grbl 1.1q") is None and too_old("GrblHAL 1.1f") is None
    assert "set [controller] kind = 'marlin'" in not_grbl("echo:Unknown command") and not_grbl(">:error:7") is None
    assert "robotd's own firmware" in not_grbl("BOOT proto=2 boot=00C0FFEE")
    report = BoardReport(letters="XYZ")
    assert "has 3 axes (XYZ) and robotd needs one per face, 6" in refusal(report, dict(DEFAULT_AXES))
    assert needs_reset(1) and needs_reset(2) and not needs_reset(3) and not needs_reset(None)
    assert "nearest quarter turn before anything moves again" in alarm_advice(3) and "set $22=0" in alarm_advice(9)
    assert [w.split(" (")[0] for w in settings_warnings({20: "1", 21: "0", 22: "1", 13: "1", 1: "255"})] == [
        "soft limits are on",
        "homing is on",
        "positions are reported in inches",
    ]
    idle_lock = settings_warnings({1: "25"})  # grbl's default: 25 ms after each move, then the drivers off
    assert len(idle_lock) == 1 and "$1=25: after every move grbl waits" in idle_lock[0] and "set $1=255" in idle_lock[0]


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


def test_a_turn_is_planned_with_the_board_s_acceleration_counted():
    stock = {110: "30000.000", 111: "30000.000", 120: "5000.000", 121: "5000.000"}  # the grbl-Mega-5X build
    feed, warning = grbl_move_feed(stock, "XY", ["X", "Y"], 90.0, 90 * 60 / 0.3)  # a quarter turn in 0.3 s
    assert warning is None and least_turn_s(90, feed / 60, 5000) == pytest.approx(0.3)
    feed, warning = grbl_move_feed(stock, "XY", ["X", "Y"], 90.0, 90 * 60 / 0.15)
    assert feed == 30000 and "grbl's maximum rate of 30000 units/min ($110-$115)" in warning
    assert "it takes 0.28 s" in warning and "set [rig] quarter_turn_s to 0.28 or more" in warning
    assert grbl_move_feed({110: "30000", 120: "x"}, "X", ["X"], 90.0, 6000.0) == (6000.0, None)  # garbled
    quick = {110: "1000000", 120: "1000000000"}  # acceleration that costs nothing: the feed as it is
    assert grbl_move_feed(quick, "X", ["X"], 90.0, 270000.0) == (270000.0, None)


def test_the_simulated_board_speaks_grbl():
    board = Board(hold_s=0.05)
    assert board.send(b"G1 X0 F5400\n", 0.0) == ["ok"]  # to where it is: nothing to do
    assert board.send(b"G91 G1 X90 F5400\n", 0.0) == ["ok"]  # 90 units at 5400/min: one second
    # the live position (grblHAL's acceleration here is as good as instant)
    assert board.state(0.1).startswith("<Run|MPos:9.000,0.000,0.000,0.000,0.000,0.000|Bf:15,1024|FS:5400,0|WCO:")
    board.send(b"!", 0.2)
    assert board.state(0.22).startswith("<Hold:1|MPos:18.000,") and board.state(0.3).startswith("<Hold:0|MPos:18.000,")
    board.send(b"~", 0.5)  # 0.8 s of the move left, from where the hold stopped it
    assert board.state(1.25).startswith("<Run|MPos:85.500,") and board.done[-1].end["X"] == pytest.approx(18.0)
    assert board.state(1.35).startswith("<Idle|MPos:90.000,0.000,") and board.done[-1].end["X"] == 90.0
    assert board.send(b"g90 (absolute) g1 y-90 ; a comment\n", 2.0) == ["ok"]
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
        "",
        "GrblHAL 1.1f ['$' or '$HELP' for help]",
        "[MSG:'$H'|'$X' to unlock]",
    ]  # reset while moving: locked
    assert board.state(2.2).startswith("<Alarm|MPos:90.000,-9.000,")  # the motors stopped where they were
    assert board.send(b"G1 X0\n") == ["error:9"]
    assert board.send(b"$X\n") == ["[MSG:Caution: Unlocked]", "ok"]
    assert board.send(b"$I\n")[2:] == ["[AXS:6:XYZABC]", "[FIRMWARE:grblHAL]", "ok"]
    assert board.send(b"\x18", 2.3) == ["", "GrblHAL 1.1f ['$' or '$HELP' for help]"]  # idle: no alarm
    assert board.send(b"G1 X10\n") == ["error:22"]  # a reset forgets the feed rate
    report, ok = board.send(b"?\n")  # the line end after a '?' is an empty line: ok
    assert report.startswith("<Idle|MPos:90.000,-9.000,") and ok == "ok"
    # G4 answers once the motion before it and its dwell are over
    assert board.send(b"G91 G1 Z9 F5400\nG4 P0.5\n", 3.0) == ["ok"]
    assert board.send(b"", 3.5) == [] and board.send(b"", 3.7) == ["ok"]


def test_the_simulated_board_keeps_its_settings_and_alarms_on_a_soft_limit():
    board = Board()
    assert board.send(b"$20=1\n", 0.0) == ["error:10"]  # soft limits need homing on
    assert [board.send(line) for line in (b"$22=1\n", b"$20=1\n", b"$130=100\n", b"$99=1\n")] == [
        ["ok"],
        ["ok"],
        ["ok"],
        ["error:3"],
    ]
    assert "$130=100.000" in board.send(b"$$\n") and board.send(b"G1 X-50 F6000\n") == ["ok"]  # machine space: -100..0
    assert board.send(b"G1 X10\n", 1.0) == ["ALARM:2", "[MSG:Reset to continue]"]
    assert board.send(b"$X\n") == [] and board.state(1.1).startswith("<Alarm|MPos:-50.000,")  # deaf to lines
    assert board.send(b"\x18", 1.2) == ["ok", "", "GrblHAL 1.1f ['$' or '$HELP' for help]", "[MSG:'$H'|'$X' to unlock]"]
    assert board.send(b"G1 X-60 F6000\n") == ["error:9"]
    assert board.send(b"$X\n") == ["[MSG:Caution: Unlocked]", "ok"]
    board.machine.power_on()  # homing on: locked from power-up
    assert board.machine.locked and board.send(b"$H\n", 2.0)[0] == "ALARM:9"


# ---------------------------------------------------------------- link against the simulator


@pytest.fixture
def rig():
    with rigs("grblhal") as make:
        yield make


def test_handshake_waits_for_the_banner_and_sets_the_board_up(rig):
    sim, link = rig({"boot_ms": 300})  # resets on open, deaf while it boots
    info = ready(link)
    assert info["dialect"] == "grblhal" and info["protocol"] == 1
    assert info["firmware"] == "grblHAL 1.1f" and info["build_date"] == "20240101" and info["axis_count"] == 6
    assert info["motors"] == list("URFDLB") and info["axis_letters"] == "XYZABC" and info["warnings"] == []
    assert list(dict.fromkeys(sim.accepted)) == ["$I", "$$", "$X", "G90G21G94"]
    assert link.query()["position"] == dict.fromkeys("URFDLB", 0.0)


def test_a_board_that_does_not_reset_on_open_is_soft_reset(rig):
    sim, link = rig({"reset_on_open": False, "classic": True})  # banner "Grbl 1.1q ['$' for help]"
    link.connect()
    link.close()
    again = GrblLink(sim.path, feed=FEED)  # the banner came and went: only a soft reset brings it back
    try:
        assert ready(again)["firmware"] == "Grbl 1.1q"
        assert sim.estop_times()
        again.turn("R", 1).wait(2)
    finally:
        again.close()
    assert sim.cube == apply(SOLVED, "R")


def test_a_board_booting_past_the_banner_wait_answers_the_handshakes_reset_late_and_connects(rig):
    # It resets on open, boots for longer than connect() waits for a banner, and takes the 0x18 that connect()
    # then sends as it boots: its boot banner ends the handshake, and the 0x18's banner follows 0.25 s later,
    # in the middle of the set-up, whose lines it loses. That is the handshake's own reset, not a board reset.
    sim, link = rig({"classic": True, "boot_ms": 700, "hears_while_booting": True})
    assert ready(link)["firmware"] == "Grbl 1.1q"
    assert len(sim.estop_times()) == 1 and link.status()["healthy"]
    link.turn("R", 1).wait(2)
    assert sim.cube == apply(SOLVED, "R")


def test_what_is_not_a_usable_grbl_board_fails_the_handshake(rig):
    sim, link = rig({"axis_count": 4, "axes": {"U": "X", "R": "Y", "F": "Z", "D": "A"}})
    with pytest.raises(HandshakeError, match=r"the board has 4 axes \(XYZA\) and robotd needs one per face, 6"):
        link.connect()


def test_a_board_that_starts_in_alarm_is_unlocked(rig):
    sim, link = rig({"start_locked": True})
    assert "grbl was locked in alarm at connect" in ready(link)["warnings"][0]
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
    resets_before = len(sim.estop_times())  # connect() resets a board whose banner comes late (a busy machine)
    sim.mangle_next(find, replace)
    link.plan([("U", 1), ("R", 1), ("F", 2)])[-1].wait(5)
    assert sim.cube == apply(SOLVED, "U R F2")
    counters = link.status()["counters"]
    assert counters["resends"] >= 1 and link.status()["healthy"]
    if why == "error":
        assert sim.info()["errors"] == [2] and counters["line_errors"] == 1
    if why == "runaway":
        assert counters["runaways"] == 1 and len(sim.estop_times()) - resets_before == 1


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
    sim.alarm(1)  # a limit switch: grbl reads nothing until a soft reset
    time.sleep(0.05)
    with pytest.raises(DeviceFault) as caught:
        link.turn("U", 1)
    assert caught.value.code == "ALARM" and "grbl raised ALARM:1 (hard limit triggered)" in str(caught.value)
    assert "set $21=0" in str(caught.value) and link.status()["fault"]["code"] == "ALARM"
    assert link.clear()["position"]["R"] == 90.0  # soft reset, $X, then on from where the board is
    status = link.status()
    assert status["counters"]["soft_resets"] == 1 and status["alarm"]["code"] == 1 and status["alarm"]["cleared"]
    link.turn("U", 1).wait(2)
    assert sim.cube == apply(SOLVED, "R U")


def test_a_limit_alarm_whose_words_were_lost_is_reset_when_x_goes_unanswered(rig):
    """ALARM:1 and [MSG:Reset to continue] garbled on the way: $X draws no reply twice, so clear() resets first."""
    sim, link = rig()
    ready(link)
    sim.mangle_next("ALARM:1", "ALARM:%", direction="to_host")
    sim.mangle_next("Reset to continue", "Reset to c#ntinue", direction="to_host")
    sim.alarm(1)
    time.sleep(0.05)
    with pytest.raises(DeviceFault, match=r"grbl raised ALARM: \(its code was not received\)"):
        link.turn("U", 1)
    assert link.clear()["state"] == "Idle" and link.status()["counters"]["soft_resets"] == 1
    link.turn("U", 1).wait(2)
    assert sim.cube == apply(SOLVED, "U")


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


# ---------------------------------------------------------------- the stock grbl binary, and our simulator of it
# Each test runs on shared/stock-firmware/grbl-mega-5x-6axis.elf under simavr ("stock") and on SimulatedGrbl as
# that build ("sim"): what the binary does, the simulator must do too.

GRBL_BANNER = "Grbl 1.1q ['$' for help]"
FITS_NOT = {"U": "X", "R": "Y", "F": "Z", "D": "A", "L": "U", "B": "V"}  # U and V: letters of an 8-axis grblHAL


def stock_grbl(kind: str):
    """The binary on the simulated board, or our simulator of it; not started."""
    if kind == "sim":
        return SimulatedGrbl(classic=True, reset_on_open=False)  # the binary does not reset when the port opens
    return stock_grbl_traced(None)


def stock_grbl_traced(trace):
    """The binary on the simulated board, writing its STEP edges to ``trace`` (None: nowhere); not started."""
    devices.require_avr(avr_board.missing_tools)
    why = missing_stock("grbl")
    if why:
        pytest.skip(why)
    return stock_board("grbl", trace=trace)


class StockRig:
    """A grbl board and the links opened on it, closed with it."""

    def __init__(self, board):
        self.board = board
        self.links: list[GrblLink] = []

    def link(self, **options) -> GrblLink:
        self.links.append(GrblLink(self.board.path, feed=FEED, **options))
        return self.links[-1]

    def close(self) -> None:
        for link in self.links:
            link.close()
        self.board.stop()


@pytest.fixture(params=["stock", "sim"])
def grbl(request):
    rig = StockRig(stock_grbl(request.param))
    rig.board.start()
    try:
        yield rig
    finally:
        rig.close()


class RawPort:
    """The board's port without a link: lines written by hand, replies read as they come."""

    def __init__(self, path: str):
        self.port = serial.Serial(path, 115200, timeout=0.02)

    def read(self, count: int, timeout: float = 2.0, grace: float = 0.05) -> list[str]:
        """``count`` lines (empty ones included), then any more within ``grace``; status reports cut to their
        state and machine position (the fields between differ from report to report)."""
        lines: list[str] = []
        deadline = time.monotonic() + timeout
        while len(lines) < count and time.monotonic() < deadline:
            lines += self._line()
        end = time.monotonic() + grace
        while time.monotonic() < end:
            lines += self._line()
        return lines

    def _line(self) -> list[str]:
        raw = devices.read_line(self.port)
        if not raw:
            return []
        line = raw.decode(errors="replace").rstrip("\r\n")
        if line.startswith("<"):
            state, mpos = line[1:-1].split("|")[:2]
            line = f"<{state}|{mpos}>"
        return [line]

    def send(self, data: str, count: int, timeout: float = 2.0, grace: float = 0.05) -> list[str]:
        self.port.write(data.encode("latin-1"))
        return self.read(count, timeout, grace)

    def boot(self) -> list[str]:
        return self.read(51, grace=0.2)[-5:]  # error:7, 46 settings, "", the banner, two >:error:7

    def close(self) -> None:
        self.port.close()


def configure(board, *settings: str) -> None:
    """``$`` settings written before a link connects, as a user would over a serial console."""
    raw = RawPort(board.path)
    try:
        assert GRBL_BANNER in raw.boot()
        for setting in settings:
            assert raw.send(setting + "\n", 1) == ["ok"], setting
    finally:
        raw.close()


ZEROS = ",".join(["0.000"] * 6)


@pytest.fixture
def raw(grbl):
    """The board's port without a link, its boot text read."""
    port = RawPort(grbl.board.path)
    try:
        port.boot()
        yield port
    finally:
        port.close()


def test_the_simulator_answers_as_the_stock_binary_does(grbl):
    raw = RawPort(grbl.board.path)
    try:
        assert raw.boot() == ["$135=180.000", "", GRBL_BANNER, ">:error:7", ">:error:7"]  # a blank EEPROM
        assert raw.send("$I\n", 4) == ["[VER:1.1q.20210103:]", "[AXS:6:XYZABC]", "[OPT:VNMGH,35,255,0]", "ok"]
        assert raw.send("?\n", 2) == [f"<Idle|MPos:{ZEROS}>", "ok"]  # '?' and an empty line
        assert raw.send("$20=1\n", 1) == ["error:10"]  # soft limits need homing on
        assert [raw.send(line, 1) for line in ("$22=1\n", "$20=1\n", "$131=100\n")] == [["ok"]] * 3
        # past the soft limit (machine space is -100..0 on Y now): no ok; nothing read until a soft reset
        assert raw.send("G1 Y10 F3000\n", 2) == ["ALARM:2", "[MSG:Reset to continue]"]
        assert raw.send("$X\n", 1, timeout=0.2) == [] and raw.send("?", 1) == [f"<Alarm|MPos:{ZEROS}>"]
        reset = ["", GRBL_BANNER, "[MSG:'$H'|'$X' to unlock]"]
        assert raw.send("\x18", 4) == ["ok", *reset]  # the alarming line's ok at last; still locked
        assert raw.send("G1 Y-10 F3000\n", 1) == ["error:9"]
        assert raw.send("$X\n", 2) == ["[MSG:Caution: Unlocked]", "ok"]
        assert raw.send("G1 Y-10\n", 1) == ["error:22"]  # the reset forgot the feed rate
        assert raw.send("G1 Y-50 F300\n", 1) == ["ok"]  # ten seconds, cut short by a reset: locked
        wait_for(lambda: raw.send("?", 1)[0].startswith("<Run|"), timeout_s=2)  # ok is planned, not yet moving
        assert raw.send("\x18", 4, timeout=2.0) == ["ALARM:3", *reset]
        assert raw.send("$X\n", 2) == ["[MSG:Caution: Unlocked]", "ok"]
        grbl.board.reset()  # power off and on: homing on ($22=1) locks it from the start
        assert raw.read(3) == reset and raw.send("?", 1) == [f"<Alarm|MPos:{ZEROS}>"]
    finally:
        raw.close()


MOTIONS = {  # G91 moves sent at once, each the time it took on the stock binary (first to last STEP edge)
    "a quarter turn (0.286 s)": ["G1 X90 F27000"],
    "the same slower (0.625 s)": ["G1 X90 F9000"],
    "two axes together (0.341 s)": ["G1 X90 Y90 F27000"],
    "a quarter turn in three parts (0.285 s)": ["G1 X30 F27000", "G1 X30", "G1 X30"],
    "one axis, then another (0.568 s)": ["G1 X90 F27000", "G1 Y90"],
    "one axis twice one way (0.487 s)": ["G1 X90 F27000", "G1 X90"],
    "one axis, then back (0.577 s)": ["G1 X90 F27000", "G1 X-90"],
}


def motion_s(kind: str, trace) -> list[float]:
    """How long each motion took: on the binary from its STEP edges, on our simulator from its planned segments
    (neither changes with the host's load)."""
    board = stock_grbl(kind) if kind == "sim" else stock_grbl_traced(trace)
    board.start()
    raw = RawPort(board.path)
    try:
        raw.boot()
        assert raw.send("G91\n", 1) == ["ok"]
        for lines in MOTIONS.values():
            raw.send("".join(line + "\n" for line in lines), len(lines))
            time.sleep(1.0)  # over, 0.3 s at least before the next
    finally:
        raw.close()
    if kind != "sim":
        board.stop()
        return motion_spans(step_cycles(trace))
    board.stop()
    return planned_spans(board.move_times, MOTIONS.values())


def test_the_simulator_speeds_up_and_brakes_as_the_stock_binary(tmp_path):
    """Rest to rest at each axis's $120 (the path's acceleration as each axis's share allows), parts along one
    line at full speed from one to the next, even once the first is running: the simulator's motions last as
    long as the binary's, within a step or two."""
    with ThreadPoolExecutor(2) as pool:
        real, ours = (pool.submit(motion_s, kind, tmp_path / "trace") for kind in ("stock", "sim"))
        spans = dict(zip(MOTIONS, zip(real.result(), ours.result())))
    assert len(real.result()) == len(MOTIONS)
    for motion, (real_s, simulated_s) in spans.items():
        assert real_s < simulated_s < real_s + 0.015, (motion, spans)


def _x(report: str) -> float:
    return float(report.split("MPos:")[1].split(",")[0])


def _report(raw, timeout_s: float = 2.5) -> str:
    """The next status report, asked for every 20 ms (other lines, and a ``?`` a reset loses, are skipped)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for line in raw.send("?", 1, timeout=0.02, grace=0.0):
            if line.startswith("<"):
                return line
    raise AssertionError("no status report")


def _reports_until(raw, state: str, timeout_s: float = 2.0) -> list[str]:
    reports = [_report(raw)]
    deadline = time.monotonic() + timeout_s
    while not reports[-1].startswith(f"<{state}|") and time.monotonic() < deadline:
        reports.append(_report(raw))
    return reports


def stops_mid_move(kind: str) -> dict[str, float]:
    """Units X ran on after a feed hold and after a soft reset, each sent 0.5 s into a move at 150 units/s (from
    the last status report before it), and where the hold's reset left X."""
    board = stock_grbl(kind)
    board.start()
    raw = RawPort(board.path)
    try:
        raw.boot()
        assert raw.send("G91\n", 1) == ["ok"]
        figures = {}
        for stop in ("hold", "reset"):
            assert raw.send("G1 X900 F9000\n", 1) == ["ok"]
            deadline = time.monotonic() + 0.5
            running = [_report(raw)]
            while time.monotonic() < deadline:
                running.append(_report(raw))
            assert all(report.startswith("<Run|") for report in running[2:]), running
            assert _x(running[0]) < _x(running[2]) < _x(running[-1]) < _x(running[0]) + 90, running  # live
            raw.port.write(b"!" if stop == "hold" else b"\x18")
            stopped = _reports_until(raw, "Hold:0" if stop == "hold" else "Alarm")
            figures[stop] = _x(stopped[-1]) - _x(running[-1])
            if stop == "hold":
                raw.port.write(b"\x18")  # after a completed hold: no alarm, the position kept
                assert GRBL_BANNER in raw.read(3, grace=0.3)
                figures["kept"] = _x(_report(raw)) - _x(stopped[-1])
            else:
                assert raw.send("$X\n", 2)[-2:] == ["[MSG:Caution: Unlocked]", "ok"]
        return figures
    finally:
        raw.close()
        board.stop()


def test_the_simulator_stops_mid_move_where_the_stock_binary_does():
    """A feed hold runs on 0.09 s as planned (13.5 units at 150 units/s), then brakes (2.25 units); a soft
    reset stops at once, where the motors are; a reset after a completed hold keeps the held position (the binary
    ran on 16.0-16.2 units after a hold, 0.7-1.4 after a reset; a simulator that froze the motion, 0)."""
    with ThreadPoolExecutor(2) as pool:
        real, ours = (pool.submit(stops_mid_move, kind) for kind in ("stock", "sim"))
        real_stop, our_stop = real.result(), ours.result()
    for figures in (real_stop, our_stop):
        assert 14 < figures["hold"] < 22 and 0 <= figures["reset"] < 8 and figures["kept"] == 0, (real_stop, our_stop)
    assert abs(real_stop["hold"] - our_stop["hold"]) < 3, (real_stop, our_stop)


def test_a_feed_hold_in_motion_decelerates_before_it_holds(raw):
    """``!`` during a move: Hold:1 (decelerating) for a while, then Hold:0 (the stock binary: 0.4 s)."""
    assert raw.send("G1 X900 F5400\n", 1) == ["ok"]  # ten seconds
    time.sleep(0.3)
    raw.send("!", 0, grace=0.1)
    assert raw.send("?", 1)[0].startswith("<Hold:1|")
    wait_for(lambda: raw.send("?", 1)[0].startswith("<Hold:0|"), timeout_s=2)


def test_a_move_reports_idle_only_after_the_step_idle_delay(raw):
    """$1=254 (the build's): the axis is at its target, but grbl says Run until it has held the drivers 254 ms."""
    assert raw.send("G1 X90 F27000\n", 1) == ["ok"]  # 0.2 s at the feed (0.26 s on the binary)
    answered = time.monotonic()
    wait_for(lambda: raw.send("?", 1)[0].startswith("<Idle|MPos:90.000,"), timeout_s=2)
    assert time.monotonic() - answered > 0.4  # the move, then 0.254 s of Run at the target


def test_a_status_asked_during_a_reset_is_answered_after_its_banner(raw):
    """A ``?`` in the last 0.25 s of a reset (grbl's start-up) is answered once the banner is out; one sooner
    in a reset in motion (before its ALARM:3) is lost."""
    raw.send("\x18", 0, grace=0.1)  # from idle: 0.25 s of start-up
    assert raw.send("?", 3) == ["", GRBL_BANNER, f"<Idle|MPos:{ZEROS}>"]
    assert raw.send("G1 X90 F5400\n", 1) == ["ok"]
    time.sleep(0.2)
    raw.send("\x18", 0, grace=0.05)  # in motion: ALARM:3 after 0.26 s, the banner after 1 s
    assert raw.send("?", 4, timeout=2.0, grace=0.3) == ["ALARM:3", "", GRBL_BANNER, UNLOCK_HINT]


def test_the_link_identifies_the_board_and_refuses_a_config_it_does_not_fit(grbl):
    refused = grbl.link(axes=FITS_NOT)
    with pytest.raises(HandshakeError) as caught:
        refused.connect()
    refused.close()
    assert "the board's axes are XYZABC; [controller.grblhal] axes maps L to U, B to V, which it lacks" in str(
        caught.value
    )
    info = grbl.link().connect()
    assert {key: info[key] for key in ("firmware", "version", "build_date", "build_options", "axis_letters")} == {
        "firmware": "Grbl 1.1q",
        "version": "1.1q",
        "build_date": "20210103",
        "build_options": "VNMGH",
        "axis_letters": "XYZABC",
    }
    assert (info["axis_count"], info["planner_blocks"], info["rx_buffer"]) == (6, 35, 255)
    assert info["warnings"][0] == settings_warnings({1: "254"})[0]  # the build's $1: 254 ms after every move
    slow = info["warnings"][1]  # the tests' pace, a quarter turn in 20 ms, against 500 units/s and 5000 units/s²
    assert len(info["warnings"]) == 2 and "maximum rate of 30000 units/min ($110-$115)" in slow
    assert "acceleration of 5,000 units/s² ($120-$125) it takes 0.28 s" in slow and info["move_feed"] == 30000
    assert "soft reset (0x18)" in info["stop_method"] and info["stop_latency_ms"] <= 100
    assert info["settings"] == {"$1": "254", "$13": "0", "$20": "0", "$21": "0", "$22": "0"}


def test_a_soft_limit_alarm_is_reset_unlocked_and_the_next_turn_works(grbl):
    configure(grbl.board, "$22=1", "$20=1")  # soft limits (they need homing on): machine space is -travel..0
    link = grbl.link()
    warnings = link.connect()["warnings"]
    idle_lock = settings_warnings({1: "254"})[0]  # the build's $1
    assert [w.split(" (")[0] for w in warnings[:3]] == ["soft limits are on", "homing is on", idle_lock.split(" (")[0]]
    assert len(warnings) == 4 and "cannot turn a quarter turn" in warnings[3]
    link.home().wait(2)
    link.turn("R", -1).wait(3)
    with pytest.raises(DeviceFault) as caught:
        link.turn("R", 2).wait(3)  # to +90: past the limit
    assert caught.value.code == "ALARM" and "ALARM:2" in str(caught.value)
    assert "a move went past a soft limit: check $130-$135 max travel / $20" in str(caught.value)
    assert link.status()["alarm"]["needs_reset"]
    assert link.clear()["position"]["R"] == -90.0  # 0x18 once grbl asks for it, its banner, then $X
    link.turn("U", -1).wait(3)
    status = link.status()
    assert status["healthy"] and status["counters"]["soft_resets"] == 1 and status["alarm"]["cleared"]
    assert grbl.board.cube == apply(SOLVED, "R' U'")


def test_a_board_locked_at_power_up_by_homing_is_unlocked_with_a_warning(grbl):
    configure(grbl.board, "$22=1")
    grbl.board.reset()  # power off and on: grbl starts in alarm and asks for $H
    link = grbl.link()
    info = link.connect()
    assert len(info["warnings"]) == 3 and "homing is on ($22=1)" in info["warnings"][0]
    assert "robotd unlocks it with $X" in info["warnings"][0]
    link.home().wait(2)
    link.turn("F", 1).wait(3)
    assert grbl.board.cube == apply(SOLVED, "F")


def test_after_an_estop_the_link_stays_connected_and_clear_unlocks(grbl):
    """grbl prints the reset's banner a second after a stop in motion: that is no reset of the board."""
    link = grbl.link()
    link.connect()
    link.home().wait(2)
    link.set_speed(1000).wait(1)
    motions = link.plan([("R", 1)] * 3)
    motions[0].wait_received(2)
    time.sleep(0.2)
    assert link.estop()["acknowledged_s"] < 1.0
    time.sleep(1.2)  # the banner has come
    assert link.status()["connected"] and link.status()["fault"]["code"] == "ESTOP"
    stopped = link.clear()["position"]["R"]
    assert 5 < stopped < 85  # R stopped part-way, and grbl says so: not at 0, not at 90
    assert link.off_square() == {"R": pytest.approx(round(stopped / 90) - stopped / 90, abs=0.003)}
    link.set_speed(100).wait(1)
    [squaring] = link.square()  # R back to the nearest quarter turn
    squaring.wait(3)
    assert link.off_square() == {} and link.query()["position"]["R"] == pytest.approx(round(stopped / 90) * 90)
    link.turn("U", 1).wait(3)
    assert link.status()["healthy"] and grbl.board.cube == apply(SOLVED, "R " * round(stopped / 90) + "U")


@pytest.mark.parametrize("kind", ["stock", "sim"])
def test_another_firmware_is_refused_by_name(kind):
    if kind == "sim":
        marlin = SimulatedMarlin()
    else:
        devices.require_avr(avr_board.missing_tools)
        why = missing_stock("marlin")
        if why:
            pytest.skip(why)
        marlin = stock_board("marlin")
    marlin.start()
    link = GrblLink(marlin.path)
    try:
        with pytest.raises(
            HandshakeError, match=r"the board runs Marlin, not grbl .*: set \[controller\] kind = 'marlin'"
        ):
            link.connect()
    finally:
        link.close()
        marlin.stop()
