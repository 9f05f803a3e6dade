"""MarlinLink and our Marlin simulator against the real stock Marlin binaries (shared/stock-firmware) under simavr.

Where the real binary and ``SimulatedMarlin`` disagree the real one wins:
the same raw lines go to both and must get the same answers (line errors,
silently dropped repeats, unnumbered lines, markers, M114, M115, the
steps per unit, top speeds and accelerations, and the
M410 quick stop during an M400, with and without EMERGENCY_PARSER), and
after two quick stops the same answers in the same bursts (how many 1 s
pauses, and what runs after each), and moves last as long as they do on
the binary, speeding up and braking; ``M84 S<s>`` sets when the binary
switches its drivers off (``S0``: never). Then the link identifies each build and
recovers from a quick stop on it. Skips
where the harness's tools or the stock-firmware directory are missing
(fails instead under ROBOTD_REQUIRE_AVR, as tests/devices.py says).
"""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import serial

import devices
from firmware_interface.marlin.dialect import numbered
from firmware_interface.marlin.machine import STOCK_LIMITS
from firmware_interface.marlin.simulator import SimulatedMarlin
from firmware_interface.pin_trace import F_CPU, motion_spans, step_cycles
from firmware_interface.stock_firmware import AXES, stock_board
from line_rigs import SOLVED, estop_mid_move, planned_spans, ready, require_stock, rigs
from solver import apply

VARIANTS = {"": "marlin-avr", "ep": "marlin-ep-avr"}
STOPPED = re.compile(r"X:(9\d|1[0-7]\d)\.\d\d|X:(4[1-9]\d|[5-7]\d\d)\b")  # between 90 and 180 units: part of the way
SCRIPT = [  # (what is sent, how many oks end its answer: 0 = none comes)
    (numbered(0, "M110 N0"), 1),
    (numbered(1, "G91"), 1),
    (numbered(1, "G91"), 0),  # a repeat of the last line: dropped without a word
    (numbered(5, "M114"), 1),  # a skipped number
    (b"N2 M114*1\n", 1),  # a bad checksum
    (b"N2 M114\n", 1),  # a number without a checksum
    (numbered(2, "M114"), 1),
    (b"M118 rd7 rd7\n", 1),  # a marker
    (b"M118 E1 hello\n", 1),
    (b"M9999\n", 1),
    *((f"{code}\n".encode(), 1) for code in ("M92", "M203", "M201", "M204")),  # steps per unit, speed, acceleration
    (b"G1 X90 F30000*45\n", 1),  # unnumbered, the checksum wrong: it runs as it is
    (numbered(3, "M400"), 1),
    (numbered(4, "M114"), 1),
    (numbered(5, "M115"), 1),
]


def stock(variant: str, **options):
    require_stock("marlin", variant)
    return stock_board("marlin", variant, axes=AXES, **options)


def simulated(variant: str) -> SimulatedMarlin:
    """Our simulator built as the stock binary is (EMERGENCY_PARSER, top speed, acceleration)."""
    return SimulatedMarlin(emergency_parser=variant == "ep", **STOCK_LIMITS)


def answers(raw: serial.Serial, data: bytes, oks: int, timeout: float = 4.0) -> list[str]:
    """What the board says to ``data``: lines up to its ``oks``-th ok (none: whatever comes in 0.3 s)."""
    raw.write(data)
    heard: list[str] = []
    deadline = time.monotonic() + (timeout if oks else 0.3)
    while time.monotonic() < deadline and (not oks or heard.count("ok") < oks):
        line = devices.read_line(raw).decode("latin-1").strip()
        if line:
            heard.append(normal(line))
    return heard


def normal(line: str) -> str:
    """A reply without what differs by build: the firmware's name and date, its other capabilities, where a
    stopped motor happened to be."""
    if line.startswith("FIRMWARE_NAME:"):
        return "FIRMWARE_NAME " + " ".join(re.findall(r"AXIS_COUNT:\d+", line))
    if line.startswith("Cap:") and "EMERGENCY_PARSER" not in line:
        return ""
    return line


