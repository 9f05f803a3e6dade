"""Run history in SQLite: one row per run and every event of it.

The database lives in the data directory, in WAL mode. Every write is its
own committed transaction, so a ``kill -9`` loses nothing already recorded;
a run still marked ``running`` when the next daemon opens the file was cut
short by a crash or power loss and becomes ``interrupted``. Only the owner
of the data directory (``robot.instance_lock``) may decide that: reading
the history while a daemon runs never changes it.

The owner also passes ``limits`` (``robot.history_limits``): the oldest
finished runs beyond them are deleted when the file is opened and after
every run, so the file stops growing. The write-ahead log is checkpointed
every 1000 pages (SQLite's default) and cut back to ``WAL_LIMIT_BYTES``
after a checkpoint.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from .errors import RobotError
from .history_limits import HistoryLimits, compact, make_compactable, prune

OUTCOMES = ("running", "done", "error", "stopped", "interrupted")
RUN_FIELDS = (
    "puzzle",
    "scanned_state",
    "solver",
    "solver_params",
    "solution",
    "length_htm",
    "length_qtm",
    "estimated_s",
    "actual_s",
    "step_durations",
    "outcome",
    "error",
    "ended_at",
    "seed",
    "mode",
)
_JSON_FIELDS = ("solver_params", "step_durations")
# the data of a run's last move event (a subquery: the run's events by the events_by_run index, newest first)
_LAST_MOVE = (
    "(SELECT data FROM events WHERE events.run_id = runs.id AND kind = 'move' ORDER BY id DESC LIMIT 1) AS last_move"
)
log = logging.getLogger("robotd.history")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at REAL NOT NULL,
    ended_at REAL,
    mode TEXT,
    seed INTEGER,
    puzzle INTEGER,
    scanned_state TEXT,
    solver TEXT,
    solver_params TEXT,
    solution TEXT,
    length_htm INTEGER,
    length_qtm INTEGER,
    estimated_s REAL,
    actual_s REAL,
    step_durations TEXT,
    outcome TEXT NOT NULL DEFAULT 'running',
    error TEXT
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    t REAL NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_run ON events(run_id, id);
CREATE INDEX IF NOT EXISTS runs_by_outcome ON runs(outcome, id);
"""
WAL_LIMIT_BYTES = 4 * 1024 * 1024


