"""How much run history stays: the newest ``keep_runs`` runs, none older than ``keep_days`` (0: no age limit).

``prune`` deletes the finished runs beyond either limit with their events;
a run still ``running`` is never deleted. The database uses incremental
auto-vacuum, so ``compact`` gives the freed pages back to the file system
once they make up a good part of the file; a database made before that
(auto-vacuum off) is rewritten once by ``make_compactable`` (a VACUUM).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

DAY_S = 86400.0
INCREMENTAL = 2  # PRAGMA auto_vacuum value
_SPARE_PAGES = 64  # free pages (256 KiB at 4 KiB a page) left in the file for the next runs


@dataclass(frozen=True)
class HistoryLimits:
    keep_runs: int = 10_000
    keep_days: int = 365


def prune(db: sqlite3.Connection, limits: HistoryLimits, now: float) -> int:
    """Delete the finished runs beyond the limits, and their events, in one transaction; how many runs."""
    where, params = _beyond(limits, now)
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(f"DELETE FROM events WHERE run_id IN (SELECT id FROM runs WHERE {where})", params)
        deleted = db.execute(f"DELETE FROM runs WHERE {where}", params).rowcount
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return deleted


def _beyond(limits: HistoryLimits, now: float) -> tuple[str, tuple]:
    """The SQL condition for a run to delete: finished, and not among the newest ``keep_runs`` or too old."""
    older = "id <= (SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?)"
    params: tuple = (limits.keep_runs,)
    if limits.keep_days:
        older += " OR COALESCE(ended_at, started_at) < ?"
        params += (now - limits.keep_days * DAY_S,)
    return f"outcome != 'running' AND ({older})", params


def compact(db: sqlite3.Connection) -> int:
    """Give free pages back to the file system when more than an eighth of the file (and a few) are free;
    how many pages were free."""
    free = db.execute("PRAGMA freelist_count").fetchone()[0]
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    if free > max(_SPARE_PAGES, pages // 8):
        db.execute(f"PRAGMA incremental_vacuum({free - _SPARE_PAGES})").fetchall()
    return free


def make_compactable(db: sqlite3.Connection) -> bool:
    """Turn incremental auto-vacuum on for a database made without it (one VACUUM); True when it did."""
    if db.execute("PRAGMA auto_vacuum").fetchone()[0] == INCREMENTAL:
        return False
    db.execute("PRAGMA auto_vacuum=INCREMENTAL")
    db.execute("VACUUM")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    return True
