"""``[serial]``: the rig's port, and for robotd's own firmware also the link's timing, its trace and fault dumps."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from firmware_interface import ConfigError as LinkConfigError
from firmware_interface import LinkTiming, LogLimits

from ..base import Table
from ..timing import timing_table

MIB = 1024 * 1024


class _LinkTimingBase(Table):
    @model_validator(mode="after")
    def _detects_silence(self) -> Any:
        try:
            LinkTiming.from_config(self.given())
        except LinkConfigError as error:
            raise ValueError(str(error).removeprefix("link timing: ")) from None
        return self


SerialTiming = timing_table("SerialTiming", LinkTiming, skip=(), base=_LinkTimingBase)


class SerialTable(Table):
    """The rig's serial port; for robotd's own firmware also the link's timing, its trace and fault dumps."""

    port: str | None = Field(default=None, description="a device path (/dev/serial/by-id/...) or a pyserial URL")
    trace: str | None = None
    trace_max_mb: float = Field(default=LogLimits.trace_max_bytes / MIB, ge=0.01, le=1024)
    trace_backups: int = Field(default=LogLimits.trace_backups, ge=1, le=100)
    keep_fault_logs: int = Field(default=LogLimits.fault_logs, ge=0, le=10_000)
    timing: SerialTiming = Field(default_factory=SerialTiming)  # type: ignore[valid-type]