def transcript(board, variant: str) -> list[list[str]]:
    path = board.start()
    with serial.Serial(path, 115200, timeout=0.1) as raw:
        time.sleep(0.5)  # booted, its boot text out
        raw.reset_input_buffer()
        said = [[line for line in answers(raw, data, oks) if line] for data, oks in SCRIPT]
        said.append(answers(raw, numbered(6, "G1 X90 F5400"), 1))  # a second of motion
        raw.write(numbered(7, "M400"))
        time.sleep(0.3)
        said.append(answers(raw, b"M410\n", 2))  # M400's ok once the motors stopped, M410's after its pause
        said.append([STOPPED.sub("X:<stopped>", line) for line in answers(raw, numbered(8, "M114"), 1)])
    board.stop()
    return said


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_simulator_answers_as_the_real_binary(variant):
    real = transcript(stock(variant), variant)
    said = transcript(simulated(variant), variant)
    assert real[2] == [] and real[3][0] == "Error:Line Number is not Last Line Number+1, Last Line: 1"
    assert real[-1][0].startswith("X:<stopped>")  # the position read back from where the motors stopped
    assert said == real


QUICK_STOPS = {  # (seconds to wait, then what to write) while a G1 runs
    "M410, M410, a line": [(0.0, b"M410\n"), (0.05, b"M410\n"), (0.0, b"M118 mark\n")],
    "M410, a line, M410": [(0.0, b"M410\n"), (0.005, numbered(2, "M118 mark")), (0.045, b"M410\n")],
}
BURST_GAP_S = 0.5  # replies further apart than this are in different bursts (a quick stop pauses 1 s)
QUIET_S = 2.0  # the board has said all once it is quiet this long


def bursts(board, writes: list[tuple[float, bytes]]) -> list[list[str]]:
    """What the board says to ``writes`` sent during a move, as bursts of replies."""
    path = board.start()
    with serial.Serial(path, 115200, timeout=0.05) as raw:
        time.sleep(0.5)  # booted, its boot text out
        raw.reset_input_buffer()
        answers(raw, numbered(0, "M110 N0"), 1)
        answers(raw, numbered(1, "G1 X90 F5400"), 1)  # a second of motion
        time.sleep(0.3)
        for wait, data in writes:
            time.sleep(wait)
            raw.write(data)
        said: list[list[str]] = []
        last = time.monotonic()
        while time.monotonic() - last < QUIET_S:
            line = devices.read_line(raw).decode("latin-1").strip()
            if line:
                now = time.monotonic()
                said.append([line]) if not said or now - last > BURST_GAP_S else said[-1].append(line)
                last = now
    board.stop()
    return said


