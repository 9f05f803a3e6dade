"""Each face turns a quarter turn, whatever steps per unit the board was left with (firmware_interface/axis_steps.py).

Against each line target (our Marlin and grbl simulators and the real stock
binaries under simavr): an axis left with other steps per unit than the rest
is refused at connect, before any move, with what to do; with the rig's
``steps_per_quarter`` stated, robotd sets the board's steps per unit and the
faces turn right. The rules themselves are tested without a board.
"""

from __future__ import annotations

import time

import pytest
import serial

import devices
from firmware_interface import HandshakeError
from firmware_interface.axis_steps import MOST_STEPS, quarter_steps, refusal, wanted
from firmware_interface.stock_firmware import AXES
from line_rigs import SOLVED, TARGETS, random_plan, ready, rigs
from solver import apply

FACES_ON = dict(AXES)  # U:X R:Y F:Z D:A L:B B:C
STOCK = {axis: 400 / 90 for axis in "XYZABC"}  # the stock builds: 400 steps per 90 units
# D's axis set to 800 steps per unit, as a build with a printer's Z value would have it: a 90-unit turn is 72,000
ODD_AXIS = {"marlin": b"M92 A800\n", "grblhal": b"$103=800\n"}


def how(values: dict[str, float]) -> str:
    return "M92 " + " ".join(f"{axis}{value:.4f}" for axis, value in values.items())


def test_one_odd_axis_is_refused_with_the_fix():
    board = dict(STOCK, A=800.0)
    why = refusal(board, FACES_ON, 90.0, None, how, "controller.marlin")
    assert "D 72000 (A 800/unit)" in why and "U 400 (X 4.44444/unit)" in why
    assert (
        "if 400 is right for every motor: M92 A4.4444" in why
        and "steps_per_quarter" in why
        and "[controller.marlin]" in why
    )
    assert refusal(STOCK, FACES_ON, 90.0, None, how, "controller.marlin") is None


def test_alike_but_more_than_a_rig_takes_is_refused():
    board = {axis: 800.0 for axis in "XYZABC"}
    why = refusal(board, FACES_ON, 90.0, None, how, "controller.grblhal")
    assert f"72000 steps on every face, more than any cube rig's motors take ({MOST_STEPS})" in why


def test_stated_steps_are_set_where_they_differ_and_checked():
    stated = {face: 800.0 for face in FACES_ON}
    board = dict(STOCK, C=800 / 90)  # B's axis already right
    assert set(wanted(board, FACES_ON, 90.0, stated)) == set("XYZAB")
    why = refusal(board, FACES_ON, 90.0, stated, how, "controller.marlin")
    assert "face U 400 steps (wanted 800)" in why and "face B" not in why
    assert refusal({axis: 800 / 90 for axis in "XYZABC"}, FACES_ON, 90.0, stated, how, "controller.marlin") is None
    assert wanted(board, FACES_ON, 90.0, None) == {}  # nothing stated: nothing set


def test_an_axis_the_board_did_not_report_is_refused():
    board = {axis: value for axis, value in STOCK.items() if axis != "B"}
    assert "axis B (face L)" in refusal(board, FACES_ON, 90.0, None, how, "controller.marlin")
    assert quarter_steps(STOCK, FACES_ON, 90.0) == {face: 400.0 for face in FACES_ON}


@pytest.fixture(params=TARGETS)
def rig(request):
    with rigs(request.param) as make:
        yield make


def set_on_the_board(board, data: bytes) -> None:
    """Send one line on a raw port, as a user's earlier session (or an old config) left the board."""
    with serial.Serial(board.path, 115200, timeout=0.2) as raw:
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline and devices.read_line(raw):
            pass  # the boot text
        raw.write(data)
        while time.monotonic() < deadline:
            if devices.read_line(raw).strip() == b"ok":
                return
    raise AssertionError(f"no ok to {data!r}")


def test_an_axis_left_with_other_steps_is_refused_before_any_move(rig):
    board, link = rig({"reset_on_open": False})
    set_on_the_board(board, ODD_AXIS[rig.dialect.name])
    with pytest.raises(HandshakeError, match=r"D 72000 \(A 800/unit\)") as refused:
        link.connect()
    assert "steps_per_quarter" in str(refused.value)
    assert board.cube == SOLVED


def test_stated_steps_per_quarter_are_set_and_the_faces_turn_right(rig):
    motors = 800  # a 200-step motor at 1/16 microstepping; the board was built for 400
    built = {} if rig.target.real else {"steps_per_unit": STOCK}
    board, link = rig({"steps_per_quarter": motors, **built}, steps_per_quarter=motors)
    info = ready(link)
    assert info["steps_per_quarter"] == pytest.approx({face: motors for face in FACES_ON}, rel=0.005)
    entries, moves = random_plan(4, seed=3)
    link.wait(link.plan(entries), timeout=30)
    assert board.cube == apply(SOLVED, " ".join(moves))
