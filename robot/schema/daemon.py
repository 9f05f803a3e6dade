"""``[robotd]``, ``[solver]``, ``[run]``, ``[web]`` and ``[vision]``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, ValidationInfo, field_validator

from solver.api import DEFAULT_FALLBACK, DEFAULT_FALLBACK_BUDGET_S, FALLBACKS
from solver.puzzles.cube.notation import METRICS
from solver.search.astar import DEFAULT_BATCH, DEFAULT_BUDGET_S, DEFAULT_WEIGHT
from solver.search.perimeter import DEFAULT_DEPTH as DEFAULT_PERIMETER
from solver.search.perimeter import MAX_DEPTH as MAX_PERIMETER

from ..history_limits import HistoryLimits
from ..web_guard import host_entry, origin_entry
from .base import Puzzle, Table, choice, number


class RobotdTable(Table):
    """Where the history lives and how much stays; how much goes to the log, and to an optional file."""

    data_dir: str | None = None
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    keep_refused_scans: int = Field(default=20, ge=0, le=1000)
    history_keep_runs: int = Field(default=HistoryLimits.keep_runs, ge=1, le=10_000_000)
    history_keep_days: int = Field(default=HistoryLimits.keep_days, ge=0, le=36_500)
    log_file: str | None = None
    log_max_mb: float | None = Field(default=None, ge=0.01, le=1024, description="default 10")
    log_backups: int | None = Field(default=None, ge=1, le=100, description="default 4")

    @field_validator("log_max_mb", "log_backups", mode="before")
    @classmethod
    def _with_log_file(cls, value: Any, info: ValidationInfo) -> Any:
        if info.data.get("log_file") is None:
            raise ValueError("applies only with log_file set")
        return value


class SolverTable(Table):
    metric: choice(METRICS) = "htm"  # type: ignore[valid-type]
    budget_s: float = Field(default=DEFAULT_BUDGET_S, gt=0, le=3600)
    weight: float = Field(default=DEFAULT_WEIGHT, gt=0, le=100)
    batch: int = Field(default=DEFAULT_BATCH, ge=1, le=100_000)
    perimeter: int = Field(default=DEFAULT_PERIMETER, ge=0, le=MAX_PERIMETER)
    fallback: choice((*FALLBACKS, "none")) = DEFAULT_FALLBACK  # type: ignore[valid-type]
    fallback_budget_s: float = Field(default=DEFAULT_FALLBACK_BUDGET_S, gt=0, le=600)


class RunTable(Table):
    verify: bool = True
    scan_retries: int = Field(default=2, ge=0, le=20)
    scan_timeout_s: float = Field(default=20.0, gt=0, le=600)
    execute_factor: float = Field(default=2.0, ge=1, le=100)
    execute_margin_s: float = Field(default=10.0, ge=0, le=3600)


HostName = Annotated[str, BeforeValidator(host_entry)]
Origin = Annotated[str, BeforeValidator(origin_entry)]


class WebTable(Table):
    """Where the dashboard listens and who may move the robot through it."""

    host: HostName = "127.0.0.1"
    port: int = Field(default=8080, ge=1, le=65535)
    api_key: str | None = Field(default=None, min_length=12)
    root_path: str = ""
    cors_origins: list[Origin] = []
    allowed_hosts: list[HostName] = []
    max_body_bytes: int = Field(default=64 * 1024, ge=1024, le=16 * 1024 * 1024)
    behind_proxy: bool = False
    api_docs: bool = False
    stream_fps: float = Field(default=12.0, gt=0, le=60)
    client_queue: int = Field(default=256, ge=8, le=100_000)
    enabled: bool = True


def _four_points(value: Any) -> Any:
    point = number(float("-inf"), float("inf"))
    if not (
        isinstance(value, list)
        and len(value) == 4
        and all(
            isinstance(p, list) and len(p) == 2 and all(point(v) and not isinstance(v, bool) for v in p) for p in value
        )
    ):
        raise ValueError(
            "must be four [x, y] image points: top-left, top-right, bottom-right, bottom-left of "
            "the face under the camera"
        )
    return value


class VisionTable(Table):
    """The view config and colour calibration files; a one-camera (flip/spin) rig's face under its camera."""

    views: str | None = None
    calibration: str | None = None
    top_face: Annotated[list[list[float]], BeforeValidator(_four_points)] | None = None
    size: Puzzle = 3
