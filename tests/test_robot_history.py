"""Run history: rows and events survive, interrupted runs are marked at the next open."""

import os
import subprocess
import sys
import textwrap

from robot.history import History


def test_run_row_and_events(tmp_path):
    history = History(tmp_path / "history.sqlite")
    run_id = history.start_run(mode="sim")
    history.update_run(run_id, puzzle=2, scanned_state="U" * 24, step_durations={"scanning": 0.1})
    history.add_event(run_id, "phase", {"phase": "scanning"})
    history.finish_run(run_id, "done")
    run = history.get_run(run_id)
    assert run["outcome"] == "done" and run["step_durations"] == {"scanning": 0.1}
    assert run["events"][0]["kind"] == "phase" and run["events"][0]["data"] == {"phase": "scanning"}
    assert [r["id"] for r in history.list_runs(outcome="done")] == [run_id]
    assert history.list_runs(outcome="error") == []
    assert history.get_run(999) is None


def test_kill_9_during_a_run_marks_it_interrupted(tmp_path):
    path = tmp_path / "history.sqlite"
    script = textwrap.dedent(f"""
        import os, signal
        from robot.history import History
        h = History({str(path)!r}, recover=True)
        run = h.start_run(mode="sim")
        h.add_event(run, "phase", {{"phase": "executing"}})
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=os.getcwd())
    assert result.returncode == -9
    assert History(path).interrupted_at_open == 0  # a reader decides nothing
    history = History(path, recover=True)  # the owner of the data directory does
    assert history.interrupted_at_open == 1
    run = history.list_runs()[0]
    assert run["outcome"] == "interrupted" and "power loss" in run["error"]
    assert history.get_run(run["id"])["events"][0]["data"] == {"phase": "executing"}
