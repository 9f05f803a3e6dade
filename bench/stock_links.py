"""The stock firmware builds under simavr through robotd's links: stop latency on the STEP pins, and lost or
doubled turns through a faulty line. Prints one JSON object.

    python bench/stock_links.py [--stops N] [--turns N] [--runs N] [--entries K] [--jobs J] [--quick]

Runs the binaries of shared/stock-firmware under the simavr harness (simulated
time locked to the wall clock):

- ``stop``: for ``marlin`` (stock Marlin 2.1, EMERGENCY_PARSER off, Marlin's
  default), ``marlin-ep`` (on) and ``grbl`` (grbl-Mega-5X, GrblLink), N stops
  mid-solution: a seeded solution plan (the inverse of a seeded 3x3x3
  scramble, opposite faces paired) is under way and ``link.estop()`` comes
  during its second move. From the call to the last STEP edge of the motion
  under way, read from the harness's pin trace (host time is put on the
  simulated clock by a SYNC just before the stop): median and max, and the
  stops that caught no motor stepping (left out). After each stop the board
  is reset and the link connects again (faster than waiting for Marlin's
  quick stop to end; the latency is the same).
- ``turn``: N quarter turns one at a time through MarlinLink on the stock
  Marlin build (faces in turn), from the call to the first and to the last
  STEP edge, and until ``wait()`` returned; medians. ``parts``: at 500
  units/s, each sent as ``MOVE_PARTS`` G1 lines (as robotd does) and as
  one line (Marlin then holds the lone block about 0.1 s,
  BLOCK_DELAY_FOR_1ST_MOVE), alternating; ``acceleration`` (and
  ``grbl_acceleration``, on the stock grbl build with its ``$1=254``):
  planned at 0.3 s a quarter, at the speed that counts the board's
  acceleration (as robotd does, limits.py) and at the plain feed,
  alternating.
- ``faulty_line``: N seeded solution plans of K entries through MarlinLink
  to the stock Marlin build (EMERGENCY_PARSER off), each on a fresh board
  behind a faulty line (the faults of tests/test_controllers.py's dry runs:
  drops, duplicates, noise and corruption both ways, seeded per run), J at a
  time: quarter turns lost and doubled (counted per face and direction from
  the pins), plans that left the wrong cube, and plans that failed.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# run as a script, this folder comes first on sys.path, and bench/serial.py would shadow pyserial
sys.path[0] = str(Path(__file__).resolve().parent.parent)

import solver  # noqa: E402
from firmware_interface import LinkError  # noqa: E402
from firmware_interface.grbl import link as grbl_link  # noqa: E402
from firmware_interface.grbl.link import GrblLink  # noqa: E402
from firmware_interface.marlin import link as marlin_link  # noqa: E402
from firmware_interface.marlin.link import MarlinLink  # noqa: E402
from firmware_interface.pin_trace import F_CPU, StepClock, motion_end, step_cycles  # noqa: E402
from firmware_interface.stock_firmware import AXES, stock_board  # noqa: E402
from solver.puzzles.cube.geometry import OPPOSITE  # noqa: E402

BUILDS = {
    "marlin": ("marlin", "", MarlinLink),
    "marlin-ep": ("marlin", "ep", MarlinLink),
    "grbl": ("grbl", "", GrblLink),
}
LINK_MODULES = {"marlin": marlin_link, "grbl": grbl_link}
FAULTS = {"drop": 0.04, "duplicate": 0.03, "noise": 0.02, "corrupt": 0.04, "to_host": {"corrupt": 0.04}}
FEED = 30000.0  # the builds' limit: 500 units/s
QUARTERS = {"": 1, "'": -1, "2": 2}


def solution(seed: int, length: int) -> tuple[list, str, str]:
    """A seeded scramble and the plan entries that undo it: (entries, scrambled facelets, the moves)."""
    drawn = solver.scramble(3, seed=seed, length=length)
    moves = [(move[0], -QUARTERS[move[1:]]) for move in reversed(drawn["scramble"].split())]
    entries: list = []
    for face, q in moves:
        last = entries[-1] if entries else None
        if isinstance(last, tuple) and isinstance(last[0], str) and OPPOSITE[last[0]] == face:
            entries[-1] = (last, (face, q))
        else:
            entries.append((face, q))
    return entries, drawn["state"], drawn["scramble"]


def connected(link) -> None:
    link.connect()
    link.enable().wait(5)
    link.home().wait(5)


def stop_latency(name: str, stops: int) -> dict:
    firmware, variant, link_type = BUILDS[name]
    rng = random.Random(name)
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace"
        board = stock_board(firmware, variant, axes=AXES, trace=trace)
        board.start()
        marks, acknowledged = [], []
        link = link_type(board.path, feed=FEED)
        try:
            connected(link)
            for k in range(stops):
                motions = link.plan(solution(k, 8)[0])
                motions[1].wait_received(10)
                time.sleep(rng.uniform(0.1, 0.2))  # somewhere in the second move
                clock = StepClock(board)
                asked = time.monotonic()
                acknowledged.append(link.estop()["acknowledged_s"])
                marks.append(clock.cycle_at(asked))
                time.sleep(0.1)
                board.reset()
                time.sleep(0.1)
                connected(link)
        finally:
            link.close()
            board.stop()
        edges = step_cycles(trace)
    return summary(edges, marks, acknowledged)


def summary(edges: list[int], marks: list[int], acknowledged: list[float]) -> dict:
    ends = [(motion_end(edges, mark), mark) for mark in marks]
    latencies = [(end - mark) / F_CPU * 1000 for end, mark in ends if end is not None]
    return {
        "stops": len(marks),
        "left_out_idle": len(marks) - len(latencies),
        "last_step_after_stop_ms_median": round(statistics.median(latencies), 2) if latencies else None,
        "last_step_after_stop_ms_max": round(max(latencies), 2) if latencies else None,
        "last_step_after_stop_ms": [round(x, 2) for x in latencies],
        "estop_returned_ms_median": round(statistics.median(acknowledged) * 1000, 1),
    }


def timed_turns(build: str, feed: float, turns: int, variants: dict[str, dict]) -> dict:
    """Quarter turns one at a time on a stock build, planned at ``feed``, the variants taking turns (each sets
    these attributes of the link's module while it turns): per variant, medians from turn()."""
    firmware, variant, link_type = BUILDS[build]
    module = LINK_MODULES[build]
    saved = {name: getattr(module, name) for changes in variants.values() for name in changes}
    times: dict[str, list] = {name: [] for name in variants}
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace"
        board = stock_board(firmware, variant, axes=AXES, trace=trace)
        board.start()
        link = link_type(board.path, feed=feed)
        try:
            connected(link)
            for k in range(turns):
                name = list(variants)[k % len(variants)]
                for attribute, value in {**saved, **variants[name]}.items():
                    setattr(module, attribute, value)
                link.set_speed(round(link.units_per_quarter * 60000 / feed)).wait(1)  # the feed for the variant
                clock = StepClock(board)
                asked = time.monotonic()
                link.turn("URFDLB"[k % 6], 1).wait(5)
                times[name].append((clock.cycle_at(asked), time.monotonic() - asked))
                time.sleep(0.05)
        finally:
            for attribute, value in saved.items():
                setattr(module, attribute, value)
            link.close()
            board.stop()
        edges = step_cycles(trace)
    summaries = {name: turn_summary(edges, marks) for name, marks in times.items()}
    return {"planned_s": round(90 * 60 / feed, 3), **summaries}


def turn_times(turns: int) -> dict:
    not_counted = {"move_feed": lambda *limits_and_feed: (limits_and_feed[-1], None)}  # the feed as it is
    parts = {f"{marlin_link.MOVE_PARTS}_lines": {}, "1_line": {"MOVE_PARTS": 1}}
    counted = {"counted": {}, "not_counted": not_counted}
    return {
        "parts": timed_turns("marlin", FEED, turns, parts),
        "acceleration": timed_turns("marlin", 90 * 60 / 0.3, turns, counted),
        "grbl_acceleration": timed_turns("grbl", 90 * 60 / 0.3, turns, counted),
    }


def turn_summary(edges: list[int], marks: list[tuple[int, float]]) -> dict:
    starts, ends = [], []
    for mark, _ in marks:
        first = next(edge for edge in edges if edge > mark)
        starts.append((first - mark) / F_CPU * 1000)
        ends.append(((motion_end(edges, first) or first) - mark) / F_CPU * 1000)
    return {
        "turns": len(marks),
        "first_step_ms_median": round(statistics.median(starts), 1),
        "last_step_ms_median": round(statistics.median(ends), 1),
        "wait_returned_ms_median": round(statistics.median(done for _, done in marks) * 1000, 1),
    }


def faulty_run(seed: int, entries: int) -> dict:
    plan, scrambled, scramble = solution(1000 + seed, entries)
    board = stock_board("marlin", "", axes=AXES, faults={**FAULTS, "seed": seed}, state=scrambled)
    board.start()
    link = MarlinLink(board.path, feed=FEED)
    expected: Counter = Counter()
    for entry in plan:
        for face, q in entry if isinstance(entry[0], tuple) else [entry]:
            expected[(face, 1 if q > 0 else -1)] += abs(q)
    try:
        connected(link)
        link.wait(link.plan(plan), timeout=300)
        got = Counter(board.turns())
        return {
            "lost": sum((expected - got).values()),
            "doubled": sum((got - expected).values()),
            "wrong_cube": board.cube != solver.scramble(3, seed=0, length=0)["state"],
            "resends": link.status()["counters"]["resends"],
        }
    except LinkError as error:
        return {"failed": f"seed {seed} ({scramble}): {error}"}
    finally:
        link.close()
        board.stop()


def faulty_line(runs: int, entries: int, jobs: int) -> dict:
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda seed: faulty_run(seed, entries), range(runs)))
    done = [r for r in results if "failed" not in r]
    return {
        "runs": runs,
        "entries_per_plan": entries,
        "lost_turns": sum(r["lost"] for r in done),
        "doubled_turns": sum(r["doubled"] for r in done),
        "wrong_cube": sum(r["wrong_cube"] for r in done),
        "failed": [r["failed"] for r in results if "failed" in r],
        "resends": sum(r["resends"] for r in done),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stops", type=int, default=20)
    parser.add_argument("--turns", type=int, default=24)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--entries", type=int, default=16)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="12 stops per build, 12 turns, 2 plans of 6 entries")
    args = parser.parse_args()
    if args.quick:
        args.stops, args.turns, args.runs, args.entries = 12, 12, 2, 6
    started = time.monotonic()
    result = {
        "stop": {name: stop_latency(name, args.stops) for name in BUILDS},
        "turn": turn_times(args.turns),
        "faulty_line": faulty_line(args.runs, args.entries, args.jobs),
    }
    print(json.dumps({**result, "seconds": round(time.monotonic() - started, 1)}))


if __name__ == "__main__":
    main()
