"""The daemon's log for the dashboard: the newest records in a bounded ring, read with ``GET /api/logs?after=SEQ``.

``LogRing`` is a logging handler on the root logger while the dashboard is
served: it keeps the last ``capacity`` records (at the root logger's level,
``[robotd] log_level``), each with a sequence number, so that a page asks
only for what it has not seen and learns how many lines it missed when it was
away. The web server's own access lines are left out (a page reading the log
would otherwise fill it with its own requests).
"""

from __future__ import annotations

import logging
import threading
from collections import deque

from fastapi import APIRouter, Query

from .web_models import INVALID, LogPage, refusals

CAPACITY = 500
MESSAGE_CHARS = 2000  # a record's text beyond this is cut: the panel is for reading, the file keeps it all
_QUIET_LOGGERS = ("uvicorn.access",)


class LogRing(logging.Handler):
    """The newest ``capacity`` log records as plain dicts: ``seq``, ``t``, ``level``, ``logger``, ``message``."""

    def __init__(self, capacity: int = CAPACITY, level: int = logging.NOTSET):
        super().__init__(level)
        self.lines: deque[dict] = deque(maxlen=capacity)
        self.seq = 0
        self._guard = threading.Lock()  # not Handler.lock: emit is called under it already

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith(_QUIET_LOGGERS):
            return
        try:
            message = record.getMessage()
        except (TypeError, ValueError) as error:  # a bad format string in someone's log call
            message = f"{record.msg!r} (could not be formatted: {error})"
        if record.exc_info and record.exc_info[1] is not None:
            raised = record.exc_info[1]
            message += f" — {type(raised).__name__}: {raised}"
        with self._guard:
            self.seq += 1
            self.lines.append(
                {
                    "seq": self.seq,
                    "t": record.created,
                    "level": record.levelname,
                    "logger": record.name,
                    "message": message[:MESSAGE_CHARS],
                }
            )

    def since(self, after: int, limit: int) -> dict:
        """The lines after sequence number ``after`` (the newest ``limit`` of them) and how many were missed:
        gone from the ring before they were asked for, or beyond ``limit``."""
        with self._guard:
            newer = [line for line in self.lines if line["seq"] > after]
            last = self.seq
        kept = newer[-limit:]
        first = kept[0]["seq"] if kept else last + 1
        return {"lines": kept, "last_seq": last, "missed": max(0, first - after - 1)}


def attach(ring: LogRing) -> None:
    logging.getLogger().addHandler(ring)


def detach(ring: LogRing) -> None:
    logging.getLogger().removeHandler(ring)


def log_routes(ring: LogRing) -> APIRouter:
    router = APIRouter()

    @router.get("/api/logs", responses=refusals({422: INVALID}))
    def logs(
        after: int = Query(0, ge=0, description="the last sequence number the page has; 0 for the newest lines"),
        limit: int = Query(200, ge=1, le=CAPACITY),
    ) -> LogPage:
        """robotd's newest log lines (at its log level), oldest first."""
        return LogPage(**ring.since(after, limit))

    return router
