"""robotd's disk limits: read and checked from the config, and kept by a simulated daemon."""

import pytest

from firmware_interface import LogLimits
from robot import assemble
from robot.cli import main
from robot.errors import ConfigError
from robot.history_limits import HistoryLimits
from robot_doubles import FAST_RIG, solver_keys


def config(tmp_path, robotd="", serial="", extra="", two_phase=True):
    path = tmp_path / "robotd.toml"
    path.write_text(
        f'[robotd]\ndata_dir = "{tmp_path / "data"}"\n{robotd}\n[serial]\n{serial}\n'
        f"[solver]\n{solver_keys(two_phase)}{FAST_RIG}\n{extra}"
    )
    return path


def test_the_defaults_bound_every_artefact(tmp_path):
    parts = assemble.load_parts(config(tmp_path), sim=True)
    assert parts.daemon.history == HistoryLimits(keep_runs=10_000, keep_days=365)
    assert parts.daemon.keep_refused_scans == 20
    assert parts.sections["controller"].settings.logs == LogLimits(10 * 2**20, 4, 50)


def test_the_limits_are_read(tmp_path):
    path = config(
        tmp_path,
        "history_keep_runs = 7\nhistory_keep_days = 0",
        "trace_max_mb = 0.5\ntrace_backups = 1\nkeep_fault_logs = 0",
    )
    parts = assemble.load_parts(path, sim=True)
    assert parts.daemon.history == HistoryLimits(keep_runs=7, keep_days=0)
    assert parts.sections["controller"].settings.logs == LogLimits(2**19, 1, 0)


@pytest.mark.parametrize(
    "section, line, words",
    [
        ("robotd", "history_keep_runs = 0", "[robotd] history_keep_runs: must be at least 1"),
        ("robotd", "history_keep_days = -1", "[robotd] history_keep_days: must be at least 0"),
        ("robotd", "history_keep_days = 1.5", "[robotd] history_keep_days: must be a whole number"),
        ("serial", "trace_max_mb = 0", "[serial] trace_max_mb: must be at least 0.01"),
        ("serial", "trace_max_mb = 2048", "[serial] trace_max_mb: must be at most 1024"),
        ("serial", 'trace_max_mb = "10M"', "[serial] trace_max_mb: must be a number"),
        ("serial", "trace_backups = 0", "[serial] trace_backups: must be at least 1"),
        ("serial", "keep_fault_logs = 10001", "[serial] keep_fault_logs: must be at most 10000"),
        ("serial", "trace_rotate = 3", "[serial] trace_rotate: unknown option"),
    ],
)
def test_bad_limits_name_the_key_and_line(tmp_path, capsys, section, line, words):
    path = config(tmp_path, **{section: line})
    assert main(["--config", str(path), "--sim", "--once"]) == 2
    err = capsys.readouterr().err
    assert f"error: {path}:" in err and words in err


def test_another_controller_takes_no_trace_limits(tmp_path):
    path = config(tmp_path, serial="trace_backups = 2", extra='[controller]\nkind = "marlin"\n')
    with pytest.raises(
        ConfigError,
        match=r"\[serial\] trace_backups: applies to robotd's own firmware; a marlin "
        "controller keeps no trace or fault logs",
    ):
        assemble.load_parts(path, sim=True)


def test_a_daemon_keeps_its_files_within_the_limits(tmp_path):
    data = tmp_path / "data"
    path = config(
        tmp_path,
        "history_keep_runs = 2",
        f'trace = "{data / "trace.log"}"\ntrace_max_mb = 0.01\ntrace_backups = 1\nkeep_fault_logs = 1',
        two_phase=False,  # 2x2 runs only
    )
    built = assemble.build(path, sim=True, web=False)
    try:
        for seed in range(60):  # the trace grows with time (heartbeats): run until it has rotated
            stall = seed % 2 == 1
            for motor in "URFDLB":
                built.simulation.firmware.stall(motor, stall)
            built.once(puzzle=2, seed=seed)  # a stalled run ends in error, with a fault dump
            if seed >= 3 and (data / "trace.log.1").exists():
                break
        runs = built.daemon.history.list_runs()
    finally:
        built.close()
    assert [run["id"] for run in runs] == [seed + 1, seed]
    assert len(list((data / "faults").iterdir())) == 1
    traces = sorted(p.name for p in data.iterdir() if p.name.startswith("trace.log"))
    assert traces == ["trace.log", "trace.log.1"]
    assert all((data / name).stat().st_size <= 0.01 * 2**20 for name in traces)