@pytest.mark.parametrize("writes", QUICK_STOPS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_the_simulator_pauses_after_quick_stops_as_the_real_binary(variant, writes):
    """Without EMERGENCY_PARSER an M410 acts as it is read and each line read during the pause takes the
    M410's queue slot as well (it runs twice); an M410 that nothing followed runs again, pausing again. With
    it, an M410 stops as it comes, and one that came during a pause stops after the next command."""
    boards = [stock(variant), simulated(variant)]
    with ThreadPoolExecutor(2) as pool:
        real, said = pool.map(lambda board: bursts(board, QUICK_STOPS[writes]), boards)
    assert len(real) >= 1 and said == real


MOTIONS = {  # G91 moves sent at once, each the time it took on the stock binary (first to last STEP edge)
    "a quarter turn in three parts (0.252 s)": ["G1 X30 F30000", "G1 X30", "G1 X30"],
    "the same slower (0.607 s)": ["G1 X30 F9000", "G1 X30", "G1 X30"],
    "two axes together (0.323 s)": ["G1 X30 Y30 F30000", "G1 X30 Y30", "G1 X30 Y30"],
    "one axis, then another (0.512 s)": ["G1 X30 F30000", "G1 X30", "G1 X30", "G1 Y30", "G1 Y30", "G1 Y30"],
    "one axis twice one way (0.433 s)": ["G1 X30 F30000", "G1 X30", "G1 X30", "G1 X30", "G1 X30", "G1 X30"],
    "one axis, then back (0.512 s)": ["G1 X30 F30000", "G1 X30", "G1 X30", "G1 X-30", "G1 X-30", "G1 X-30"],
}
MOTION_EVERY_S = 1.0  # each motion is over 0.3 s before the next is sent


def send_motions(board) -> None:
    with serial.Serial(board.start(), 115200, timeout=0.05) as raw:
        time.sleep(0.5)  # booted, its boot text out
        answers(raw, b"G91\n", 1)
        for lines in MOTIONS.values():
            raw.write("".join(line + "\n" for line in lines).encode())
            time.sleep(MOTION_EVERY_S)


def real_motion_s(variant: str, trace) -> list[float]:
    """How long each motion took on the stock binary, from its STEP edges (simulated cycles: the host's load
    does not change them)."""
    board = stock(variant, trace=trace)
    send_motions(board)
    board.stop()
    return motion_spans(step_cycles(trace))


def simulated_motion_s(variant: str) -> list[float]:
    """How long each motion took on our simulator, from its planned blocks (which the host's load does not
    change either)."""
    board = simulated(variant)
    send_motions(board)
    board.stop()
    return planned_spans(board.move_times, MOTIONS.values())


def test_the_simulator_speeds_up_and_brakes_as_the_real_binary(tmp_path):
    """Moves speed up and brake at 5000 units/s², parts along one line run on at full speed, a move on another
    axis or back starts from rest: the simulator's motions last as long as the binary's, within a step or two
    (the binary's span runs from its first step, which comes some ms after its motion began)."""
    with ThreadPoolExecutor(2) as pool:
        real = pool.submit(real_motion_s, "", tmp_path / "trace")
        ours = pool.submit(simulated_motion_s, "")
        spans = dict(zip(MOTIONS, zip(real.result(), ours.result())))
    assert len(real.result()) == len(MOTIONS)
    for motion, (real_s, simulated_s) in spans.items():
        assert real_s < simulated_s < real_s + 0.015, (motion, spans)


def driver_switches(trace) -> list[tuple[float, int, bool]]:
    """Every EN pin change: (seconds, axis index, on)."""
    with open(trace) as lines:
        fields = [line.split() for line in lines if line.startswith("E ")]
    return [(int(cycle) / F_CPU, int(axis), on == "1") for _, cycle, axis, on in fields]


def test_the_binary_switches_a_driver_off_after_its_idle_time_and_not_after_m84_s0(tmp_path):
    """What MarlinLink's ``M84 S0`` at connect relies on: ``M84 S<s>`` sets the idle time after which Marlin
    switches the drivers off (``S0``: never), and switches nothing off itself."""
    board = stock("", trace=tmp_path / "trace")
    with serial.Serial(board.start(), 115200, timeout=0.05) as raw:
        time.sleep(0.5)  # booted, its boot text out
        answers(raw, b"M84 S1\nG91\nG1 X9 F6000\nM400\n", 4)
        time.sleep(1.6)  # off about a second after the move
        answers(raw, b"M84 S0\nG1 X9\nM400\n", 3)
        time.sleep(1.6)
    board.stop()
    x = [(at, on) for at, axis, on in driver_switches(tmp_path / "trace") if axis == 0][-3:]
    assert [on for _, on in x] == [True, False, True], x  # on for the move, off after it, on for good
    assert 1.0 < x[1][0] - x[0][0] < 1.5, x  # the move (0.1 s), then a second


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_link_identifies_the_build_and_recovers_from_a_quick_stop(variant):
    with rigs(VARIANTS[variant]) as rig:
        board, link = rig()
        info = ready(link)
        assert (info["firmware"], info["axis_count"], info["axis_letters"]) == ("Marlin bugfix-2.1.x", 6, "XYZABC")
        assert info["emergency_parser"] == (variant == "ep") and info["axes"]["B"] == "C"
        # the rigs' quarter turn in 20 ms: 500 units/s and 5000 units/s² take 0.28 s
        assert len(info["warnings"]) == 1 and "top speed of 500 units/s (M203)" in info["warnings"][0]
        assert "acceleration of 5,000 units/s² (M201, M204 T) it takes 0.28 s" in info["warnings"][0]
        estop_mid_move(board, link)
        position = link.clear()
        stopped = position["position"]["R"]
        assert 0 < stopped < 90 and not position["position_known"]
        assert link.off_square() == {"R": pytest.approx(round(stopped / 90) - stopped / 90)}
        [squaring] = link.square()  # R back to the nearest quarter turn, which is where it started
        squaring.wait(3)
        assert link.off_square() == {} and link.query()["position"]["R"] == pytest.approx(round(stopped / 90) * 90)
        link.turn("U", 1).wait(3)
        assert board.cube == apply(SOLVED, "L " + "R " * round(stopped / 90) + "U") and link.status()["healthy"]
