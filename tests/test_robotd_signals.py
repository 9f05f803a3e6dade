"""robotd and the operating system: signals stop the run, one daemon per data directory, reading history
changes nothing."""

import signal
import subprocess
import sys
import time

import pytest

from robot import assemble
from robot.cli import main
from robot.history import History
from robot_doubles import QUICK_HOME
from test_robotd import config

SLOW_RIG = "[rig]\nquarter_turn_s = 0.3\nhalf_turn_s = 0.4\nsettle_s = 0.0\n" + QUICK_HOME
# every run here is a 2x2 (the pocket table): no two-phase worker (test_robotd.config)


def _wait_for_solution(history_path, process, seconds=90):
    deadline = time.time() + seconds
    while time.time() < deadline and process.poll() is None:
        if history_path.exists():
            runs = History(history_path).list_runs()
            if runs and runs[0]["solution"] is not None:
                return runs[0]["id"]
        time.sleep(0.05)
    raise AssertionError("the run never reached a solution")


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_mid_run_stops_the_motors_and_records_the_run_as_stopped(tmp_path, signum, code):
    path = config(tmp_path, rig=SLOW_RIG, two_phase=False)
    process = subprocess.Popen(
        [sys.executable, "-m", "robot", "--config", str(path), "--sim", "--once", "--puzzle", "2", "--seed", "4"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    history_path = tmp_path / "data" / "history.sqlite"
    run_id = _wait_for_solution(history_path, process)
    process.send_signal(signum)
    out, err = process.communicate(timeout=30)
    assert process.returncode == code, err[-2000:]
    run = History(history_path).get_run(run_id)
    name = signal.Signals(signum).name
    assert run["outcome"] == "stopped" and run["error"] == f"stopped: robotd received {name}"
    assert "cube NOT solved" in out and name in out
    assert any(e["kind"] == "stop_requested" for e in run["events"])


def test_a_second_daemon_on_the_same_data_directory_refuses_to_start(tmp_path, capsys):
    path = config(tmp_path, two_phase=False)
    built = assemble.build(path, sim=True, web=False)
    try:
        assert main(["--config", str(path), "--sim", "--once"]) == 2
        err = capsys.readouterr().err
        assert "another robotd" in err and str(tmp_path / "data") in err and "data_dir" in err
    finally:
        built.close()
    # released on close: the next daemon starts
    assert main(["--config", str(path), "--sim", "--once", "--puzzle", "2", "--seed", "1"]) == 0


def test_reading_the_history_during_a_run_leaves_the_run_alone(tmp_path, capsys):
    path = config(tmp_path, rig=SLOW_RIG, two_phase=False)
    built = assemble.build(path, sim=True, web=False)
    try:
        run_id = built.daemon.start_run(puzzle=2, seed=4)
        while built.daemon.runner.phase != "executing":
            time.sleep(0.01)
        assert main(["--config", str(path), "history", "--json"]) == 0  # --config before the command counts
        assert main(["history", "--config", str(path)]) == 0
        assert History(tmp_path / "data" / "history.sqlite").get_run(run_id)["outcome"] == "running"
        assert built.daemon.runner.wait(60)
        assert built.daemon.history.get_run(run_id)["outcome"] == "done"
    finally:
        built.close()
    assert str(run_id) in capsys.readouterr().out
