"""Benchmark of the firmware link through the simulated firmware on a pty; prints one JSON object.

    python bench/serial.py [--quick]

- latency: one turn at a time, from ``turn()`` to the device's ACK
  (received) and to its DONE (done), motors taking no time; and a STATUS
  round trip. Median and p99 in ms.
- throughput: turns per second with the window full, motors taking no time.
- fault_run: turns (10,000; 2,000 with --quick) with 10% of frames dropped,
  1% corrupted and 1% duplicated in each direction. ``exactly_once`` is
  true when the simulator executed every turn once, in the order sent, and
  its virtual cube equals the solver's result for the sequence.
- silence / unplug / reset: time from the fault (simulator goes silent,
  closes its port, reboots) to the link's error, a long sequence running.
- estop: a long sequence queued, time from ``estop()`` to the simulator
  handling the ESTOP frame and to the host holding the acknowledgement.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import time
from pathlib import Path

import numpy as np

# This file is named like pyserial's package: take bench/ off the path so ``import serial`` finds pyserial.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from firmware_interface import DeviceReset, DeviceSilent, LinkError, PortError, RigLink, SimulatedFirmware  # noqa: E402
from solver import apply  # noqa: E402
from solver.puzzles.cube.cubie import solved_facelets  # noqa: E402
from solver.puzzles.cube.notation import format_moves  # noqa: E402

INSTANT = {"quarter_ms": 0, "half_ms": 0, "home_ms": 0}
LOSSY = {"drop": 0.10, "corrupt": 0.01, "duplicate": 0.01}


def ms_stats(seconds: list[float]) -> dict:
    ms = np.array(seconds) * 1000
    return {
        "median": round(float(np.median(ms)), 3),
        "p99": round(float(np.percentile(ms, 99)), 3),
        "max": round(float(ms.max()), 3),
        "n": len(ms),
    }


def session(timing=None, faults=None, **sim_options):
    sim = SimulatedFirmware(timing=timing or INSTANT, faults=faults, **sim_options)
    link = RigLink(sim.start())
    link.connect()
    link.enable().wait(5)
    return sim, link


def latency(n: int) -> dict:
    sim, link = session()
    received, done, status = [], [], []
    try:
        for i in range(n):
            start = time.perf_counter()
            motion = link.turn("URFDLB"[i % 6], 1)
            motion.wait_received(5)
            received.append(time.perf_counter() - start)
            motion.wait(5)
            done.append(time.perf_counter() - start)
            start = time.perf_counter()
            link.query()
            status.append(time.perf_counter() - start)
    finally:
        link.close()
        sim.stop()
    return {"turn_received_ms": ms_stats(received), "turn_done_ms": ms_stats(done), "status_query_ms": ms_stats(status)}


def turn_run(n: int, faults: dict | None, seed: int) -> dict:
    moves = [random.Random(seed).randrange(18) for _ in range(n)]
    sim, link = session(faults=faults)
    try:
        start = time.perf_counter()
        motions = link.moves(moves)
        link.wait(motions, timeout=600)
        elapsed = time.perf_counter() - start
        executed = [s.mid for s in sim.executed() if s.verb == "TURN"]
        counters, info = link.status()["counters"], sim.info()
        cube_ok = sim.cube == apply(solved_facelets(3), format_moves(moves))
    finally:
        link.close()
        sim.stop()
    sent = [m.mid for m in motions]
    return {
        "turns": n,
        "seconds": round(elapsed, 3),
        "moves_per_s": round(n / elapsed, 1),
        "exactly_once": executed == sent and cube_ok,
        "executed_in_order": executed == sent,
        "cube_matches_solver": cube_ok,
        "retransmissions": counters["retransmissions"],
        "naks_received": counters["naks_received"],
        "decode_errors": counters["decode_errors"],
        "frames_sent": counters["frames_sent"],
        "frames_received": counters["frames_received"],
        "injected_to_device": info["to_device"],
        "injected_to_host": info["to_host"],
    }


def detection(kind: str, reps: int) -> dict:
    """Time from making the simulator misbehave to the link's error, with turns running."""
    expected = {"silence": DeviceSilent, "unplug": PortError, "reset": DeviceReset}[kind]
    times, right_error, confirmed_ran = [], True, True
    for _ in range(reps):
        faults: list = []
        sim = SimulatedFirmware(timing={"quarter_ms": 20, "half_ms": 30})
        link = RigLink(sim.start(), on_fault=lambda err, faults=faults: faults.append((time.monotonic(), err)))
        try:
            link.connect()
            link.enable().wait(5)
            motions = link.moves("U R F D L B " * 10)
            motions[2].wait(5)
            start = time.monotonic()
            {"silence": sim.go_silent, "unplug": sim.close_port, "reset": sim.reset}[kind]()
            try:
                link.wait(motions, timeout=5)
            except LinkError:
                pass
            when, err = faults[0]
            times.append(when - start)
            right_error &= isinstance(err, expected)
            ran = [s.mid for s in sim.executed() if s.verb == "TURN"]
            confirmed = [m.mid for m in motions if m.completed.done() and m.completed.exception() is None]
            confirmed_ran &= confirmed == ran[: len(confirmed)]
        finally:
            link.close()
            sim.stop()
    return {
        "detected_s": {k: round(v / 1000, 4) for k, v in ms_stats(times).items() if k != "n"},
        "runs": reps,
        "error": expected.__name__,
        "reported_as_error": right_error,
        "within_1s": max(times) < 1.0,
        "confirmed_motions_ran": confirmed_ran,
    }


def estop(reps: int) -> dict:
    handled, acked, emptied = [], [], True
    for _ in range(reps):
        sim, link = session(timing={"quarter_ms": 80, "half_ms": 130})
        try:
            motions = link.moves("U R F D L B " * 40)  # 240 turns, 19 s of motion
            motions[1].wait(5)
            time.sleep(0.03)
            start = time.monotonic()
            link.estop()
            acked.append(time.monotonic() - start)
            handled.append(sim.estop_times()[0] - start)
            ran = len([s for s in sim.executed() if s.verb == "TURN"])
            time.sleep(0.2)
            emptied &= sim.info()["queued"] == 0 and ran == len([s for s in sim.executed() if s.verb == "TURN"])
        finally:
            link.close()
            sim.stop()
    return {
        "simulator_handled_ms": ms_stats(handled),
        "host_acknowledged_ms": ms_stats(acked),
        "within_50ms": max(handled) < 0.050,
        "queue_emptied_nothing_moved_after": emptied,
        "queued_turns": 240,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs, under a minute")
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)  # faults are provoked on purpose: no dumps on stderr
    quick = args.quick
    start = time.perf_counter()
    result = {
        "quick": quick,
        "latency": latency(100 if quick else 500),
        "throughput": {
            k: v
            for k, v in turn_run(1000 if quick else 5000, None, 1).items()
            if k in ("turns", "seconds", "moves_per_s", "exactly_once")
        },
        "fault_run": {"faults_each_direction": LOSSY, **turn_run(2000 if quick else 10000, {**LOSSY, "seed": 5}, 2)},
        "silence": detection("silence", 3 if quick else 7),
        "unplug": detection("unplug", 3 if quick else 7),
        "reset": detection("reset", 3 if quick else 7),
        "estop": estop(5 if quick else 15),
    }
    result["bench_seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
