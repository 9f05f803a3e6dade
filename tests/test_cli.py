import json
import subprocess
import sys

import pytest

from solver import apply


def cli(*args):
    return subprocess.run([sys.executable, "-m", "solver", *args], capture_output=True, text=True, timeout=120)


def test_scramble_then_solve_json():
    out = cli("scramble", "--puzzle", "2", "--seed", "5")
    assert out.returncode == 0, out.stderr
    scrambled = json.loads(out.stdout)
    assert apply("UUUURRRRFFFFDDDDLLLLBBBB", scrambled["scramble"]) == scrambled["state"]
    out = cli("solve", "--state", scrambled["state"], "--metric", "qtm", "--json")
    result = json.loads(out.stdout)
    assert result["metric"] == "qtm" and result["length"] == result["qtm"]
    assert set(result) >= {"moves", "length", "metric", "seconds"}
    solved = apply(scrambled["state"], result["moves"])
    assert solved == "UUUURRRRFFFFDDDDLLLLBBBB"


def test_scramble_3x3_with_length_is_seeded():
    a = json.loads(cli("scramble", "--puzzle", "3", "--seed", "9", "--moves", "12").stdout)
    b = json.loads(cli("scramble", "--puzzle", "3", "--seed", "9", "--moves", "12").stdout)
    assert a == b and len(a["scramble"].split()) == 12 and len(a["state"]) == 54


def test_solve_prints_moves_and_length():
    state = apply("UUUURRRRFFFFDDDDLLLLBBBB", "R U2 F'")
    out = cli("solve", "--state", state)
    assert out.returncode == 0
    assert out.stdout.splitlines() == ["F U2 R'", "3 moves (HTM)"]


def test_apply_prints_state():
    out = cli("apply", "--state", "UUUURRRRFFFFDDDDLLLLBBBB", "--moves", "R U2 F'")
    assert out.stdout.strip() == apply("UUUURRRRFFFFDDDDLLLLBBBB", "R U2 F'")


def test_table_reports_counts():
    out = json.loads(cli("table", "--puzzle", "2", "--metric", "qtm").stdout)
    assert out["counts"][-1] == 276 and len(out["counts"]) == 15 and isinstance(out["cached"], bool)


@pytest.mark.parametrize(
    "args,message",
    [
        (("solve", "--state", "UUUU"), "54"),
        (("solve", "--state", "UUUURRRRFFFFDDDDLLLLBBBX"), "colour"),
        (("apply", "--state", "UUUURRRRFFFFDDDDLLLLBBBB", "--moves", "R Q"), "move 2"),
        (("scramble", "--puzzle", "3", "--moves", "-1"), "0 or more"),
    ],
)
def test_invalid_input_exits_2_without_traceback(args, message):
    out = cli(*args)
    assert out.returncode == 2
    assert message in out.stderr and "Traceback" not in out.stderr
