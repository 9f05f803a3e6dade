"""Dry runs through the real stock firmware: ``robotd --sim --controller marlin|grblhal --firmware avr``.

The board of the dry run is the stock Marlin (without or with
EMERGENCY_PARSER, ``[sim] emergency_parser``) or grbl build of
shared/stock-firmware under the simavr harness, its cube turned by its STEP
pins; the run must end solved, also when it follows a stop that left a
face part-way (which it squares first). Skips where the harness's tools or the
binaries are missing (fails instead under ROBOTD_REQUIRE_AVR, as
tests/devices.py says).
"""

import time

import pytest

from line_rigs import require_stock
from robot import assemble
from robot.cli import main
from robot.history import History
from robot_doubles import FAST_RIG, solver_keys, wait_for


def config(tmp_path, extra=""):
    """A 2x2 dry run's config: the pocket table solves it, no two-phase worker is started."""
    path = tmp_path / "robotd.toml"
    path.write_text(
        f'[robotd]\ndata_dir = "{tmp_path / "data"}"\n[solver]\n{solver_keys(two_phase=False)}{FAST_RIG}\n{extra}'
    )
    return path


@pytest.mark.parametrize(
    "controller, build, variant, extra",
    [
        ("marlin", "marlin", "", ""),
        ("marlin", "marlin", "ep", "[sim]\nemergency_parser = true\n"),
        ("grblhal", "grbl", "", ""),
    ],
    ids=["marlin", "marlin-ep", "grblhal"],
)
def test_a_dry_run_through_the_stock_binary_ends_solved(tmp_path, capsys, controller, build, variant, extra):
    require_stock(build, variant)
    argv = ["--config", str(config(tmp_path, extra)), "--sim", "--once", "--controller", controller]
    assert main([*argv, "--firmware", "avr", "--puzzle", "2", "--seed", "3"]) == 0, capsys.readouterr().err
    assert "done, cube solved" in capsys.readouterr().out


@pytest.mark.parametrize("variant, extra", [("", ""), ("ep", "[sim]\nemergency_parser = true\n")], ids=["", "ep"])
def test_a_run_after_a_stop_in_the_middle_of_a_turn_squares_the_face_first_and_ends_solved(tmp_path, variant, extra):
    """The stop (M410) leaves a face part-way on the Marlin binary; the next run turns it to the nearest quarter
    turn before it scans (a ``rig`` event says so), then solves the cube it finds. (grbl's stop, a soft reset in
    motion, may lose a step, after which the harness, which counts exact quarter turns, sees no more turns of
    that face: test_squaring.py checks grbl's squaring to within two steps.)"""
    require_stock("marlin", variant)
    slow = "[rig]\nquarter_turn_s = 0.3\nhalf_turn_s = 0.45\nsettle_s = 0.0\n"
    path = tmp_path / "robotd.toml"
    keys = solver_keys(two_phase=False)
    path.write_text(f'[robotd]\ndata_dir = "{tmp_path / "data"}"\n[solver]\n{keys}{slow}{extra}')
    built = assemble.build(path, sim=True, web=False, controller="marlin", firmware="avr")
    try:
        runner = built.daemon.runner
        built.daemon.start_run(puzzle=2, seed=8)
        wait_for(lambda: runner.progress.get("done_moves", 0) >= 1, timeout_s=60)
        time.sleep(0.12)  # into the next turn, which the rig takes right after (settle_s = 0)
        built.daemon.stop()
        assert runner.wait(10) and runner.phase == "stopped"
        summary = built.once(puzzle=2, seed=9)
        assert summary["outcome"] == "done" and summary["solved"], summary["error"]
        events = History(tmp_path / "data" / "history.sqlite").get_run(summary["id"])["events"]
        squared = [e["data"]["message"] for e in events if e["kind"] == "rig"]
        assert len(squared) == 1 and squared[0].startswith("turned to the nearest quarter turn: "), squared
    finally:
        built.close()
