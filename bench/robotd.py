"""Benchmark of complete robotd dry runs in simulation; prints one JSON object.

    python bench/robotd.py [--quick] [--runs N] [--moves3 K] [--budget-s S] [--parts memory,dry_runs,...]

- ``dry_runs``: N consecutive ``--once`` runs, alternating 2x2x2 and 3x3x3,
  seeded, cycling through the lighting presets, through the real pyserial
  path to the simulated firmware; solved count and host overhead (wall time
  of the run minus the simulated motor time), median per puzzle.
- ``faults``: frame loss/corruption/duplication (the run must still end
  solved) and a stalled motor, a board reset and an unplugged cable (the run
  must end ``error`` with a message saying which, recorded in the history).
- ``memory``: 20 consecutive 3x3x3 dry runs (5 with ``--quick``) in one
  ``robotd --sim`` process, started through its API: peak resident memory
  (VmHWM) of the daemon and of its two-phase worker process
  (bench/robotd_memory.py), and the first solve's time against the later;
  the share of runs that executed moves found by the neural search and the
  splices by solver (docs/solver.md).
- ``stop``: time from ``stop()`` to the simulated firmware handling the
  emergency stop, mid-execution, median and max (bench/estop.py);
  ``signal_stop`` the same from a SIGTERM (robotd's handler, as
  ``systemctl stop`` sends it).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

# run as a script, this folder comes first on sys.path, and bench/serial.py would shadow pyserial
sys.path[0] = str(Path(__file__).resolve().parent.parent)

from bench.estop import stop_latency  # noqa: E402
from bench.robotd_memory import memory  # noqa: E402
from robot import assemble  # noqa: E402
from robot.cli import signals_stop_the_run  # noqa: E402
from robot.history import History  # noqa: E402
from vision import PRESETS  # noqa: E402

RIG = "[rig]\nquarter_turn_s = {q}\nhalf_turn_s = {h}\nsettle_s = 0.0\n"
FAULT_CASES = {
    "frames": ("drop = 0.1\ncorrupt = 0.01\nduplicate = 0.01\nseed = 7", None),
    "stall": ('stall = ["R"]', "a motor stalled"),
    "reset": ("reset_after = 6", "the motor board reset during the run"),
    "unplug": ("close_after = 6", "serial port was lost"),
}


def write_config(
    directory: Path, budget_s: float | None, faults: str = "", q: float | None = 0.02, h: float = 0.03
) -> Path:
    """A dry-run config: a quick rig (turns of ``q`` and ``h`` seconds), or robotd's default one (``q`` None)."""
    path = directory / "robotd.toml"
    solver = "" if budget_s is None else f"[solver]\nbudget_s = {budget_s}\n"
    rig = "" if q is None else RIG.format(q=q, h=h)
    text = f'[robotd]\ndata_dir = "{directory / "data"}"\n{solver}' + rig
    if faults:
        text += f"[sim.faults]\n{faults}\n"
    path.write_text(text)
    return path


def once(config: Path, **options) -> dict:
    built = assemble.build(config, sim=True, web=False)
    try:
        return built.once(**options)
    finally:
        built.close()


def dry_runs(count: int, budget_s: float | None, moves3: int | None) -> dict:
    presets = list(PRESETS)
    results = {2: [], 3: []}
    with tempfile.TemporaryDirectory() as tmp:
        config = write_config(Path(tmp), budget_s)
        for k in range(count):
            puzzle = 2 if k % 2 == 0 else 3
            summary = once(
                config,
                puzzle=puzzle,
                seed=1000 + k,
                light=presets[k % len(presets)],
                moves=moves3 if puzzle == 3 else None,
            )
            results[puzzle].append(summary)
    return {f"{p}x{p}x{p}": _dry_run_figures(runs) for p, runs in results.items() if runs}


