"""The stock Marlin and grbl binaries (shared/stock-firmware) on the simulated board, over raw serial.

Each build boots under the simavr harness with its STEP/DIR/EN pins on the
stock RAMPS map; a 90-unit move on an axis must turn exactly the face wired
to it one quarter turn (clockwise for +90), as counted from the pins, and
the firmware must report the position. These are the real binaries, not our
simulators of them: what they print here is what a link must parse. Skips
where the harness's tools or the stock-firmware directory are missing
(ROBOTD_STOCK_FIRMWARE_DIR, default ../shared/stock-firmware).
"""

from __future__ import annotations

import time

import pytest
import serial

import devices
from firmware_interface import avr_board
from firmware_interface.stock_firmware import AXES, STEPS_PER_QUARTER, UNITS_PER_QUARTER, missing_stock, stock_board
from solver import apply
from solver.puzzles.cube.cubie import solved_facelets

SOLVED = solved_facelets(3)
FACES = "URFDLB"
REWIRED = {"U": "C", "R": "A", "F": "X", "D": "B", "L": "Z", "B": "Y"}  # any wiring: the map is the board's
BUILDS = {
    "marlin": ("marlin", "", AXES),
    "marlin-ep": ("marlin", "ep", REWIRED),
    "grbl": ("grbl", "", AXES),
}
BANNER = {"marlin": "Marlin bugfix-2.1.x", "grbl": "Grbl 1.1q ['$' for help]"}


@pytest.fixture(params=list(BUILDS))
def build(request):
    devices.require_avr(avr_board.missing_tools)
    firmware, variant, axes = BUILDS[request.param]
    why = missing_stock(firmware, variant)
    if why:
        pytest.skip(why)
    board = stock_board(firmware, variant, axes=axes)
    board.start()
    try:
        with serial.Serial(board.path, 115200, timeout=0.1) as raw:
            yield firmware, board, raw
    finally:
        board.stop()


def lines_until(raw: serial.Serial, last, timeout: float = 10.0) -> list[str]:
    """Lines read until one satisfies ``last`` (included); fails with what was heard after ``timeout``."""
    heard: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = devices.read_line(raw).decode(errors="replace").rstrip("\r\n")
        if line or heard:
            heard.append(line)
        if heard and last(heard[-1]):
            return heard
    pytest.fail(f"not heard within {timeout} s; heard: {heard}")


def boot_text(firmware: str, raw: serial.Serial) -> list[str]:
    if firmware == "marlin":  # the settings report ends with the home offsets
        return lines_until(raw, lambda line: line.startswith("echo:  M206"))
    return lines_until(raw, lambda line: line == BANNER["grbl"])


def send(raw: serial.Serial, command: str) -> list[str]:
    """Send one line, one at a time as both firmwares want it; the lines up to its ``ok``."""
    raw.write(command.encode() + b"\n")
    return lines_until(raw, lambda line: line == "ok")


def position_report(firmware: str, raw: serial.Serial) -> str:
    """Where the firmware says the axes are: Marlin's M114 line, grbl's ``?`` status line."""
    if firmware == "marlin":
        return send(raw, "M114")[-2]
    raw.write(b"?")  # a real-time command: no newline, no ok
    return lines_until(raw, lambda line: line.startswith("<"))[-1]


def wait_for_motion(firmware: str, raw: serial.Serial) -> None:
    """Until the last step (grbl: also the 254 ms before it idles the drivers)."""
    send(raw, "M400" if firmware == "marlin" else "G4 P0")


def expected_report(firmware: str, units: int) -> str:
    axes = "XYZABC"
    if firmware == "marlin":
        steps = units * STEPS_PER_QUARTER // UNITS_PER_QUARTER
        return " ".join(f"{a}:{units:.2f}" for a in axes) + " Count " + " ".join(f"{a}:{steps}" for a in axes)
    return "<Idle|MPos:" + ",".join(f"{units:.3f}" for _ in axes) + "|"


def test_it_boots_and_its_boot_text_reaches_the_host(build):
    firmware, board, raw = build
    text = boot_text(firmware, raw)
    assert BANNER[firmware] in text
    if firmware == "marlin":
        assert text[0] == "start"  # from its first byte: the port was open before the MCU ran
        assert "echo:  M92 X4.44 Y4.44 Z4.44 A4.44 B4.44 C4.44" in text
    else:
        assert text[0] == "error:7" and "$105=4.444" in text  # a blank EEPROM: defaults restored and listed
    assert board.turns() == [] and all(board.sync()[face] == 0 for face in FACES)


def test_a_quarter_turn_on_each_axis_turns_exactly_its_face(build):
    firmware, board, raw = build
    boot_text(firmware, raw)
    send(raw, "G91")
    for face in FACES:
        send(raw, f"G1 {board.axes[face]}{UNITS_PER_QUARTER} F30000")
    wait_for_motion(firmware, raw)
    positions = board.sync()
    assert board.turns() == [(face, 1) for face in FACES]  # in order, one face each, clockwise
    assert board.cube == apply(SOLVED, "U R F D L B")
    assert [positions[face] for face in FACES] == [STEPS_PER_QUARTER] * 6  # exactly 400 steps, no more
    assert position_report(firmware, raw).startswith(expected_report(firmware, UNITS_PER_QUARTER))
    # EN is active low: Marlin keeps the drivers on after a move, grbl turns them off $1 = 254 ms after it
    assert board.enabled() == (set(FACES) if firmware == "marlin" else set())

    for face in reversed(FACES):
        send(raw, f"G1 {board.axes[face]}-{UNITS_PER_QUARTER} F30000")
    wait_for_motion(firmware, raw)
    positions = board.sync()
    assert board.turns()[6:] == [(face, -1) for face in reversed(FACES)]  # counter-clockwise
    assert board.cube == SOLVED
    assert [positions[face] for face in FACES] == [0] * 6
    assert position_report(firmware, raw).startswith(expected_report(firmware, 0))


def test_a_reset_boots_it_again_as_its_reset_pin_would(build):
    firmware, board, raw = build
    boot_text(firmware, raw)
    board.reset()
    text = boot_text(firmware, raw)
    if firmware == "marlin":
        assert text[:2] == ["start", " External Reset"]  # the reset cause Marlin reads from MCUSR
    else:  # its limit and probe inputs are pulled up again, as on silicon: none reads as triggered
        assert "Pn:" not in position_report(firmware, raw)
