"""How fast GrblLink's emergency stop ends the steps of the stock grbl binary, read from its STEP pins.

    python bench/grbl_stop.py [--stops N] [--quick] [--idle-lock MS]

Runs ``shared/stock-firmware/grbl-mega-5x-6axis.elf`` under the simavr
harness with a pin trace, connects ``GrblLink``, and N times plans five
quarter turns (0.3 s each), stops half-way through the second with
``link.estop()`` (feed hold ``!`` and soft reset 0x18) and recovers with
``clear()``. For each stop: from the ``estop()`` call to the last STEP edge
of any axis. Host time is placed on the simulated clock by a harness SYNC
just before the stop (simulated time is locked to the wall clock), so a
figure is good to about a millisecond. Prints one JSON object: median and
max, the stops that caught no motor stepping (left out), and how long
``estop()`` waited for grbl to confirm (its ``ALARM:3``).

``--idle-lock`` sets grbl's ``$1`` first (255, the value docs/hardware.md
asks for, keeps the drivers on; the build's default is 254).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# bench/serial.py would shadow pyserial: take this folder off the path, put the repo first
sys.path[:] = [str(REPO)] + [p for p in sys.path if Path(p or ".").resolve() != REPO / "bench"]

import serial  # noqa: E402

from firmware_interface.grbl.link import GrblLink  # noqa: E402
from firmware_interface.stock_firmware import stock_board  # noqa: E402

F_CPU = 16_000_000
GAP = 0.05  # s without a step edge: the motion has ended
BANNER = b"Grbl 1.1q"


def set_idle_lock(path: str, value: int) -> None:
    """``$1=value`` over a raw port, before the link connects (the first open boots the board)."""
    with serial.Serial(path, 115200, timeout=0.1) as raw:
        deadline = time.monotonic() + 5
        while BANNER not in raw.readline():
            if time.monotonic() > deadline:
                raise RuntimeError("no grbl banner")
        time.sleep(0.05)
        raw.write(f"$1={value}\n".encode())
        while raw.readline().strip() != b"ok":
            if time.monotonic() > deadline:
                raise RuntimeError(f"$1={value} not answered")


def step_edges(trace: Path) -> list[int]:
    return sorted(int(line.split()[1]) for line in trace.read_text().splitlines() if line.startswith("S "))


def stop_once(board, link) -> tuple[float, float]:
    """One stop half-way through the second of five turns: (host time of the stop, estop's confirmation s)."""
    link.set_speed(300).wait(1)
    motions = link.plan([("R", 1), ("U", 1), ("R", -1), ("U", -1), ("R", 1)])
    motions[1].wait_received(5)
    time.sleep(0.15)
    before = time.monotonic()
    sync = board.sync()
    after = time.monotonic()
    asked = time.monotonic()
    result = link.estop()
    cycle = sync["cycle"] + (asked - (before + after) / 2) * F_CPU
    time.sleep(0.2)
    link.clear(timeout=5)
    return cycle, result["acknowledged_s"]


def measure(stops: int, idle_lock: int | None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace"
        board = stock_board("grbl", trace=trace)
        board.start()
        try:
            if idle_lock is not None:
                set_idle_lock(board.path, idle_lock)
            link = GrblLink(board.path)
            try:
                link.connect()
                link.home().wait(2)
                stopped = [stop_once(board, link) for _ in range(stops)]
            finally:
                link.close()
        finally:
            board.stop()
        edges = step_edges(trace)
    return summary(edges, stopped)


def last_edge(edges: list[int], cycle: float) -> int:
    """The last STEP edge of the motion under way at ``cycle``: before the first 50 ms without one."""
    last = max(e for e in edges if e <= cycle)
    for edge in (e for e in edges if e > cycle):
        if edge - last > GAP * F_CPU:
            break
        last = edge
    return last


def summary(edges: list[int], stopped: list[tuple[float, float]]) -> dict:
    latencies, idle = [], 0
    for cycle, _ in stopped:
        before = [e for e in edges if e <= cycle]
        if not before or cycle - before[-1] > 0.01 * F_CPU:
            idle += 1  # no motor was stepping when the stop came
            continue
        latencies.append((last_edge(edges, cycle) - cycle) / F_CPU * 1000)
    confirmed = [seconds * 1000 for _, seconds in stopped]
    return {
        "stops": len(stopped),
        "caught_stepping": len(latencies),
        "left_out_idle": idle,
        "last_step_after_estop_ms_median": round(statistics.median(latencies), 2) if latencies else None,
        "last_step_after_estop_ms_max": round(max(latencies), 2) if latencies else None,
        "last_step_after_estop_ms": [round(x, 2) for x in latencies],
        "estop_confirmed_ms_median": round(statistics.median(confirmed), 1),
        "estop_confirmed_ms_max": round(max(confirmed), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stops", type=int, default=12)
    parser.add_argument("--quick", action="store_true", help="10 stops")
    parser.add_argument("--idle-lock", type=int, default=255, help="grbl's $1 (ms; 255: drivers stay on)")
    args = parser.parse_args()
    stops = 10 if args.quick else args.stops
    print(
        json.dumps(
            {"firmware": "grbl-mega-5x-6axis.elf", "idle_lock_ms": args.idle_lock, **measure(stops, args.idle_lock)}
        )
    )


if __name__ == "__main__":
    main()
