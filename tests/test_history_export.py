"""The history's moves done of total, its filters, and the export as CSV and JSON (``/api/runs/export``)."""

import csv
import io
import json

import pytest
from fastapi.testclient import TestClient

from robot.history import History
from robot.web import WebSettings, create_app
from robot_doubles import make_daemon


def record(history: History, outcome: str, puzzle: int, moves: int | None, total: int = 20, **fields) -> int:
    """A finished run whose last ``move`` event says ``moves`` of ``total`` were turned (none: no move event)."""
    run_id = history.start_run(started_at=1_700_000_000.0, mode="sim", puzzle=puzzle)
    history.update_run(run_id, length_htm=total, length_qtm=total + 3, solution="R U " * (total // 2))
    for done in range(1, (moves or 0) + 1):
        history.add_event(run_id, "move", {"index": done - 1, "done_moves": done, "total_moves": total})
    history.add_event(run_id, "phase", {"phase": outcome})
    history.finish_run(run_id, outcome, fields.pop("error", None), **fields)
    history.update_run(run_id, ended_at=1_700_000_012.5)
    return run_id


@pytest.fixture
def history(tmp_path):
    history = History(tmp_path / "history.sqlite")
    yield history
    history.close()


def test_a_stopped_or_failed_run_counts_the_moves_it_turned_not_its_solution(history):
    done = record(history, "done", 3, 20)
    stopped = record(history, "stopped", 3, 7)
    failed = record(history, "error", 2, 3, total=9, error="motion 4 failed: board halted")
    before_moving = record(history, "error", 3, None, error="scan failed after 3 attempts")
    runs = {run["id"]: run for run in history.list_runs()}
    assert (runs[done]["moves_done"], runs[done]["moves_total"]) == (20, 20)
    assert (runs[stopped]["moves_done"], runs[stopped]["moves_total"]) == (7, 20)
    assert (runs[failed]["moves_done"], runs[failed]["moves_total"]) == (3, 9)
    assert (runs[before_moving]["moves_done"], runs[before_moving]["moves_total"]) == (0, 20)
    assert runs[stopped]["duration_s"] == 12.5
    assert history.get_run(stopped)["moves_done"] == 7


def test_a_done_run_without_move_events_turned_its_whole_solution_and_a_run_without_one_has_none(history):
    already = record(history, "done", 2, None, total=0)
    whole = record(history, "done", 3, None, total=18)
    unsolved = history.start_run(mode="sim")
    history.finish_run(unsolved, "error", "no solution found")
    runs = {run["id"]: run for run in history.list_runs()}
    assert (runs[already]["moves_done"], runs[already]["moves_total"]) == (0, 0)
    assert (runs[whole]["moves_done"], runs[whole]["moves_total"]) == (18, 18)
    assert (runs[unsolved]["moves_done"], runs[unsolved]["moves_total"]) == (None, None)


def test_the_outcome_and_puzzle_filters_combine(history):
    ids = {(outcome, puzzle): record(history, outcome, puzzle, 2) for outcome in ("done", "error") for puzzle in (2, 3)}
    assert [r["id"] for r in history.list_runs(puzzle=2)] == [ids[("error", 2)], ids[("done", 2)]]
    assert [r["id"] for r in history.list_runs(outcome="done", puzzle=3)] == [ids[("done", 3)]]
    assert [r["id"] for r in history.export_runs(outcome="error", batch=1)] == [ids[("error", 3)], ids[("error", 2)]]


@pytest.fixture
def client(tmp_path):
    daemon = make_daemon(tmp_path)
    with TestClient(create_app(daemon, WebSettings(allowed_hosts=("testserver",)))) as client:
        client.daemon = daemon
        yield client
    daemon.close()


def test_the_csv_export_is_an_attachment_with_one_row_per_filtered_run(client):
    history = client.daemon.history
    record(history, "done", 3, 20)
    stopped = record(history, "stopped", 3, 7, error='=HYPERLINK("x") stop from the dashboard')
    record(history, "stopped", 2, 1)
    reply = client.get("/api/runs/export", params={"format": "csv", "outcome": "stopped", "puzzle": "3"})
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/csv")
    disposition = reply.headers["content-disposition"]
    assert disposition.startswith('attachment; filename="robotd-runs-') and disposition.endswith('-stopped-3x3.csv"')
    rows = list(csv.DictReader(io.StringIO(reply.text)))
    assert [int(row["id"]) for row in rows] == [stopped]
    row = rows[0]
    assert (row["moves_done"], row["moves_total"], row["duration_s"]) == ("7", "20", "12.5")
    assert row["started_at"] == "2023-11-14T22:13:20.000+00:00"
    assert row["error"] == '\'=HYPERLINK("x") stop from the dashboard'  # no formula in a spreadsheet


def test_the_json_export_has_the_runs_as_the_list_gives_them(client):
    history = client.daemon.history
    for outcome in ("done", "error", "done"):
        record(history, outcome, 2, 9 if outcome == "done" else 4, total=9)
    reply = client.get("/api/runs/export?format=json&outcome=done")
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/json"
    assert reply.headers["content-disposition"].endswith('-done.json"')
    body = json.loads(reply.text)
    assert body["filters"] == {"outcome": "done", "puzzle": None}
    assert body["runs"] == client.get("/api/runs?outcome=done").json()["runs"]
    assert [run["moves_done"] for run in body["runs"]] == [9, 9]


def test_an_empty_history_exports_a_header_only(client):
    assert client.get("/api/runs/export?format=csv").text.splitlines()[0].startswith("id,started_at,ended_at")
    assert json.loads(client.get("/api/runs/export?format=json").text)["runs"] == []


@pytest.mark.parametrize(
    ("query", "detail"),
    [
        ("", "format: Field required"),
        ("format=xml", "format: Input should be 'csv' or 'json'"),
        ("format=csv&puzzle=4", "puzzle: Input should be 2 or 3"),
        ("format=csv&puzzle=three", "puzzle: Input should be 2 or 3"),
        ("format=json&outcome=lost", "outcome: Input should be 'running', 'done', 'error', 'stopped' or 'interrupted'"),
    ],
)
def test_a_bad_export_query_is_a_422_naming_the_parameter(client, query, detail):
    reply = client.get(f"/api/runs/export?{query}")
    assert reply.status_code == 422 and reply.json() == {"detail": detail}


def test_the_run_list_takes_the_puzzle_filter_and_refuses_a_bad_one(client):
    record(client.daemon.history, "done", 2, 9, total=9)
    three = record(client.daemon.history, "done", 3, 20)
    assert [run["id"] for run in client.get("/api/runs?puzzle=3").json()["runs"]] == [three]
    assert client.get("/api/runs?puzzle=5").json() == {"detail": "puzzle: Input should be 2 or 3"}
    assert client.get("/api/runs/export/1").status_code == 404  # no such path; "export" is no run id either
    assert client.post("/api/runs/export", headers={"X-Robotd": "1"}).status_code == 405
