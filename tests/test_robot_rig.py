"""Rig planning: merged opposite-face commands replay to the same cube as the plain sequence."""

import numpy as np
import pytest

import solver
from robot.config import Config
from robot.rig import rig_from_config
from robot.rig_plan import estimate_s
from solver.puzzles.cube.notation import FACES, format_moves, parse_moves


def rig(**options):
    config = Config({"rig": options})
    return rig_from_config(config.section("rig"))


def replay(state, plan):
    for command in plan:
        for turn in command.turns:
            suffix = {1: "", 2: "2", -1: "'"}[turn.quarter_turns]
            state = solver.apply(state, turn.face + suffix)
    return state


def test_opposite_faces_merge_and_replay_to_the_same_state():
    moves = parse_moves("U D' R L2 F B U R2 D")
    plan = rig(quarter_turn_s=0.1, half_turn_s=0.18, settle_s=0.02).plan(moves)
    assert [c.text for c in plan] == ["U D'", "R L2", "F B", "U", "R2", "D"]
    assert estimate_s(plan) == pytest.approx(0.1 + 0.18 + 0.1 + 0.1 + 0.18 + 0.1 + 6 * 0.02)
    start = solver.scramble(3, seed=5)["state"]
    assert replay(start, plan) == solver.apply(start, format_moves(moves))


def test_random_sequences_replay_identically():
    rng = np.random.default_rng(1)
    start = solver.scramble(3, seed=9)["state"]
    for _ in range(20):
        moves = [int(m) for m in rng.integers(0, 18, size=30)]
        plan = rig().plan(moves)
        assert [m for c in plan for m in c.moves] == moves
        assert replay(start, plan) == solver.apply(start, format_moves(moves))


def test_no_merging_when_the_rig_forbids_it():
    plan = rig(simultaneous_opposite=False).plan(parse_moves("U D"))
    assert [c.text for c in plan] == ["U", "D"]


def test_motor_names_and_directions():
    motors = {f: f"M{i}" for i, f in enumerate(FACES)}
    direction = {f: (-1 if f == "R" else 1) for f in FACES}
    plan = rig(motors=motors, direction=direction).plan(parse_moves("R' U2"))
    assert plan[0].turns[0].motor == "M1" and plan[0].turns[0].motor_quarter_turns == 1
    assert plan[1].turns[0].quarter_turns == 2 and plan[1].turns[0].motor_quarter_turns == 2
