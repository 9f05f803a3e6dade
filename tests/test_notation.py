import pytest

from solver import InvalidState
from solver.puzzles.cube.notation import (
    MOVE_NAMES,
    format_moves,
    inverse_moves,
    move_length,
    parse_moves,
    simplify_moves,
)


def names(text):
    return format_moves(simplify_moves(parse_moves(text)))


def test_every_move_round_trips():
    assert parse_moves(" ".join(MOVE_NAMES)) == list(range(18))
    assert format_moves(range(18)) == " ".join(MOVE_NAMES)


def test_spelling_variants():
    assert parse_moves("U2' R’ F") == parse_moves("U2 R' F")
    assert parse_moves("RU2F'") == parse_moves("R U2 F'")
    assert parse_moves("") == []


@pytest.mark.parametrize("text,where", [("R U x", "move 3"), ("R u", "move 2"), ("R3", "move 2"), ("M", "move 1")])
def test_bad_moves_name_the_token(text, where):
    with pytest.raises(InvalidState, match=where):
        parse_moves(text)


def test_inverse():
    assert format_moves(inverse_moves(parse_moves("R U2 F'"))) == "F U2 R'"


@pytest.mark.parametrize(
    "text,expected",
    [
        ("R R", "R2"),
        ("R R'", ""),
        ("R2 R2", ""),
        ("U D U'", "D"),
        ("U D U", "U2 D"),
        ("R U R' U' U R U' R'", ""),
        ("L R L R L", "L' R2"),
        ("F B F2 B'", "F'"),
        ("U R D", "U R D"),
    ],
)
def test_simplify(text, expected):
    assert names(text) == expected


def test_lengths():
    moves = parse_moves("R U2 F' D2")
    assert move_length(moves, "htm") == 4
    assert move_length(moves, "qtm") == 6
    with pytest.raises(InvalidState, match="metric"):
        move_length(moves, "stm")
