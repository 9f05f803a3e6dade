"""A Stop the user asks for is one INFO line in the log; a real fault keeps its frames and its dump."""

import logging
import time

import pytest

from robot import assemble
from robot_doubles import FAST_RIG, FLIP_SPIN, QUICK_HOME, wait_for

SLOW_RIG = "[rig]\nquarter_turn_s = 0.1\nhalf_turn_s = 0.15\nsettle_s = 0.0\n" + QUICK_HOME


def build(tmp_path, rig, extra="", controller=None):
    path = tmp_path / "robotd.toml"
    path.write_text(f'[robotd]\ndata_dir = "{tmp_path / "data"}"\n[solver]\nfallback = "none"\n{rig}\n{extra}')
    return assemble.build(path, sim=True, web=False, controller=controller)


@pytest.mark.parametrize(
    "controller, rig",
    [(None, SLOW_RIG), ("marlin", SLOW_RIG), ("grblhal", SLOW_RIG), (None, FLIP_SPIN)],
    ids=["robotd", "marlin", "grblhal", "maestro"],
)
def test_a_stop_mid_run_logs_one_info_line_and_no_fault_dump(tmp_path, caplog, controller, rig):
    built = build(tmp_path, rig, controller=controller)
    try:
        built.daemon.start_run(puzzle=2, seed=8)
        wait_for(lambda: built.daemon.runner.phase == "executing")
        wait_for(lambda: built.daemon.runner.progress.get("done_moves", 0) >= 1)
        with caplog.at_level(logging.DEBUG):
            caplog.clear()
            built.daemon.stop()
            assert built.daemon.runner.wait(5) and built.daemon.runner.phase == "stopped"
            time.sleep(0.2)  # whatever the link's I/O thread would still log about the stop
        said = [(r.levelname, r.getMessage()) for r in caplog.records if r.levelno >= logging.INFO]
        assert said == [("INFO", f"run {built.daemon.runner.run_id} stopped: stop requested")]
        assert not any("last frames" in r.getMessage() for r in caplog.records)
        assert not list((tmp_path / "data" / "faults").glob("*"))
    finally:
        built.close()


def test_a_stalled_motor_still_logs_an_error_with_the_frames_and_a_dump(tmp_path, caplog):
    built = build(tmp_path, FAST_RIG, '[sim.faults]\nstall = ["R", "U", "F", "D", "L", "B"]\n')
    try:
        with caplog.at_level(logging.INFO):
            summary = built.once(puzzle=2, seed=8)
        assert summary["outcome"] == "error" and "stall" in summary["error"]
        errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
        assert any("STALL" in text and "last frames" in text for text in errors), errors
        assert len(list((tmp_path / "data" / "faults").glob("fault-*.log"))) == 1
    finally:
        built.close()
