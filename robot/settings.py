"""Daemon-wide settings read from config: data directory, solver, run behaviour.

The rig, cameras, views, serial link, simulator and web sections are read
by their own modules; ``robot.assemble`` calls them all, then checks that
no unknown key is left.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from solver.api import DEFAULT_FALLBACK, DEFAULT_FALLBACK_BUDGET_S, FALLBACKS
from solver.astar import DEFAULT_BATCH, DEFAULT_BUDGET_S, DEFAULT_WEIGHT
from solver.notation import METRICS
from solver.perimeter import DEFAULT_DEPTH as DEFAULT_PERIMETER, MAX_DEPTH as MAX_PERIMETER

from .config import Config
from .history_limits import HistoryLimits
from .log_file import LogFileSettings
from .paths import default_data_dir
from .run import RunSettings


@dataclass(frozen=True)
class DaemonSettings:
    data_dir: Path
    log_level: str
    keep_refused_scans: int = 20
    history: HistoryLimits = HistoryLimits()
    log_file: LogFileSettings | None = None


def daemon_settings(config: Config) -> DaemonSettings:
    """``[robotd]``: where the history lives and how much of it stays, how much goes to the log (stderr /
    the journal, and optionally a rotated file), and how many refused scans stay in ``data_dir/refused-scans``
    for bug reports."""
    section = config.section("robotd")
    data_dir = section.get_str("data_dir", None)
    log_file = section.get_str("log_file", None)
    return DaemonSettings(
        data_dir=Path(data_dir).expanduser() if data_dir else default_data_dir(),
        log_level=section.get_str("log_level", "info", choices=("debug", "info", "warning", "error")),
        keep_refused_scans=section.get_int("keep_refused_scans", 20, minval=0, maxval=1000),
        history=HistoryLimits(
            keep_runs=section.get_int("history_keep_runs", HistoryLimits.keep_runs, minval=1, maxval=10_000_000),
            keep_days=section.get_int("history_keep_days", HistoryLimits.keep_days, minval=0, maxval=36_500)),
        log_file=LogFileSettings(
            path=Path(log_file).expanduser(),
            max_mb=section.get_float("log_max_mb", LogFileSettings.max_mb, minval=0.01, maxval=1024),
            backups=section.get_int("log_backups", LogFileSettings.backups, minval=1, maxval=100),
        ) if log_file else _unused(section, "log_max_mb", "log_backups"),
    )


def _unused(section, *keys: str) -> None:
    """Keys that only apply with another: read (so they are not unknown), refused when given."""
    for key in keys:
        section.config.used.add(f"{section.name}.{key}")
        if key in section.data:
            section.config.report(f"{section.name}.{key}", "applies only with log_file set")


def run_settings(config: Config) -> RunSettings:
    """``[solver]`` (budget and search parameters) and ``[run]`` (retries, timeouts, verification)."""
    solver = config.section("solver")
    run = config.section("run")
    fallback = solver.get_str("fallback", DEFAULT_FALLBACK, choices=(*FALLBACKS, "none"))
    return RunSettings(
        metric=solver.get_str("metric", "htm", choices=METRICS),
        solve_budget_s=solver.get_float("budget_s", DEFAULT_BUDGET_S, above=0, maxval=3600),
        solve_weight=solver.get_float("weight", DEFAULT_WEIGHT, above=0, maxval=100),
        solve_batch=solver.get_int("batch", DEFAULT_BATCH, minval=1, maxval=100_000),
        solve_perimeter=solver.get_int("perimeter", DEFAULT_PERIMETER, minval=0, maxval=MAX_PERIMETER),
        solve_fallback=None if fallback == "none" else fallback,
        fallback_budget_s=solver.get_float("fallback_budget_s", DEFAULT_FALLBACK_BUDGET_S, above=0, maxval=600),
        verify=run.get_bool("verify", True),
        scan_retries=run.get_int("scan_retries", 2, minval=0, maxval=20),
        scan_timeout_s=run.get_float("scan_timeout_s", 20.0, above=0, maxval=600),
        execute_factor=run.get_float("execute_factor", 2.0, minval=1, maxval=100),
        execute_margin_s=run.get_float("execute_margin_s", 10.0, minval=0, maxval=3600),
    )