class History:
    """The run history of one data directory; safe to use from several threads."""

    def __init__(self, path: str | Path, recover: bool = False, limits: HistoryLimits | None = None):
        self.path = Path(path)
        self.limits = limits
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA auto_vacuum=INCREMENTAL")  # takes effect only in a new file
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(f"PRAGMA journal_size_limit={WAL_LIMIT_BYTES}")
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as error:
            raise RobotError(f"cannot open the run history {self.path}: {error}") from None
        self._db.row_factory = sqlite3.Row
        self._lock = threading.Lock()
        # recover: this process owns the data directory, so a run left ``running`` has no live owner
        self.interrupted_at_open = self._mark_interrupted() if recover else 0
        if limits is not None:
            self._open_limited()

    def _open_limited(self) -> None:
        """Prune to the limits, then make the file able to shrink (once, for a file made before limits)."""
        try:
            self.prune()
            with self._lock:
                make_compactable(self._db)
        except sqlite3.Error as error:  # e.g. a reader holds the file: tried again at the next start
            log.warning("could not prune or compact the run history %s: %s", self.path, error)

    def prune(self, now: float | None = None) -> int:
        """Delete the finished runs beyond ``limits`` with their events and give back the space; how many
        runs were deleted (none without limits)."""
        if self.limits is None:
            return 0
        with self._lock:
            deleted = prune(self._db, self.limits, time.time() if now is None else now)
            compact(self._db)
        return deleted

    def _write(self, sql: str, params: tuple) -> int:
        with self._lock:
            cursor = self._db.execute(sql, params)
            return cursor.lastrowid or 0  # an INSERT always sets it; other statements are not counted

    def _mark_interrupted(self) -> int:
        with self._lock:
            cursor = self._db.execute(
                "UPDATE runs SET outcome='interrupted', error=COALESCE(error, ?) WHERE outcome='running'",
                ("robotd stopped during this run (crash, kill or power loss)",),
            )
            return cursor.rowcount

    def start_run(self, started_at: float | None = None, **fields) -> int:
        """A new run row, outcome ``running``; returns its id."""
        run_id = self._write("INSERT INTO runs (started_at) VALUES (?)", (started_at or time.time(),))
        if fields:
            self.update_run(run_id, **fields)
        return run_id

    def update_run(self, run_id: int, **fields) -> None:
        unknown = set(fields) - set(RUN_FIELDS)
        if unknown:
            raise ValueError(f"unknown run fields: {', '.join(sorted(unknown))}")
        if "outcome" in fields and fields["outcome"] not in OUTCOMES:
            raise ValueError(f"unknown outcome {fields['outcome']!r}")
        values = [json.dumps(v) if k in _JSON_FIELDS else v for k, v in fields.items()]
        assignments = ", ".join(f"{k}=?" for k in fields)
        self._write(f"UPDATE runs SET {assignments} WHERE id=?", (*values, run_id))

    def finish_run(self, run_id: int, outcome: str, error: str | None = None, **fields) -> None:
        self.update_run(run_id, outcome=outcome, error=error, ended_at=time.time(), **fields)
        try:
            self.prune()
        except sqlite3.Error as error:  # the run is recorded; pruning is tried again after the next one
            log.warning("could not prune the run history %s: %s", self.path, error)

    def add_event(self, run_id: int, kind: str, data: dict, t: float | None = None) -> None:
        self._write(
            "INSERT INTO events (run_id, t, kind, data) VALUES (?, ?, ?, ?)",
            (run_id, t or time.time(), kind, json.dumps(data)),
        )

    def list_runs(
        self, limit: int = 20, offset: int = 0, outcome: str | None = None, puzzle: int | None = None
    ) -> list[dict]:
        """Newest first, each with ``moves_done``, ``moves_total`` and ``duration_s`` (see ``_run_dict``)."""
        where, params = _filters(outcome, puzzle)
        with self._lock:
            rows = self._db.execute(
                f"SELECT *, {_LAST_MOVE} FROM runs {where} ORDER BY id DESC LIMIT ? OFFSET ?", (*params, limit, offset)
            ).fetchall()
        return [_run_dict(row) for row in rows]

    def export_runs(self, outcome: str | None = None, puzzle: int | None = None, batch: int = 500) -> Iterator[dict]:
        """Every run the filters pass, newest first, as ``list_runs`` gives them; read in batches, so that a
        long export never holds the lock for long."""
        offset = 0
        while True:
            runs = self.list_runs(batch, offset, outcome, puzzle)
            yield from runs
            if len(runs) < batch:
                return
            offset += batch

    def get_run(self, run_id: int) -> dict | None:
        """The run with its events, or ``None``."""
        with self._lock:
            row = self._db.execute(f"SELECT *, {_LAST_MOVE} FROM runs WHERE id=?", (run_id,)).fetchone()
            if row is None:
                return None
            events = self._db.execute(
                "SELECT t, kind, data FROM events WHERE run_id=? ORDER BY id", (run_id,)
            ).fetchall()
        run = _run_dict(row)
        run["events"] = [{"t": e["t"], "kind": e["kind"], "data": json.loads(e["data"])} for e in events]
        return run

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _filters(outcome: str | None, puzzle: int | None) -> tuple[str, tuple]:
    conditions = [(column, value) for column, value in (("outcome", outcome), ("puzzle", puzzle)) if value is not None]
    if not conditions:
        return "", ()
    return "WHERE " + " AND ".join(f"{column}=?" for column, _ in conditions), tuple(v for _, v in conditions)


def _run_dict(row: sqlite3.Row) -> dict:
    run = dict(row)
    for key in _JSON_FIELDS:
        if run.get(key) is not None:
            run[key] = json.loads(run[key])
    last_move = json.loads(run.pop("last_move") or "{}")
    run["moves_done"], run["moves_total"] = moves_done(run, last_move)
    ended, started = run.get("ended_at"), run.get("started_at")
    run["duration_s"] = round(ended - started, 3) if ended is not None and started is not None else None
    return run


def moves_done(run: dict, last_move: dict) -> tuple[int | None, int | None]:
    """The moves turned of the moves planned: from the run's last ``move`` event, so that a stopped or failed
    run shows what it did, not its solution's length. A run that never got a solution has neither."""
    total = last_move.get("total_moves", run.get("length_htm"))
    if "done_moves" in last_move:
        return last_move["done_moves"], total
    if total is None:
        return None, None
    return (total if run.get("outcome") == "done" else 0), total
