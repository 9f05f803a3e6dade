"""MarlinLink, its G-code codec and the simulated Marlin 2.1 board (firmware_interface/marlin/).

Here only what Marlin does alone: line numbers and checksums, markers,
Resend, busy keepalives, identifying the board, the M410 stop and a kill().
The behaviour every line-based link shares is tested once per target in
test_line_links.py; the real stock binaries' own answers in
test_marlin_stock.py.
"""

import time
from concurrent.futures import Future

import pytest

from firmware_interface import DeviceFault, HandshakeError
from firmware_interface.marlin import machine as marlin_machine
from firmware_interface.marlin.dialect import (
    STOP_LINE,
    checksum,
    marker_command,
    move_command,
    numbered,
    parse_position,
    parse_reply,
    parse_setting,
    split_numbered,
)
from firmware_interface.marlin.identity import BoardReport, board_axes, identify, refusal
from firmware_interface.marlin.limits import move_feed
from firmware_interface.marlin.lines import MARKER, Line
from firmware_interface.marlin.link import MarlinTiming
from firmware_interface.marlin.machine import STOCK_LIMITS
from firmware_interface.marlin.session import MarlinSession
from firmware_interface.motion import Motion
from firmware_interface.steps import Step
from firmware_interface.turn_speed import least_turn_s
from line_rigs import SOLVED, estop_mid_move, ready, rigs
from solver import apply

STOCK_M115 = (
    "FIRMWARE_NAME:Marlin bugfix-2.1.x (Jan  7 2023 04:42:21) SOURCE_CODE_URL:github.com/MarlinFirmware/Marlin "
    "PROTOCOL_VERSION:1.0 MACHINE_TYPE:3D Printer EXTRUDER_COUNT:0 AXIS_COUNT:6 "
    "UUID:cede2a2f-41a2-4748-9b12-c55c62f367ff"
)

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
    assert parse_reply("Resend: 1?").kind == "other"  # a garbled number is no request
    assert parse_reply("busy: processing").kind == "busy"
    assert parse_reply("echo:busy: processing").kind == "busy"  # Marlin 2.1's keepalive
    err = parse_reply("Error:Line Number is not Last Line Number+1, Last Line: 11")
    assert err.kind == "error" and err.line_error and err.n == 11
    err = parse_reply("Error:checksum mismatch, Last Line: 3")
    assert err.line_error and err.n == 3
    halted = parse_reply("Error:Printer halted. kill() called!")
    assert halted.halted and not halted.line_error
    assert parse_reply("start").kind == "start"
    assert parse_reply("Marlin bugfix-2.1.x").kind == "banner" and parse_reply("echo:Marlin 2.1.2").text == "2.1.2"
    assert parse_reply('echo:Unknown command: "8"').unknown_command
    assert parse_position("X:90.00 Y:-180.00 Z:0.00 E:0.00 Count X:7200 Y:0 Z:0") == {
        "X": 90.0,
        "Y": -180.0,
        "Z": 0.0,
        "E": 0.0,
    }
    six = "X:0.00 Y:0.00 Z:0.00 A:19.80 B:0.00 C:-90.00 Count X:0 Y:0 Z:0 A:88 B:0 C:-400"
    assert parse_position(six) == {"X": 0.0, "Y": 0.0, "Z": 0.0, "A": 19.8, "B": 0.0, "C": -90.0}


def test_markers_prove_their_line_only_when_both_copies_agree():
    assert marker_command(12) == "M118 rd12 rd12"
    assert (parse_reply("rd12 rd12").kind, parse_reply("rd12 rd12").n) == ("marker", 12)
    assert parse_reply("echo:rd7 rd7").n == 7  # M118 E1 prints it so
    assert parse_reply("rd12 rd13").kind == "other"  # a byte garbled on the way: no proof
    assert parse_reply("9/\xffrd41 rd41").kind == "other"  # noise ahead of it


