"""Splicing quicker completions into a plan the robot is executing, and the rig-time search that finds them."""

import itertools
from dataclasses import replace

import numpy as np
import pytest

from robot.config import Config
from robot.rig import rig_from_config
from search_doubles import PUZZLE, ChildrenOf, misplaced
from solver.puzzles.cube.batch import from_cubie
from solver.puzzles.cube.cubie import CubieCube, apply_moves_cubie
from solver.puzzles.cube.notation import inverse_moves, parse_moves, simplify_moves
from solver.search.heuristic import load_heuristic
from solver.search.rig_astar import RigSearch, RigShortcut, first_quarter_turns, rig_search
from solver.search.rig_metric import NOT_WITHIN, Commands, RigPerimeter
from solver.search.splice import Found, SplicedPlan, TailSearch, refine

RIG = rig_from_config(Config({}).section("rig"))  # the default rig: a six-motor one, opposite faces together


def rig_plan(moves):
    return [(command.moves, command.seconds) for command in RIG.plan(moves)]


def cube_after(moves) -> CubieCube:
    return apply_moves_cubie(CubieCube.solved(3), moves)


@pytest.fixture(scope="module")
def commands() -> Commands:
    return Commands.of_rig(RIG.planned_s)


@pytest.fixture(scope="module")
def perimeter(commands) -> RigPerimeter:
    return RigPerimeter(commands, 2)


