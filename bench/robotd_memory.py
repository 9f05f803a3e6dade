"""Peak memory of the ``robotd`` daemon as a user starts it, and of its two-phase worker, over consecutive
3x3x3 dry runs started through the dashboard's API (``bench/robotd.py --parts memory``).

The daemon is a ``robotd --sim`` process of its own, web server included, because what a process
holds depends on how it was started: the two-phase worker is spawned, and a spawned process imports
its parent's main module again (for the ``robotd`` command, the script behind it).
"""

from __future__ import annotations

import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.daemon_api import busy, free_port, http

RUN_TIMEOUT_S = 120.0


def memory(count: int, config: Path) -> dict:
    """``count`` consecutive 3x3x3 dry runs in one daemon started with ``config``: the peak resident memory
    of it and of its two-phase worker, the first solve's time against the later ones', and which solver
    found the moves executed."""
    port = free_port()
    robotd = str(Path(sys.executable).with_name("robotd"))
    command = [robotd, "--config", str(config), "--sim", "--port", str(port)]
    daemon = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_ready(base, daemon)
        at_start = _peak_rss_mb(daemon.pid)
        runs = [_run(base, {"puzzle": 3, "seed": 2000 + k}) for k in range(count)]
        peaks = [_peak_rss_mb(pid) for pid in _children(daemon.pid)]
        daemon_peak = _peak_rss_mb(daemon.pid)
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(30)
    worker_peak = max((mb for mb in peaks if mb is not None), default=None)  # the worker, not the tracker
    return _figures(runs, at_start, daemon_peak, worker_peak)


def _figures(runs: list[dict], at_start, daemon_peak, worker_peak) -> dict:
    solve = [r["step_durations"].get("solving") for r in runs]
    params = [r.get("solver_params") or {} for r in runs]
    splices = [s["solver"] for p in params for s in p.get("splices", [])]
    total = None if daemon_peak is None or worker_peak is None else round(daemon_peak + worker_peak, 1)
    return {
        "runs": len(runs),
        "solved": sum(r["outcome"] == "done" for r in runs),
        "peak_rss_mb_after_start": at_start,
        "peak_rss_mb": daemon_peak,
        "worker_peak_rss_mb": worker_peak,
        "daemon_and_worker_peak_rss_mb": total,
        "first_solve_s": solve[0],
        "later_solve_s_median": round(statistics.median(solve[1:]), 3) if len(solve) > 1 else None,
        "runs_with_neural_moves": sum(
            any(seg["solver"] == "neural-astar" for seg in p.get("segments", [])) for p in params
        ),
        "splices": {name: splices.count(name) for name in sorted(set(splices))},
    }


def _wait_ready(base: str, daemon: subprocess.Popen, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if daemon.poll() is not None:
            raise RuntimeError(f"robotd exited with {daemon.returncode}: {daemon.stderr.read().decode()[-2000:]}")
        try:
            http(base + "/api/health")
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"robotd did not answer on {base} within {timeout_s} s")


def _run(base: str, options: dict) -> dict:
    """Start a run once the last has ended, wait for it to end, return its record."""
    _wait_idle(base)
    run_id = http(base + "/api/runs", options)["run_id"]
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline:
        record = http(f"{base}/api/runs/{run_id}")
        if record.get("ended_at") is not None:
            return record
        time.sleep(0.2)
    raise RuntimeError(f"run {run_id} did not end within {RUN_TIMEOUT_S} s")


def _wait_idle(base: str) -> None:
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while busy(base):
        if time.monotonic() > deadline:
            raise RuntimeError(f"robotd not idle within {RUN_TIMEOUT_S} s")
        time.sleep(0.1)


def _children(pid: int) -> list[int]:
    """The processes ``pid`` started (the two-phase worker, multiprocessing's resource tracker), from /proc."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text()
        found += [int(child) for child in text.split()]
    return found


def _peak_rss_mb(pid: int | str = "self") -> float | None:
    """VmHWM (peak resident memory) of a process in MB, from /proc (Linux)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    kb = next(int(line.split()[1]) for line in text.splitlines() if line.startswith("VmHWM:"))
    return round(kb / 1024, 1)