def test_move_encoding():
    assert move_command([("Y", 1)], 90.0, 6000) == "G1 Y90 F6000"
    assert move_command([("X", -2)], 90.0, 6000) == "G1 X-180 F6000"
    # a pair: both axes in one line, F along the path so each axis runs at the feed
    assert move_command([("X", 1), ("I", -1)], 90.0, 6000) == "G1 X90 I-90 F8485.2814"
    # absolute, from where each axis is (the link's moves: a repeat goes nowhere new)
    assert move_command([("X", 1), ("A", -2)], 90.0, 6000, {"X": 90.0, "A": 19.8}) == "G1 X180 A-160.2 F6708.2039"
    # a part of it (a move goes as MOVE_PARTS lines along one line, so that Marlin starts it at once)
    assert move_command([("X", 1), ("A", -2)], 90.0, 6000, {"X": 90.0, "A": 19.8}, share=1 / 3) == (
        "G1 X120 A-40.2 F6708.2039"
    )


# ---------------------------------------------------------------- identifying the board (pure)


def stock_report(letters="XYZABC", parser="0", name=STOCK_M115) -> BoardReport:
    report = BoardReport()
    report.on_firmware(name)
    report.on_capability("EEPROM:0")
    report.on_capability(f"EMERGENCY_PARSER:{parser}")
    report.on_position(list(letters))
    return report


def test_m115_tells_firmware_version_axes_capabilities_and_the_stop():
    info = identify(stock_report(parser="1"))
    assert (info["firmware"], info["version"], info["axis_count"]) == ("Marlin bugfix-2.1.x", "bugfix-2.1.x", 6)
    assert info["capabilities"] == {"EEPROM": False, "EMERGENCY_PARSER": True} and info["emergency_parser"]
    assert info["stop_method"].startswith("M410") and "EMERGENCY_PARSER" in info["stop_method"]
    assert "4-line command queue" in identify(stock_report())["stop_method"] and info["stop_latency_ms"] > 0


def test_axes_4_to_6_are_i_j_k_or_a_b_c_whatever_the_board_calls_them():
    ijk = {"U": "X", "R": "Y", "F": "Z", "D": "I", "L": "J", "B": "K"}
    abc = {"U": "X", "R": "Y", "F": "Z", "D": "A", "L": "B", "B": "C"}
    assert board_axes(ijk, stock_report("XYZABC")) == abc
    assert board_axes(abc, stock_report("XYZIJK")) == ijk
    assert board_axes(abc, stock_report("XYZABC")) == abc


@pytest.mark.parametrize(
    "axes, letters, words",
    [
        ({"U": "X", "D": "U"}, "XYZABC", "too few axes: face D is on U, Marlin's axis 7, but the board has 6"),
        ({"U": "X", "D": "I"}, "XYZ", "too few axes: face D is on I, Marlin's axis 4"),
        (
            {"U": "X", "D": "A"},
            "XYZUVW",
            "axis names do not match: face D is on A, but the board names its axes X Y Z U V W",
        ),
    ],
)
def test_a_board_without_the_configured_axes_is_refused(axes, letters, words):
    report = stock_report(letters)
    report.fields["AXIS_COUNT"] = str(len(letters))
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        board_axes(axes, report)


def test_a_board_that_is_not_marlin_is_refused():
    assert refusal(stock_report()) is None
    why = refusal(stock_report(name="FIRMWARE_NAME:Klipper v0.12 MACHINE_TYPE:x"))
    assert why and "not Marlin (M115 says FIRMWARE_NAME:Klipper v0.12" in why


# ---------------------------------------------------------------- link against the simulator


@pytest.fixture
def rig():
    with rigs("marlin") as make:
        yield make


def test_handshake_waits_for_the_boot_banner_and_identifies_the_board(rig):
    sim, link = rig({"boot_ms": 300})  # resets on open, deaf while in its bootloader
    info = ready(link)
    assert info["dialect"] == "marlin" and info["firmware"] == "Marlin 2.1.2" and info["axis_letters"] == "XYZABC"
    assert info["motors"] == list("URFDLB") and info["axes"]["D"] == "A"  # configured I, named A by the board
    assert info["stop_method"].startswith("M410") and not info["emergency_parser"]
    state = sim.info()
    assert not state["relative"] and state["enabled"]  # G90: absolute targets
    assert "M84 S0" in [command for _, command in sim.accepted]  # the drivers stay on between runs


