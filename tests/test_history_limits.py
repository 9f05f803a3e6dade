"""Run history limits: the oldest finished runs go with their events, the running one never, and the file
stops growing."""

import sqlite3
import time

from robot.history import History
from robot.history_limits import DAY_S, INCREMENTAL, HistoryLimits

STATE = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"


def add_runs(history: History, count: int, events: int = 5, started_at: float | None = None) -> list[int]:
    ids = []
    for _ in range(count):
        run_id = history.start_run(started_at=started_at, mode="sim")
        for index in range(events):
            history.add_event(run_id, "move", {"index": index, "command": "TURN U 1", "state": STATE})
        history.finish_run(run_id, "done")
        ids.append(run_id)
    return ids


def run_ids(history: History) -> list[int]:
    return sorted(run["id"] for run in history.list_runs(limit=10_000))


def event_run_ids(path) -> set[int]:
    db = sqlite3.connect(path)
    try:
        return {row[0] for row in db.execute("SELECT DISTINCT run_id FROM events")}
    finally:
        db.close()


def test_the_newest_runs_are_kept_with_their_events(tmp_path):
    history = History(tmp_path / "h.sqlite", limits=HistoryLimits(keep_runs=3, keep_days=0))
    ids = add_runs(history, 8)
    assert run_ids(history) == ids[-3:]  # pruned after each run
    assert event_run_ids(tmp_path / "h.sqlite") == set(ids[-3:])
    assert len(history.get_run(ids[-1])["events"]) == 5


def test_runs_older_than_keep_days_go(tmp_path):
    history = History(tmp_path / "h.sqlite")
    now = time.time()
    old = add_runs(history, 2, started_at=now - 10 * DAY_S)
    for run_id in old:
        history.update_run(run_id, ended_at=now - 10 * DAY_S)
    recent = add_runs(history, 2)
    history.limits = HistoryLimits(keep_runs=100, keep_days=7)
    assert history.prune(now) == 2
    assert run_ids(history) == recent
    assert event_run_ids(tmp_path / "h.sqlite") == set(recent)


def test_the_running_run_is_never_pruned(tmp_path):
    history = History(tmp_path / "h.sqlite", limits=HistoryLimits(keep_runs=1, keep_days=1))
    running = history.start_run(started_at=time.time() - 5 * DAY_S, mode="rig")  # a long run, still going
    history.add_event(running, "phase", {"phase": "executing"})
    done = add_runs(history, 3)
    assert run_ids(history) == [running, done[-1]]
    assert history.prune(time.time() + 30 * DAY_S) == 1  # even when every run is too old
    assert run_ids(history) == [running]
    assert history.get_run(running)["events"][0]["data"] == {"phase": "executing"}


def test_the_owner_prunes_when_it_opens_the_history(tmp_path):
    path = tmp_path / "h.sqlite"
    ids = add_runs(History(path), 6)
    assert run_ids(History(path)) == ids  # a reader (no limits) deletes nothing
    assert run_ids(History(path, recover=True, limits=HistoryLimits(keep_runs=2))) == ids[-2:]


def test_a_history_made_without_auto_vacuum_is_converted_and_shrinks(tmp_path):
    path = tmp_path / "h.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE note (text TEXT)")  # as a release before the limits made it
    db.close()
    history = History(path)
    add_runs(history, 300)
    history.close()
    before = path.stat().st_size
    history = History(path, recover=True, limits=HistoryLimits(keep_runs=10))
    assert history._db.execute("PRAGMA auto_vacuum").fetchone()[0] == INCREMENTAL
    assert path.stat().st_size < before / 5 and len(run_ids(history)) == 10


def test_the_file_stops_growing(tmp_path):
    path = tmp_path / "h.sqlite"
    history = History(path, limits=HistoryLimits(keep_runs=20, keep_days=0))
    sizes = []
    for _ in range(400):
        add_runs(history, 1, events=30)
        sizes.append(path.stat().st_size)  # the main file changes at each checkpoint of the WAL
    assert max(sizes[200:]) <= max(sizes[100:200])
    wal = path.with_name("h.sqlite-wal").stat().st_size
    assert wal <= 5 * 1024 * 1024
