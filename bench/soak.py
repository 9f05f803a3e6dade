"""A 24-hour soak of robotd's data directory, simulated in minutes; prints one JSON object.

    python bench/soak.py [--quick] [--solves N] [--minutes M] [--pace-s S]

One simulated daemon (robotd's reference firmware on a pty, rendered
cameras) solves back to back at the fastest pace, 2x2x2 and 3x3x3 in turn,
with the serial trace on and frame faults on the wire; every
``--fault-every``-th run has its motors stalled (a fault dump) and every
``--refuse-every``-th run shows the vision a scan it refuses (a kept
refused scan). The limits are small, so every artefact reaches its ceiling
within minutes. The data directory is measured after every solve.

- ``samples``: bytes per artefact (history = the SQLite file, its WAL and
  shared memory), about 25 evenly spaced; ``final`` and ``max`` likewise.
- ``ceiling``: the sum of the artefacts' maxima under the bench's limits;
  ``last_below_ceiling``: every one of the last ``last_n`` samples stayed
  under it; ``growth_last_half``: per artefact, the most seen in the second
  half of the solves minus the most seen in the first (0 or less: it
  levelled off; the fault dumps still grow a little until the ring of the
  link's notes, which fills slowly, is full).
- ``solves_per_hour`` achieved, and ``equivalent_hours``: the solves at a
  real rig's pace of one every ``--pace-s`` seconds (default 180).
- ``measured``: history bytes per run (mean, and the largest run's
  estimate), fault dump, refused scan and overlay sizes, trace bytes per solve, and
  trace bytes per idle second with a real serial port's 0.2 s heartbeat.
- ``default_ceiling``: what robotd's default limits allow, per artefact,
  from those measurements and the bounds in the code.
"""

from __future__ import annotations

import argparse
import json
import logging
import sqlite3
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

# run as a script, this folder comes first on sys.path, and bench/serial.py would shadow pyserial
ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT)
sys.path.insert(1, str(ROOT / "tests"))  # doubtful_scans: the frames the vision refuses

from doubtful_scans import grey_edges  # noqa: E402
from firmware_interface import LogLimits  # noqa: E402
from firmware_interface.robotd.framelog import HEADER, MAX_ENTRY_CHARS  # noqa: E402
from robot import assemble  # noqa: E402
from robot.history import WAL_LIMIT_BYTES  # noqa: E402
from robot.history_limits import HistoryLimits  # noqa: E402
from robot.settings import DaemonSettings  # noqa: E402
from robot.sim import Simulation  # noqa: E402

TRACE = "serial-trace.log"
ARTEFACTS = ("history", "trace", "fault_logs", "refused_scans", "other")
PAGE = 4096
WAL_BOUND = WAL_LIMIT_BYTES + 64 * (PAGE + 24)  # 1000 pages between checkpoints, and the transaction under way
SHM = 32 * 1024
RING = 100  # RigLink's log_size: entries kept per direction for a fault dump
FAULT_LOG_BOUND = len(HEADER) + 100 + 3 * RING * (MAX_ENTRY_CHARS + 1)
CALIBRATION_BOUND = 2 * 65536  # views.json and calibration.json, each at most [web] max_body_bytes


@dataclass(frozen=True)
class Limits:
    """The bench's small limits (keys as in robotd.toml)."""

    history_keep_runs: int = 40
    keep_refused_scans: int = 3
    trace_max_mb: float = 0.02
    trace_backups: int = 2
    keep_fault_logs: int = 4


def write_config(directory: Path, limits: Limits, trace: bool = True, heartbeat: float | None = None) -> Path:
    data = directory / "data"
    text = (
        f'[robotd]\ndata_dir = "{data}"\nhistory_keep_runs = {limits.history_keep_runs}\n'
        f"keep_refused_scans = {limits.keep_refused_scans}\n"
        "[run]\nscan_retries = 0\n"
        "[rig]\nquarter_turn_s = 0.01\nhalf_turn_s = 0.015\nsettle_s = 0.0\n"
        f"[serial]\ntrace_max_mb = {limits.trace_max_mb}\ntrace_backups = {limits.trace_backups}\n"
        f"keep_fault_logs = {limits.keep_fault_logs}\n"
        + (f'trace = "{data / TRACE}"\n' if trace else "")
        + (f"[serial.timing]\nheartbeat = {heartbeat}\n" if heartbeat else "")
        + "[sim.faults]\ndrop = 0.01\ncorrupt = 0.005\nseed = 11\n"
    )
    path = directory / "robotd.toml"
    path.write_text(text)
    return path


# ------------------------------------------------------------------ refused scans on demand

REFUSE = threading.Event()
_rendered = Simulation.frames


def _frames(self: Simulation) -> dict:
    frames = _rendered(self)
    return grey_edges(frames, self.views()) if REFUSE.is_set() else frames


Simulation.frames = _frames  # before the build: the scanner keeps the bound method


# ------------------------------------------------------------------ measuring


def _kind(name: str) -> str:
    if name.startswith("history.sqlite"):
        return "history"
    if name.startswith(TRACE):
        return "trace"
    return {"faults": "fault_logs", "refused-scans": "refused_scans"}.get(name, "other")