def test_marlin_switches_the_drivers_off_after_its_idle_time_unless_told_m84_s0():
    """As the stock build does (DEFAULT_STEPPER_DEACTIVE_TIME, 120 s): the drivers go off that long after the
    last move ends; ``M84 S0`` keeps them on (and switches nothing off itself), a move switches them on."""
    board = marlin_machine.MarlinMachine(marlin_machine.Build(), lambda line: None, lambda *moved: None)

    def at(now: float, line: str = "") -> bool:
        if line:
            board.receive(line.encode() + b"\n", now)
        board.advance(now)
        return board.enabled

    assert not at(0.0, "G1 X90 F30000") and at(0.05) and at(1.0)  # on as the move is planned
    assert at(1.0 + marlin_machine.IDLE_OFF_S - 1) and not at(1.0 + marlin_machine.IDLE_OFF_S + 1)
    assert not at(200.0, "G1 X0") and at(200.05) and at(200.5, "M84 S0") and at(200.6) and at(10_000.0)
    assert at(10_000.1, "M84") and not at(10_000.2)  # M84 without S: off once read


def test_a_turn_is_planned_with_the_board_s_acceleration_counted():
    stock = {"M203": {"X": 500.0, "Y": 500.0}, "M201": {"X": 5000.0, "Y": 5000.0}, "M204": {"P": 5000.0, "T": 5000.0}}
    assert [parse_setting(line) for line in ("M204 P5000.00 R3000.00 T5000.00", "echo:  M201 X5000.00 A5000")] == [
        ("M204", {"P": 5000.0, "R": 3000.0, "T": 5000.0}),
        ("M201", {"X": 5000.0, "A": 5000.0}),
    ]
    assert parse_reply("M203 X500.00 Y500.00").kind == "limits"
    assert least_turn_s(90, 500, 5000) == pytest.approx(0.28)  # reaches 500 units/s: 0.18 s + 0.1 s
    assert least_turn_s(90, 1000, 5000) == pytest.approx(2 * (90 / 5000) ** 0.5)  # never reaches it
    feed, warning = move_feed(stock, ["X", "Y"], 90.0, 90 * 60 / 0.3)  # a quarter in 0.3 s
    assert warning is None and least_turn_s(90, feed / 60, 5000) == pytest.approx(0.3) and feed > 90 * 60 / 0.3
    feed, warning = move_feed(stock, ["X", "Y"], 90.0, 90 * 60 / 0.15)  # quicker than the board can
    assert feed == 500 * 60 and "it takes 0.28 s" in warning and "set [rig] quarter_turn_s to 0.28 or more" in warning
    assert move_feed({}, ["X"], 90.0, 6000.0) == (6000.0, None)  # no limits reported: the feed as it is
    assert move_feed(stock, ["X", "Z"], 90.0, 6000.0) == (6000.0, None)  # none for Z


def test_a_board_slower_than_the_plan_says_so_at_connect_and_moves_no_faster_than_its_m203(rig):
    sim, link = rig({"max_feed": 200.0}, feed=90 * 60 / 0.15)
    warnings = ready(link)["warnings"]
    assert len(warnings) == 1 and "top speed of 200 units/s (M203)" in warnings[0] and "takes 0.45 s" in warnings[0]
    started = time.monotonic()
    link.turn("R", 1).wait(3)
    assert time.monotonic() - started >= 0.45 and sim.cube == apply(SOLVED, "R")


def test_turns_on_a_board_that_speeds_up_and_brakes_take_the_planned_time(rig):
    """The stock build's 5000 units/s² (simulated as the binary runs it): at the plain feed a quarter planned at
    0.3 s would take 0.34 s; the link cruises faster so that it takes no longer than planned. Marlin starts and
    ends a move above rest, which leaves it some 0.02 s under the plan (time for the move's ok and M400)."""
    sim, link = rig(STOCK_LIMITS, feed=90 * 60 / 0.3)
    assert ready(link)["warnings"] == []
    link.turn("R", 1).wait(3)
    link.turn("U", -1).wait(3)
    spans = [times[-1][1] - times[0][0] for times in (sim.move_times[:3], sim.move_times[3:])]
    assert len(sim.move_times) == 6 and all(0.27 < span <= 0.3 for span in spans), spans
    assert sim.cube == apply(SOLVED, "R U'")


