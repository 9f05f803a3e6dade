"""robotd end to end in simulation: real pyserial path to the simulated firmware, rendered camera, history."""

import contextlib
import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import devices
from robot import assemble
from robot.cli import main
from robot.history import History
from robot.summary import format_summary
from robot_doubles import FAST_RIG, QUICK_HOME, solver_keys


def config(tmp_path, extra="", rig=FAST_RIG, two_phase=True):
    path = tmp_path / "robotd.toml"
    path.write_text(f'[robotd]\ndata_dir = "{tmp_path / "data"}"\n[solver]\n{solver_keys(two_phase)}{rig}\n{extra}')
    return path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def serving(tmp_path, extra="", rig=FAST_RIG, two_phase=True):
    """``robotd --sim`` in its own process, its dashboard on a free port: yields the dashboard's URL.

    Its output goes to ``tmp_path / "robotd.log"`` (a pipe nobody reads could fill and block it)."""
    port = free_port()
    path = config(tmp_path, f"[web]\nport = {port}\n{extra}", rig, two_phase)
    log = tmp_path / "robotd.log"
    with open(log, "w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "robot", "--config", str(path), "--sim"],
            stdout=output,
            stderr=subprocess.STDOUT,
            text=True,
        )
    try:
        deadline = time.time() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                assert process.poll() is None, log.read_text()
                assert time.time() < deadline, "robotd --sim did not start listening"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_the_two_phase_worker_imports_no_camera_vision_or_web_stack():
    """The worker is a spawned process, and a spawned process runs its parent's main module again as
    ``__mp_main__``: for the robotd command, the script pip wrote. That must not load what only the daemon
    needs (a second longer to start, 80 MB more in the worker)."""
    script = Path(sys.executable).with_name("robotd")
    if not script.exists():
        pytest.skip("robotd is not installed beside this Python (pip install -e .)")
    heavy = ("cv2", "scipy", "fastapi", "uvicorn", "onnxruntime", "vision", "serial")
    code = (
        "import runpy, sys; runpy.run_path(sys.argv[1], run_name='__mp_main__'); "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(script)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def once(tmp_path, extra="", **options):
    """One dry run; the two-phase worker only where it solves a 3x3."""
    built = assemble.build(config(tmp_path, extra, two_phase=options.get("puzzle") == 3), sim=True, web=False)
    try:
        return built.once(**options)
    finally:
        built.close()


@pytest.mark.parametrize("puzzle, moves, light", [(2, None, "tungsten"), (3, 4, "daylight")])
def test_dry_run_ends_solved(tmp_path, puzzle, moves, light):
    summary = once(tmp_path, puzzle=puzzle, seed=11, moves=moves, light=light)
    assert summary["outcome"] == "done", summary["error"]
    assert summary["solved"] and summary["puzzle"] == puzzle and summary["light"] == light
    assert set(summary["step_durations"]) == {"scanning", "solving", "executing", "verifying"}


def test_already_solved_cube_is_a_run_with_zero_moves(tmp_path):
    summary = once(tmp_path, puzzle=3, moves=0)
    assert summary["outcome"] == "done" and summary["solved"] and summary["length_htm"] == 0


def test_frame_faults_do_not_stop_a_run(tmp_path):
    faults = "[sim.faults]\ndrop = 0.2\ncorrupt = 0.1\nduplicate = 0.02\nseed = 3\n"
    summary = once(tmp_path, faults, puzzle=2, seed=5)
    assert summary["outcome"] == "done" and summary["solved"]
    # frames were lost and sent again, or arrived damaged (a plan now goes in a few PLAN frames)
    assert summary["link"].get("retransmissions", 0) + summary["link"].get("decode_errors", 0) > 0


@pytest.mark.parametrize(
    "faults, words",
    [
        ('stall = ["R"]', "a motor stalled"),
        ("reset_after = 4", "the motor board reset during the run"),
        ("close_after = 4", "serial port was lost"),
        ("silent_after = 4", "went silent"),
    ],
)
def test_rig_faults_end_the_run_with_a_reason_and_are_recorded(tmp_path, faults, words):
    summary = once(tmp_path, f"[sim.faults]\n{faults}\n", puzzle=2, seed=5, moves=None)
    assert summary["outcome"] == "error" and not summary["solved"]
    assert words in summary["error"]
    run = History(tmp_path / "data" / "history.sqlite").get_run(summary["id"])
    assert run["outcome"] == "error" and words in run["error"]


def test_stop_mid_execution_reaches_the_firmware(tmp_path):
    """The latency itself (under 100 ms) is measured by bench/robotd.py and bench/controllers.py."""
    slow = "[rig]\nquarter_turn_s = 0.2\nhalf_turn_s = 0.3\nsettle_s = 0.0\n" + QUICK_HOME
    built = assemble.build(config(tmp_path, rig=slow, two_phase=False), sim=True, web=False)
    try:
        built.daemon.start_run(puzzle=2, seed=8)
        deadline = time.time() + 20
        while built.daemon.runner.phase != "executing" and time.time() < deadline:
            time.sleep(0.002)
        time.sleep(0.25)
        asked = time.monotonic()
        built.daemon.stop()
        assert built.daemon.runner.wait(5)
        handled = built.simulation.firmware.estop_times()
        assert handled and handled[-1] >= asked
        assert built.daemon.runner.phase == "stopped"
    finally:
        built.close()


def test_kill_9_during_a_run_is_marked_interrupted_at_the_next_start(tmp_path):
    slow = "[rig]\nquarter_turn_s = 0.5\nhalf_turn_s = 0.5\nsettle_s = 0.0\n" + QUICK_HOME
    path = config(tmp_path, rig=slow, two_phase=False)
    process = subprocess.Popen(
        [sys.executable, "-m", "robot", "--config", str(path), "--sim", "--once", "--puzzle", "2", "--seed", "4"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    history_path = tmp_path / "data" / "history.sqlite"
    deadline = time.time() + 60
    while time.time() < deadline:
        if history_path.exists():
            runs = History(history_path).list_runs()
            if runs and runs[0]["solution"] is not None:
                break
        time.sleep(0.1)
    process.send_signal(signal.SIGKILL)
    process.wait(10)
    assert main(["history", "--config", str(path), "--json"]) == 0
    run = History(history_path).list_runs()[0]
    assert run["outcome"] == "interrupted"


def test_config_error_names_the_key_and_line(tmp_path, capsys):
    path = config(tmp_path, "[sim]\npuzle = 3\n")
    assert main(["--config", str(path), "--sim", "--once"]) == 2
    err = capsys.readouterr().err
    line = path.read_text().splitlines().index("puzle = 3") + 1
    assert f"error: {path}:{line}: [sim] puzle: unknown option (known here: " in err


def test_once_prints_a_summary_and_json(tmp_path, capsys):
    path = config(tmp_path, two_phase=False)
    assert main(["--config", str(path), "--sim", "--once", "--puzzle", "2", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "cube solved" in out and "solution  :" in out and "motor time:" in out
    assert main(["--config", str(path), "--sim", "--once", "--puzzle", "2", "--seed", "3", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["solved"] is True and summary["scramble"]
    assert main(["history", "--config", str(path)]) == 0
    assert capsys.readouterr().out.count("done") == 2


def test_sim_options_need_sim(tmp_path, capsys):
    assert main(["--config", str(config(tmp_path)), "--once", "--seed", "3"]) == 2
    assert "only apply with --sim" in capsys.readouterr().err


def test_real_rig_needs_a_port(tmp_path, capsys):
    assert main(["--config", str(config(tmp_path)), "--once"]) == 2
    assert "[serial] port: required for a real rig" in capsys.readouterr().err


def test_the_sample_config_is_valid():
    parts = assemble.load_parts("deploy/robotd.toml", sim=False)
    assert parts.sections["rig"].kind == "six-axis" and set(parts.sections["cameras"]) == {"ufr", "dlb"}


def test_a_deep_3x3_scramble_is_solved_by_two_phase_and_refined_while_the_robot_turns(tmp_path):
    path = tmp_path / "robotd.toml"
    path.write_text(
        f'[robotd]\ndata_dir = "{tmp_path / "data"}"\n[solver]\nbudget_s = 0.2\n'
        f'fallback = "two-phase"\nfallback_budget_s = 1.0\n{FAST_RIG}'
    )
    built = assemble.build(path, sim=True, web=False)
    try:
        summary = built.once(puzzle=3, seed=7)
    finally:
        built.close()
    assert summary["outcome"] == "done" and summary["solved"]
    assert summary["solver"] == "two-phase" and summary["length_htm"] <= 30
    params = summary["solver_params"]
    assert [c["solver"] for c in params["candidates"]] == ["two-phase"]  # neural A* only without its answer
    assert " ".join(segment["moves"] for segment in params["segments"]) == summary["solution"]
    assert "candidate : two-phase in " in format_summary(summary)
    assert "moves by  : two-phase 1-" in format_summary(summary)


AVR_RIG = (
    FAST_RIG
    + """
[rig.stepper]
steps_per_quarter = 50
max_rate = 20000
accel = 1000000

[rig.direction]
U = 1
R = 1
F = 1
D = 1
L = -1
B = 1

[sim]
firmware = "avr"
"""
)


@pytest.mark.parametrize("puzzle, faults", [(2, ""), (3, "[sim.faults]\ndrop = 0.05\ncorrupt = 0.02\nnoise = 0.02\n")])
def test_dry_run_through_the_avr_firmware_ends_solved(tmp_path, puzzle, faults):
    """The firmware binary on a simulated ATmega2560: MOTOR set-up (L mounted reversed), PLAN upload, real steps."""
    devices.require_avr()
    built = assemble.build(config(tmp_path, faults, rig=AVR_RIG, two_phase=puzzle == 3), sim=True, web=False)
    try:
        summary = built.once(puzzle=puzzle, seed=21)
    finally:
        built.close()
    assert summary["outcome"] == "done", summary["error"]
    assert summary["solved"] and summary["length_htm"] > 0


def test_once_names_the_doubtful_stickers_and_where_the_refused_scan_is_kept(tmp_path, capsys, monkeypatch):
    from doubtful_scans import grey_edges
    from robot.sim import Simulation

    rendered = Simulation.frames
    monkeypatch.setattr(Simulation, "frames", lambda self: grey_edges(rendered(self), self.views()))
    path = config(tmp_path, "[run]\nscan_retries = 0\n")
    path.write_text(path.read_text().replace("[robotd]\n", "[robotd]\nkeep_refused_scans = 1\n"))
    for seed in ("3", "4"):
        assert main(["--config", str(path), "--sim", "--once", "--puzzle", "3", "--seed", seed]) == 1
    out = capsys.readouterr().out
    kept = list((tmp_path / "data" / "refused-scans").iterdir())
    assert len(kept) == 1 and kept[0].name.endswith("-run2")  # keep_refused_scans = 1
    assert f"the refused scan is kept in {kept[0]}" in out
    assert f"scan kept : {kept[0]} (frames, overlay and scan.json: attach it to a bug report)" in out
    assert f"overlay   : {kept[0] / 'overlay.png'}" in out
    doubts = [line for line in out.splitlines() if line.startswith("in doubt  : ")]
    assert len(doubts) == 2 and all(len(line.split(",")) >= 2 for line in doubts)
    assert json.loads((kept[0] / "scan.json").read_text())["doubtful"] == doubts[-1][12:].split(", ")


@pytest.mark.parametrize(
    "value, words",
    [("-1", "must be at least 0"), ("1001", "must be at most 1000"), ('"ten"', "must be a whole number")],
)
def test_keep_refused_scans_is_checked(tmp_path, capsys, value, words):
    path = config(tmp_path)
    path.write_text(path.read_text().replace("[robotd]\n", f"[robotd]\nkeep_refused_scans = {value}\n"))
    assert main(["--config", str(path), "--sim", "--once"]) == 2
    assert f"[robotd] keep_refused_scans: {words}" in capsys.readouterr().err
