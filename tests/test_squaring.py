"""A face an emergency stop left part-way is squared before anything moves again (robot/squaring.py).

Against each G-code target of line_rigs: our Marlin and grbl simulators and
the stock binaries under simavr (which skip where simavr is missing). On a
binary the harness counts the motors' steps: a face squared is within two
steps of a quarter turn (grbl's soft reset in motion, which robotd's stop
is, may lose a step: that is what its ALARM:3 warns of; 0.45 degrees is
nothing to a cube).
"""

import pytest

from line_rigs import SOLVED, TARGETS, estop_mid_move, ready, rigs
from robot.errors import RobotError
from robot.motion import LinkMotion
from robot.squaring import NO_POSITIONS
from solver import apply

FACES = {face: face for face in "URFDLB"}  # the line rigs' links name their motors by face


@pytest.fixture(params=TARGETS)
def rig(request):
    with rigs(request.param) as make:
        yield make


def test_square_faces_turns_a_face_a_stop_left_part_way_back_to_the_nearest_quarter(rig):
    board, link = rig()
    ready(link)
    motion = LinkMotion(link, FACES)
    motion.motors_on = True
    estop_mid_move(board, link)  # L turned, R stopped some 15% into its turn
    said = motion.square_faces()  # clears the stop's fault, reads where R stopped, turns it back
    assert said.startswith("turned to the nearest quarter turn: R ") and said.endswith(" degrees"), said
    assert link.off_square() == {} and board.cube == apply(SOLVED, "L")
    assert motion.square_faces() == "every face was square: nothing to turn"
    if board.real:  # the binary's own count of the steps: grbl's reset in motion may lose one (its ALARM:3)
        steps = board._positions()["R"] % 400
        assert min(steps, 400 - steps) <= 2, board._positions()
        return
    link.turn("R", 1).wait(3)  # square again: a whole quarter turn turns the face
    assert board.cube == apply(SOLVED, "L R")


def test_a_jog_after_a_stop_part_way_squares_the_face_first(rig):
    board, link = rig()
    ready(link)
    motion = LinkMotion(link, FACES)
    motion.motors_on = True
    estop_mid_move(board, link)
    motion.ready()  # what a run, a jog or a rig action calls before it moves
    assert motion.squared is not None and motion.squared.startswith("turned to the nearest quarter turn: R ")
    assert link.off_square() == {}
    motion.ready()
    assert motion.squared is None  # nothing left to square


def test_faces_squared_by_hand_with_the_motors_off_count_as_square_once_they_are_on_again():
    with rigs("marlin") as make:
        board, link = make()
        ready(link)
        motion = LinkMotion(link, FACES)
        motion.motors_on = True
        estop_mid_move(board, link)
        motion.ready()  # squared
        estop_mid_move(board, link)  # part-way again; this time squared by hand
        motion.set_motors(False)
        assert set(link.off_square()) == {"R"}  # the stop's fault cleared: robotd sees R part-way
        motion.set_motors(True)  # the position where they stand becomes square (G92)
        assert link.off_square() == {} and motion.squared is None


def test_a_controller_that_reports_no_positions_cannot_square_and_says_why():
    class Positionless:
        def status(self):
            return {"connected": True, "fault": None}

    motion = LinkMotion(Positionless(), FACES)
    assert "square" not in motion.rig_actions()
    with pytest.raises(RobotError, match="square"):
        motion.square_faces()
    assert motion.square_before_run() is None
    assert "square the faces by hand" in NO_POSITIONS