def test_a_board_with_too_few_axes_is_refused_at_connect(rig):
    sim, link = rig(axes={"U": "X", "R": "Y", "F": "Z", "D": "U", "L": "V", "B": "W"})
    with pytest.raises(HandshakeError, match="too few axes: face D is on U"):
        link.connect()
    assert not link.status()["connected"]


def test_resend_is_honoured(rig):
    sim, link = rig()
    ready(link)
    link._write(numbered(50, "G1 X90"))  # out of order: Marlin refuses it and asks for its next line
    time.sleep(0.1)
    motions = link.plan([("R", 1), ("U", 1)])
    link.wait(motions, timeout=2)
    assert sim.cube == apply(SOLVED, "R U")
    assert sim.info()["line_errors"] >= 1 and link.status()["counters"]["line_errors"] >= 1
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


def test_busy_does_not_time_out(rig):
    sim, link = rig({"busy_ms": 300})
    ready(link)
    link.set_speed(2600).wait(1)  # one quarter turn in 2.6 s: longer than the 2 s silence
    link.turn("F", 1).wait(5)
    assert link.status()["counters"]["busy"] >= 5 and link.status()["healthy"]
    assert sim.cube == apply(SOLVED, "F")


def test_after_a_quick_stop_marlin_runs_on_but_the_position_is_unknown(rig):
    """M410 stops the motors and leaves Marlin running: clear() waits until it answers again (1-2 s) and reads
    where the faces stopped; the link says the position is unknown until home(). The stop itself:
    test_line_links.py; on the real binaries: test_marlin_stock.py."""
    sim, link = rig()
    ready(link)
    estop_mid_move(sim, link)
    assert not link.status()["halted"] and not sim.info()["halted"] and not link.status()["position_known"]
    assert "then square() turns a face left part-way" in link.status()["fault"]["message"]
    position = link.clear()
    assert 0 < position["position"]["R"] < 90 and not position["position_known"]  # stopped part of the way
    link.set_speed(20).wait(1)
    link.turn("U", 1).wait(2)
    link.home().wait(2)
    assert link.status()["position_known"] and link.status()["healthy"]
    assert sim.cube == apply(SOLVED, "L U")


def test_a_slow_quick_stop_without_the_emergency_parser_is_waited_out(rig, monkeypatch):
    """A board that answers nothing for 5 s after a stop (here each quick stop pauses 5 s; the stock binaries
    pause 1 s): clear() right after the stop waits that out (silence counts from ``stop_recovery`` after the
    last M410) instead of calling the board silent. Its first line goes only after both M410 lines: Marlin
    without EMERGENCY_PARSER then copies it into their queue slots, so neither M410 runs again from the queue
    (a line between them costs 2 more pauses: the stock binary answered clear() 3.1 s after the stop instead of
    1.1 s)."""
    monkeypatch.setattr(marlin_machine, "QUICK_STOP_S", 5.0)
    sim, link = rig()
    assert not ready(link)["emergency_parser"]
    estop_mid_move(sim, link)
    position = link.clear()
    assert len(sim.estop_times()) == 2 and not position["position_known"]  # the two M410 lines, as read
    link.home().wait(2)
    assert link.status()["healthy"] and sim.cube == apply(SOLVED, "L")


def test_a_kill_halts_marlin_until_reset(rig):
    """kill() (M112 from elsewhere, a thermal runaway): Marlin ignores everything until reset: clear() refuses
    and says so; connecting again (the port reopened, which resets the board) goes on."""
    sim, link = rig()
    ready(link)
    sim.send("Error:Printer halted. kill() called!")
    time.sleep(0.05)
    with pytest.raises(DeviceFault, match="reset"):
        link.clear()
    assert link.status()["halted"] and link.status()["fault"]["code"] == "HALTED"
    ready(link)
    link.turn("U", 1).wait(2)
    assert sim.cube == apply(SOLVED, "U")


# ---------------------------------------------------------------- the session alone: what a cut line may do