def _bytes(path: Path) -> int:
    try:
        if not path.is_dir():
            return path.stat().st_size
        return sum(_bytes(child) for child in path.iterdir())
    except FileNotFoundError:
        return 0


def measure(data: Path) -> dict[str, int]:
    """Bytes per artefact in the data directory, and the total."""
    sizes = dict.fromkeys(ARTEFACTS, 0)
    for entry in data.iterdir():
        sizes[_kind(entry.name)] += _bytes(entry)
    sizes["total"] = sum(sizes.values())
    return sizes


def history_per_run(path: Path) -> dict:
    """Bytes of the SQLite file per run kept (pages in use), and an estimate for the largest run (by its events'
    JSON against the mean)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        pages = db.execute("PRAGMA page_count").fetchone()[0] - db.execute("PRAGMA freelist_count").fetchone()[0]
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        payload = [row[0] for row in db.execute("SELECT SUM(LENGTH(data) + LENGTH(kind)) FROM events GROUP BY run_id")]
        runs = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    finally:
        db.close()
    mean = pages * page_size / max(runs, 1)
    largest = mean * max(payload) / (sum(payload) / len(payload)) if payload else mean
    return {"runs_kept": runs, "bytes_per_run": round(mean), "largest_run_bytes": round(largest)}


def largest_file(folder: Path) -> int:
    return max((_bytes(p) for p in folder.iterdir()), default=0) if folder.is_dir() else 0


# ------------------------------------------------------------------ the soak


def soak(solves: int, minutes: float | None, limits: Limits, fault_every: int, refuse_every: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        built = assemble.build(write_config(Path(tmp), limits), sim=True, web=False)
        try:
            return _solve_back_to_back(built, data, solves, minutes, fault_every, refuse_every)
        finally:
            built.close()


def _solve_back_to_back(
    built, data: Path, solves: int, minutes: float | None, fault_every: int, refuse_every: int
) -> dict:
    firmware = built.simulation.firmware
    samples, outcomes, largest = [], {}, {"fault_log": 0, "refused_scan": 0, "overlay": 0}
    injected = {"faults": 0, "refused_scans": 0}
    started = time.perf_counter()
    for k in range(solves):
        if minutes is not None and time.perf_counter() - started > minutes * 60:
            break
        fault, refuse = (k + 1) % fault_every == 0, (k + 1) % refuse_every == 0 and (k + 1) % fault_every != 0
        _inject(firmware, fault, refuse, injected)
        try:
            summary = built.once(puzzle=3 if refuse or k % 2 else 2, seed=5000 + k)
        finally:
            _inject(firmware, False, False, {})
        outcomes[summary["outcome"]] = outcomes.get(summary["outcome"], 0) + 1
        samples.append({"solve": k + 1, **measure(data)})
        largest["fault_log"] = max(largest["fault_log"], largest_file(data / "faults"))
        largest["refused_scan"] = max(largest["refused_scan"], largest_file(data / "refused-scans"))
        largest["overlay"] = max([largest["overlay"], *(_bytes(p) for p in data.glob("refused-scans/*/overlay.png"))])
    wall = time.perf_counter() - started
    return {
        "samples": samples,
        "outcomes": outcomes,
        "injected": injected,
        "wall_s": wall,
        "largest": largest,
        "history": history_per_run(data / "history.sqlite"),
        "trace_bytes_per_solve": _trace_per_solve(samples),
    }


def _inject(firmware, fault: bool, refuse: bool, counts: dict) -> None:
    for motor in "URFDLB":
        firmware.stall(motor, fault)
    if refuse:
        REFUSE.set()
    else:
        REFUSE.clear()
    for name, on in (("faults", fault), ("refused_scans", refuse)):
        if on:
            counts[name] = counts.get(name, 0) + 1


def _trace_per_solve(samples: list[dict]) -> float | None:
    """Trace bytes per solve until the trace first shrank (its oldest file deleted)."""
    first = next((k for k in range(1, len(samples)) if samples[k]["trace"] < samples[k - 1]["trace"]), len(samples))
    if first < 2:
        return None
    return round((samples[first - 1]["trace"] - samples[0]["trace"]) / (first - 1), 1)


def idle_trace_rate(seconds: float) -> float:
    """Trace bytes per second of an idle, connected link with a real serial port's heartbeat (0.2 s)."""
    with tempfile.TemporaryDirectory() as tmp:
        built = assemble.build(write_config(Path(tmp), Limits(trace_max_mb=100), heartbeat=0.2), sim=True, web=False)
        try:
            trace = Path(tmp) / "data" / TRACE
            before = trace.stat().st_size
            time.sleep(seconds)
            return round((trace.stat().st_size - before) / seconds, 1)
        finally:
            built.close()


# ------------------------------------------------------------------ ceilings