def test_commands_are_the_single_turns_and_the_opposite_pairs_the_rig_makes_cheaper(commands):
    assert len(commands.moves) == 18 + 27
    pairs = [c for c in commands.moves if len(c) == 2]
    assert all(a // 3 % 3 == b // 3 % 3 and a // 3 != b // 3 for a, b in pairs)
    for moves, ms in zip(commands.moves, commands.ms):
        assert ms == round(1000 * RIG.planned_s(list(moves)))
    assert len(Commands.of_rig(replace(RIG, simultaneous_opposite=False).planned_s).moves) == 18


def test_a_command_turns_a_cube_as_its_moves_do_one_after_the_other(commands):
    rng = np.random.default_rng(4)
    scrambles = [rng.integers(0, 18, 12).tolist() for _ in range(40)]
    ids = rng.integers(0, len(commands.moves), len(scrambles))
    states = np.array([from_cubie(cube_after(moves)) for moves in scrambles])
    turned = commands.apply(states, ids)
    for row, moves, c in zip(turned, scrambles, ids.tolist()):
        assert np.array_equal(row, from_cubie(cube_after(moves + list(commands.moves[c]))))


def test_the_rig_perimeter_holds_the_least_motor_time_of_every_state_two_commands_solve(commands, perimeter):
    least = {from_cubie(cube_after([])).tobytes(): 0}
    for count in (1, 2):
        for sequence in itertools.product(range(len(commands.moves)), repeat=count):
            moves = [m for c in sequence for m in commands.moves[c]]
            row = from_cubie(cube_after(inverse_moves(moves)))
            ms = sum(int(commands.ms[c]) for c in sequence)
            least[row.tobytes()] = min(least.get(row.tobytes(), ms), ms)
    rows = np.array([np.frombuffer(key, dtype=np.uint8) for key in least])
    assert perimeter.lookup(rows).tolist() == list(least.values())
    assert len(perimeter) == len(least)
    for row, ms in list(zip(rows, least.values()))[::97]:
        walk = perimeter.finish(row)
        assert walk is not None
        assert from_cubie(cube_after(inverse_moves(walk))).tobytes() == row.tobytes()
        assert round(1000 * RIG.planned_s(walk)) <= ms


def test_a_state_beyond_the_rig_perimeter_is_not_within(perimeter):
    far = from_cubie(cube_after(parse_moves("R U F L D B R")))
    assert perimeter.lookup(far[None]).tolist() == [NOT_WITHIN]


def test_rig_search_solves_in_no_more_motor_time_than_the_scramble_took(commands, perimeter):
    heuristic = load_heuristic()
    scramble = parse_moves("R L' U F2 B D R2 U'")
    moves = rig_search(from_cubie(cube_after(scramble)), commands, perimeter, heuristic, budget_s=10.0)
    assert moves is not None
    assert apply_moves_cubie(cube_after(scramble), moves).is_solved()
    assert RIG.planned_s(moves) <= RIG.planned_s(inverse_moves(scramble)) + 1e-9


def test_a_splice_replaces_what_the_robot_has_not_begun_only_when_it_is_quicker():
    begun = [0]
    plan = SplicedPlan(parse_moves("R U R' U' F2 F2 D"), "two-phase", rig_plan, lambda: begun[0])
    slow = plan.motor_s
    quicker = parse_moves("D")  # F2 F2 cancel: from command 4 on, D alone does the same
    prefix = plan.moves_before(4)
    assert not plan.splice(Found("neural-astar", 4, prefix, parse_moves("F2 F2 D U U'"), 0.01))  # not quicker
    begun[0] = 5
    assert not plan.splice(Found("neural-astar", 4, prefix, quicker, 0.01))  # the robot has begun F2
    begun[0] = 4
    assert not plan.splice(Found("neural-astar", 4, parse_moves("R U R U'"), quicker, 0.01))  # another plan
    assert plan.splice(Found("neural-astar", 4, prefix, quicker, 0.01))
    assert plan.moves == parse_moves("R U R' U' D")
    assert plan.motor_s == pytest.approx(slow - 2 * 0.27)
    assert [(s["solver"], s["moves"]) for s in plan.segments()] == [
        ("two-phase", "R U R' U'"),
        ("neural-astar", "D"),
    ]
    assert plan.splices[0]["from_move"] == 4 and plan.splices[0]["saved_s"] == pytest.approx(0.54)


def test_the_robot_pace_gives_the_moves_begun():
    plan = SplicedPlan(parse_moves("U D R2 F"), "two-phase", rig_plan, lambda: 0)
    assert [plan.moves_begun_by(t) for t in (0.0, 0.16, 0.18, 0.43, 0.45, 9)] == [2, 2, 3, 3, 4, 4]


class Shortcut(TailSearch):
    """Finds the simplified rest of a known padded solution, from wherever it is asked."""

    name = "neural-astar"
    budget_s = 0.1

    def __init__(self, start: CubieCube, moves: list[int]):
        self.start_cube, self.full = start, moves

    def start(self, cube):
        k = next(k for k in range(len(self.full) + 1) if apply_moves_cubie(self.start_cube, self.full[:k]) == cube)
        rest = simplify_moves(self.full[k:])
        return lambda: rest


def test_refine_splices_a_found_shortcut_ahead_of_the_robot_and_ends_with_the_plan():
    scramble = parse_moves("R U F' L2 D B")
    cube = cube_after(scramble)
    padded = inverse_moves(scramble)
    padded[3:3] = parse_moves("U U'")  # two wasted turns in the middle
    now = [0.0]

    def clock():
        now[0] += 0.01
        return now[0]

    plan = SplicedPlan(padded, "two-phase", rig_plan, lambda: plan.moves_begun_by(now[0]))
    refine(cube, plan, [Shortcut(cube, padded)], started_at=0.0, clock=clock)
    assert apply_moves_cubie(cube, plan.moves).is_solved()
    assert plan.moves == inverse_moves(scramble)
    assert {s["solver"] for s in plan.segments()} == {"two-phase", "neural-astar"}


def test_the_rig_shortcut_sweeps_windows_ahead_of_the_robot_up_to_the_end(commands, perimeter):
    plan = SplicedPlan(parse_moves("R U F L B R U F L B"), "two-phase", rig_plan, lambda: 0)
    shortcut = RigShortcut(commands, perimeter, load_heuristic(), budget_s=0.1, windows=(4,))
    assert shortcut.spans(plan, 0.0) == [(1, 5), (2, 6), (3, 7), (4, 8), (5, 9), (6, None)]
    assert shortcut.spans(plan, 1.3) == [(9, None)]  # fewer than 4 commands left: one last tail
    assert shortcut.spans(plan, 5.0) == []
    two = RigShortcut(commands, perimeter, load_heuristic(), budget_s=0.1, windows=(3, 5))
    assert two.spans(plan, 0.0)[:4] == [(1, 4), (1, 6), (2, 5), (2, 7)]
    assert two.spans(plan, 0.0)[-3:] == [(5, None), (6, 9), (6, None)]  # each span once


def test_a_way_through_a_window_keeps_the_plan_after_it():
    plan = SplicedPlan(parse_moves("R U U' F2 D L"), "two-phase", rig_plan, lambda: 0)
    slow = plan.motor_s
    prefix, suffix = parse_moves("R"), tuple(parse_moves("F2 D L"))
    assert not plan.splice(Found("neural-astar", 1, prefix, [], 0.01, 3, tuple(parse_moves("F2 D R"))))  # another plan
    assert plan.splice(Found("neural-astar", 1, prefix, [], 0.01, 3, suffix))
    assert plan.moves == parse_moves("R F2 D L")
    assert plan.motor_s == pytest.approx(slow - 2 * 0.17)
    assert [s["solver"] for s in plan.segments()] == ["two-phase"]
    assert plan.splices[0]["from_move"] == 1 and plan.splices[0]["to_move"] == 1


def test_refine_finds_a_quicker_way_through_the_middle_of_a_plan(commands, perimeter):
    scramble = parse_moves("R U F' L2 D B R' F")
    cube = cube_after(scramble)
    padded = inverse_moves(scramble)
    padded[3:3] = parse_moves("R U R' U' U R U' R'")  # a detour that leads back
    now = [0.0]

    def clock():
        now[0] += 0.01
        return now[0]

    plan = SplicedPlan(padded, "two-phase", rig_plan, lambda: plan.moves_begun_by(now[0]))
    slow = plan.motor_s
    shortcut = RigShortcut(commands, perimeter, load_heuristic(), budget_s=0.2, windows=(6,))
    refine(cube, plan, [shortcut], started_at=0.0, clock=clock)
    assert apply_moves_cubie(cube, plan.moves).is_solved()
    assert plan.motor_s < slow - 0.5
    sources = [s["solver"] for s in plan.segments()]
    assert sources[0] == "two-phase" and "neural-astar" in sources
    assert all(s["to_move"] <= len(plan.moves) for s in plan.splices)


def test_a_command_begins_with_any_quarter_turn_of_its_faces_that_it_can(commands):
    first, more = first_quarter_turns(commands)
    turns = PUZZLE.quarter_turns

    def of(text):
        moves = tuple(parse_moves(text))
        c = commands.moves.index(moves)
        return {turns[q] for q in np.flatnonzero(first[c])}, int(more[c])

    assert of("R") == ({*parse_moves("R")}, 0)
    assert of("R2") == ({*parse_moves("R R'")}, 1)
    assert of("U D'") == ({*parse_moves("U D'")}, 1)
    assert of("U2 D") == ({*parse_moves("U U' D")}, 2)


@pytest.mark.parametrize("seed", [2, 4])
def test_a_per_child_network_is_asked_once_per_expanded_node_and_the_search_still_solves(
    commands, perimeter, monkeypatch, seed
):
    rng = np.random.default_rng(seed)
    scramble = [m for c in rng.integers(0, len(commands.moves), 5) for m in commands.moves[c]]
    cube = from_cubie(cube_after(scramble))
    expanded: list[int] = []
    expand = RigSearch.expand

    def counted(run, popped):
        expanded.extend(popped.tolist())
        expand(run, popped)

    monkeypatch.setattr(RigSearch, "expand", counted)
    per_child = ChildrenOf(misplaced)
    moves = rig_search(cube, commands, perimeter, per_child, budget_s=30.0)
    assert moves is not None and apply_moves_cubie(cube_after(scramble), moves).is_solved()
    assert RIG.planned_s(moves) <= RIG.planned_s(inverse_moves(scramble)) + 1e-9
    assert len(set(expanded)) < len(expanded)  # some nodes were requeued
    assert sum(per_child.calls) == len(set(expanded))  # a requeued node's second pop asks nothing
    plain = rig_search(cube, commands, perimeter, misplaced, budget_s=30.0)
    assert plain is not None and RIG.planned_s(plain) <= RIG.planned_s(inverse_moves(scramble)) + 1e-9