def test_a_fragment_of_a_cut_line_proves_nothing():
    """Marlin empties its receive buffer on a bad line, so a copy of it on the wire runs as a fragment: its marker
    and its ok come before the line has gone again, and must not count (a forged proof completed a turn early)."""
    sent: list[bytes] = []
    after: list = []
    session = _session(sent, after)
    motion = Motion(Step("TURN", 1, (("R", 1),)))
    for line in (
        Line("G1 Y90 F6000", motion=motion, role="received"),
        Line("M400"),
        Line("", MARKER, motion=motion, role="completed"),
    ):
        session.queue(line)
    session.pump(0.0)
    for now, reply in ((0.01, "ok"), (0.5, "ok")):
        session.on_line(parse_reply(reply), now)
    assert sent[-1] == numbered(3, "M118 rd3 rd3")
    for reply in ("Error:checksum mismatch, Last Line: 2", "Resend: 3", "ok", "rd3 rd3", "ok"):  # then a fragment
        session.on_line(parse_reply(reply), 0.52)
    for call in after:
        call()
    assert not motion.completed.done() and sent[-1] == numbered(3, "M118 rd3 rd3") and len(sent) == 3
    session.tick(0.53)  # what was on the wire has come: line 3 goes again
    assert len(sent) == 4 and sent[-1] == numbered(3, "M118 rd3 rd3")
    session.on_line(parse_reply("rd3 rd3"), 0.535)
    for call in after:
        call()
    assert motion.completed.result(0)["line"] == 3


def _session(sent: list[bytes], after: list) -> MarlinSession:
    """A connected session on no port: what it writes goes to ``sent``."""
    session = MarlinSession(
        timing=MarlinTiming(), port="test", buffer=3, history=64, write=sent.append, after=after, on_fault=print
    )
    session.connected = True
    return session


def _session_with_a_move(sent: list[bytes]) -> tuple[MarlinSession, Motion]:
    """A session that has just written a move's G1 (its M400 and marker still to go)."""
    session = _session(sent, [])
    motion = Motion(Step("TURN", 1, (("R", 1),)))
    for line in (Line("G1 Y90 F6000", motion=motion, role="received"), Line("M400"), Line("", MARKER)):
        session.queue(line)
    session.pump(0.0)
    assert sent == [numbered(1, "G1 Y90 F6000")]
    return session, motion


def test_a_stop_waits_for_marlin_to_take_the_move_on_the_wire():
    """Marlin without EMERGENCY_PARSER that reads a G1 and the M410 behind it together stops first and runs the
    G1 after its 1 s pause (a face turning a second after Stop): so the M410 waits for that G1's ok (it is
    planned, and the stop cuts it), and then for nothing else."""
    sent: list[bytes] = []
    session, _ = _session_with_a_move(sent)
    session.begin_estop(Future(), 0.001)
    session.tick(0.002)
    assert sent == [numbered(1, "G1 Y90 F6000")]  # still on the wire
    session.on_line(parse_reply("ok"), 0.004)
    assert sent[-1] == STOP_LINE
    session.tick(0.06)
    assert sent[1:] == [STOP_LINE, STOP_LINE]  # and again after estop_retry


def test_a_stop_waits_for_the_move_s_ok_no_longer_than_estop_hold():
    sent: list[bytes] = []
    session, _ = _session_with_a_move(sent)
    session.begin_estop(Future(), 0.001)
    crossed = len(numbered(1, "G1 Y90 F6000")) * 10 / 115200
    session.tick(crossed + 0.029)
    assert sent[-1] != STOP_LINE
    session.tick(crossed + 0.031)  # the ok was lost
    assert sent[-1] == STOP_LINE


def test_a_stop_with_no_move_on_the_wire_goes_at_once_and_clear_waits_for_the_second_m410():
    """Without EMERGENCY_PARSER, a line read between the two M410s leaves "M410" in both their queue slots, and
    each runs again after the pause: 3 s before Marlin answers (the stock binary, clear() at once: 3.1 s
    instead of 1.1 s)."""
    sent: list[bytes] = []
    session, _ = _session_with_a_move(sent)
    session.on_line(parse_reply("ok"), 0.004)  # the G1 taken; its M400 on the wire
    session.begin_estop(Future(), 0.005)
    assert sent[-1] == STOP_LINE
    session.fault = None  # clear() at once
    session.resync()
    session.tick(0.01)
    assert sent[-1] == STOP_LINE and len(sent) == 3
    session.tick(0.056)
    assert sent[3:] == [STOP_LINE, numbered(3, "M118 rd3 rd3")]
