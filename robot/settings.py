"""Daemon-wide settings made from config: data directory, solver, run behaviour.

The tables are validated by their ``robot.schema`` models; the rig, cameras,
views, serial link, simulator and web are made by their own modules, and
``robot.assemble`` calls them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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
    table = config.table("robotd")
    log_file = None
    if table.log_file:
        log_file = LogFileSettings(
            path=Path(table.log_file).expanduser(),
            max_mb=LogFileSettings.max_mb if table.log_max_mb is None else table.log_max_mb,
            backups=LogFileSettings.backups if table.log_backups is None else table.log_backups,
        )
    return DaemonSettings(
        data_dir=Path(table.data_dir).expanduser() if table.data_dir else default_data_dir(),
        log_level=table.log_level,
        keep_refused_scans=table.keep_refused_scans,
        history=HistoryLimits(keep_runs=table.history_keep_runs, keep_days=table.history_keep_days),
        log_file=log_file,
    )


def run_settings(config: Config) -> RunSettings:
    """``[solver]`` (budget and search parameters) and ``[run]`` (retries, timeouts, verification)."""
    solver, run = config.table("solver"), config.table("run")
    return RunSettings(
        metric=solver.metric,
        solve_budget_s=solver.budget_s,
        solve_weight=solver.weight,
        solve_batch=solver.batch,
        solve_perimeter=solver.perimeter,
        solve_fallback=None if solver.fallback == "none" else solver.fallback,
        fallback_budget_s=solver.fallback_budget_s,
        verify=run.verify,
        scan_retries=run.scan_retries,
        scan_timeout_s=run.scan_timeout_s,
        execute_factor=run.execute_factor,
        execute_margin_s=run.execute_margin_s,
    )