def _dry_run_figures(runs: list[dict]) -> dict:
    overhead = [r["host_overhead_s"] for r in runs if r["host_overhead_s"] is not None]
    solve = [r["step_durations"].get("solving") for r in runs if r["step_durations"].get("solving") is not None]
    solvers = [r["solver"] for r in runs if r["solver"]]
    return {
        "runs": len(runs),
        "solved": sum(bool(r["solved"]) for r in runs),
        "solved_by": {name: solvers.count(name) for name in sorted(set(solvers))},
        "errors": sorted({r["error"].split(";")[0] for r in runs if r["error"]}),
        "host_overhead_s_median": round(statistics.median(overhead), 3) if overhead else None,
        "solve_s_median": round(statistics.median(solve), 3) if solve else None,
        "mean_htm": round(statistics.mean(r["length_htm"] for r in runs if r["solved"]), 2)
        if any(r["solved"] for r in runs)
        else None,
    }


PARTS = ("memory", "dry_runs", "faults", "stop", "signal_stop")


def memory_part(count: int, budget_s: float | None, default_rig: bool) -> dict:
    """``memory`` on the quick rig, or on robotd's default one (``default_rig``), where the refiner
    searches as on a real rig (on the quick one the robot is done before it can)."""
    with tempfile.TemporaryDirectory() as tmp:
        return memory(count, write_config(Path(tmp), budget_s, q=None if default_rig else 0.02))


def faults(budget_s: float | None) -> dict:
    report = {}
    for name, (faults_text, expected) in FAULT_CASES.items():
        with tempfile.TemporaryDirectory() as tmp:
            config = write_config(Path(tmp), budget_s, faults_text)
            summary = once(config, puzzle=2, seed=21)
            stored = History(Path(tmp) / "data" / "history.sqlite").get_run(summary["id"])
        if expected is None:
            ok = summary["solved"]
        else:
            ok = summary["outcome"] == "error" and expected in (summary["error"] or "") and stored["outcome"] == "error"
        report[name] = {
            "as_expected": bool(ok),
            "outcome": summary["outcome"],
            "error": summary["error"],
            "link": summary["link"],
        }
    return report


def stop_latencies(repeats: int, budget_s: float | None, by_signal: bool = False) -> dict:
    """Time from the stop request (``stop()``, or SIGTERM to this process with robotd's handler) to the
    simulated firmware handling the emergency stop, mid-execution."""

    def config(directory: Path) -> Path:
        return write_config(directory, budget_s, q=0.2, h=0.3)

    if not by_signal:
        return stop_latency(config, repeats)
    return stop_latency(
        config, repeats, stop=lambda daemon: os.kill(os.getpid(), signal.SIGTERM), around=signals_stop_the_run
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="6 dry runs and 3 stops (under a minute)")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument(
        "--moves3",
        type=int,
        default=None,
        help="3x3x3 scrambles of K random moves (default: robotd's 25-move scramble)",
    )
    parser.add_argument(
        "--budget-s", type=float, default=None, help="3x3x3 neural A* budget per run (default: robotd's default)"
    )
    parser.add_argument("--parts", default=",".join(PARTS), help="which parts to run, comma-separated")
    parser.add_argument(
        "--memory-rig",
        choices=("quick", "default"),
        default="quick",
        help="the memory part's rig: quick turns, or robotd's default rig (the refiner searches as on a real one)",
    )
    args = parser.parse_args()
    runs, stops = (6, 3) if args.quick else (args.runs, 10)
    started = time.perf_counter()
    parts = {
        "memory": lambda: memory_part(5 if args.quick else 20, args.budget_s, args.memory_rig == "default"),
        "dry_runs": lambda: dry_runs(runs, args.budget_s, args.moves3),
        "faults": lambda: faults(args.budget_s),
        "stop": lambda: stop_latencies(stops, args.budget_s),
        "signal_stop": lambda: stop_latencies(stops, args.budget_s, by_signal=True),
    }
    unknown = set(args.parts.split(",")) - set(PARTS)
    if unknown:
        parser.error(f"--parts: no part {', '.join(sorted(unknown))}; the parts are {', '.join(PARTS)}")
    result: dict = {name: parts[name]() for name in PARTS if name in args.parts.split(",")}
    result["settings"] = {"runs": runs, "moves3": args.moves3, "budget_s": args.budget_s, "memory_rig": args.memory_rig}
    result["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