def ceiling(limits: Limits, history_run_bytes: float, refused_scan: int, other: int) -> dict[str, int]:
    """The most each artefact may take under ``limits``, from the bounds in the code and measured sizes."""
    trace = LogLimits(trace_max_bytes=round(limits.trace_max_mb * 1024 * 1024), trace_backups=limits.trace_backups)
    live = limits.history_keep_runs * history_run_bytes
    database = max(live * 8 / 7, live + 64 * PAGE)  # compaction leaves at most an eighth (or 64 pages) free
    sizes = {
        "history": round(database + WAL_BOUND + SHM),
        "trace": trace.trace_ceiling_bytes,
        "fault_logs": limits.keep_fault_logs * FAULT_LOG_BOUND,
        "refused_scans": limits.keep_refused_scans * refused_scan,
        "other": other,
    }
    sizes["total"] = sum(sizes.values())
    return sizes


def default_limits() -> Limits:
    logs, history = LogLimits(), HistoryLimits()
    return Limits(
        history_keep_runs=history.keep_runs,
        keep_refused_scans=DaemonSettings.keep_refused_scans,
        trace_max_mb=logs.trace_max_bytes / (1024 * 1024),
        trace_backups=logs.trace_backups,
        keep_fault_logs=logs.fault_logs,
    )


def _every(samples: list[dict], count: int = 25) -> list[dict]:
    step = max(1, len(samples) // count)
    picked = samples[step - 1 :: step]
    return picked if picked and picked[-1] is samples[-1] else picked + samples[-1:]


def report(run: dict, limits: Limits, pace_s: float, idle_rate: float) -> dict:
    samples = run["samples"]
    maxima = {key: max(s[key] for s in samples) for key in (*ARTEFACTS, "total")}
    bound = ceiling(limits, run["history"]["bytes_per_run"], run["largest"]["refused_scan"], maxima["other"])
    defaults = default_limits()
    other = maxima["other"] + CALIBRATION_BOUND + run["largest"]["overlay"]  # + last-doubtful-scan.png
    default_bound = ceiling(defaults, run["history"]["largest_run_bytes"], run["largest"]["refused_scan"], other)
    return {
        "solves": len(samples),
        "outcomes": run["outcomes"],
        "injected": run["injected"],
        "wall_s": round(run["wall_s"], 1),
        "solves_per_hour": round(len(samples) / run["wall_s"] * 3600),
        "equivalent_hours": round(len(samples) * pace_s / 3600, 1),
        "samples": _every(samples),
        "final": samples[-1],
        "max": maxima,
        "ceiling": bound,
        **_levels(samples, maxima, bound),
        "measured": _measured(run, idle_rate),
        "limits": asdict(limits),
        "default_limits": asdict(defaults),
        "default_ceiling": default_bound,
        "default_ceiling_mb": round(default_bound["total"] / 1e6, 1),
    }


def _levels(samples: list[dict], maxima: dict, bound: dict) -> dict:
    """Whether the last fifth of the solves stayed under the ceiling, and the growth from the first half to
    the second, per artefact."""
    last_n = max(1, len(samples) // 5)
    half = len(samples) // 2
    growth = (
        {
            key: max(s[key] for s in samples[half:]) - max(s[key] for s in samples[:half])
            for key in (*ARTEFACTS, "total")
        }
        if half
        else None
    )
    return {
        "last_n": last_n,
        "last_below_ceiling": all(s["total"] <= bound["total"] for s in samples[-last_n:]),
        "per_artefact_below_ceiling": {key: maxima[key] <= bound[key] for key in ARTEFACTS},
        "growth_last_half": growth,
    }


def _measured(run: dict, idle_rate: float) -> dict:
    largest = run["largest"]
    return {
        **run["history"],
        "fault_log_bytes_max": largest["fault_log"],
        "fault_log_bytes_bound": FAULT_LOG_BOUND,
        "refused_scan_bytes_max": largest["refused_scan"],
        "overlay_bytes_max": largest["overlay"],
        "trace_bytes_per_solve": run["trace_bytes_per_solve"],
        "trace_idle_bytes_per_s": idle_rate,
        "trace_idle_mb_per_day": round(idle_rate * 86400 / 1e6, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="90 solves (about a minute)")
    parser.add_argument("--solves", type=int, default=480, help="solves (default 480: a day at --pace-s 180)")
    parser.add_argument("--minutes", type=float, default=None, help="stop after this many minutes of solving")
    parser.add_argument("--pace-s", type=float, default=180.0, help="a real rig's seconds per solve")
    parser.add_argument("--fault-every", type=int, default=7, help="every Nth run has its motors stalled")
    parser.add_argument("--refuse-every", type=int, default=10, help="every Nth run's scan is refused")
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)  # faults are provoked on purpose: no dumps on stderr
    solves = 90 if args.quick else args.solves
    limits = Limits()
    run = soak(solves, args.minutes, limits, args.fault_every, args.refuse_every)
    result = report(run, limits, args.pace_s, idle_trace_rate(2.0 if args.quick else 5.0))
    result["settings"] = {
        "solves": solves,
        "minutes": args.minutes,
        "pace_s": args.pace_s,
        "fault_every": args.fault_every,
        "refuse_every": args.refuse_every,
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
