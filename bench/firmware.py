"""The AVR firmware on a simulated ATmega2560: size, step generation, stop and watchdog latency, round trips.

    python bench/firmware.py [--quick] [--board ramps|header] [--suite]

Prints one JSON object. Times marked ``sim`` are simulated (cycle counts of
the 16 MHz core, exact and repeatable); ``wall`` ones are the host's clock.
The harness (firmware/sim) writes a trace of every STEP edge, EN change and
line end, from which the figures are computed:

- flash and RAM use of the build;
- step rate: all six axes jog together at rising requested rates; the
  highest one every axis delivers exactly (all steps, cruise within 2 %),
  with the jitter of step edges in the cruise (max - min interval, cycles);
- emergency stop: from the ESTOP line's end reaching the UART to the last
  STEP edge, and to the drivers going off;
- watchdog: from the host's last byte to the drivers going off;
- frame round trip: STATUS to its answer (sim and wall);
- host overhead of a 3x3x3 solve: wall time minus motor time (each
  move's trapezoid by protocol section 16), one TURN frame per move
  (protocol v1 style) against the PLAN upload; and the firmware's own
  pause between one move's last step and the next one's first (sim);
- with --suite: how long the HIL test suite takes (pytest --firmware avr).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# bench/serial.py would shadow pyserial: take this folder off the path, put the repo first
sys.path[:] = [str(REPO)] + [p for p in sys.path if Path(p or ".").resolve() != REPO / "bench"]

import serial  # noqa: E402

from firmware_interface import RigLink  # noqa: E402
from firmware_interface.robotd.avr import AvrFirmware, build  # noqa: E402
from firmware_interface.robotd.device import profile_seconds  # noqa: E402
from firmware_interface.robotd.protocol import Command, Estop, Hello, Ping, StatusQuery  # noqa: E402
from solver import scramble, solve  # noqa: E402
from solver.puzzles.cube.notation import parse_moves  # noqa: E402

F_CPU = 16_000_000
FACES = "URFDLB"
STEPS = 50  # the simulated rig's steps per quarter turn
RATE, ACCEL = 20000, 1_000_000  # its motors: steps/s, steps/s² (a 14 ms quarter turn)


def flash_and_ram(elf: Path) -> dict:
    sections = {}
    sizes = subprocess.run(["avr-size", "-A", str(elf)], capture_output=True, text=True, check=True).stdout
    for line in sizes.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith(".") and parts[1].isdigit():
            sections[parts[0]] = int(parts[1])
    flash = sections.get(".text", 0) + sections.get(".data", 0)
    ram = sections.get(".data", 0) + sections.get(".bss", 0) + sections.get(".noinit", 0)
    return {
        "flash_bytes": flash,
        "flash_pct": round(100 * flash / 262144, 2),
        "ram_bytes": ram,
        "ram_pct": round(100 * ram / 8192, 2),
    }


def read_trace(path: Path) -> dict:
    trace = {"S": [], "E": [], "R": [], "T": []}
    for line in path.read_text().splitlines():
        kind, *fields = line.split()
        trace[kind].append(tuple(int(f) for f in fields))
    return trace


class RawBoard:
    """A raw protocol session with the simulated board: frames written by hand, nothing automatic."""

    def __init__(self, trace: Path, board: str):
        self.device = AvrFirmware(board=board, steps_per_quarter=STEPS, trace=trace)
        self.port = serial.Serial(self.device.start(), 115200, timeout=0.2)
        self.seq, self.last_write = 1, time.monotonic()
        self.expect(b"HB ")  # the board takes bytes once it has booted
        self.write(Hello(2, "00C0FFEE", 1).encode())
        hello = self.expect(b"HELLO session=00C0FFEE").decode()
        self.max_rate = int(hello.split(" rate=")[1].split("*")[0].split()[0])
        self.command("ENABLE", "1")

    def write(self, frame: bytes) -> None:
        self.port.write(frame)
        self.last_write = time.monotonic()

    def expect(self, head: bytes, timeout: float = 3.0) -> bytes:
        """Read until a line starts with ``head``, feeding the board's watchdog with PING meanwhile."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if time.monotonic() - self.last_write > 0.2:
                self.write(Ping(1).encode())
            line = self.port.read_until(b"\n")
            if line.startswith(head):
                return line
        raise RuntimeError(f"no {head!r} from the board")

    def command(self, verb: str, *args: str) -> None:
        seq, self.seq = self.seq, self.seq + 1
        self.write(Command(seq, verb, args).encode())
        self.expect(f"ACK {seq}".encode())

    def close(self) -> None:
        self.port.close()
        self.device.stop()


def cruise_stats(edges: list[int]) -> tuple[float, int]:
    """Over the middle half of a move (its cruise): the mean step interval, and the jitter of the step
    edges, the largest distance (cycles) of an edge from the even grid the mean rate would give."""
    middle = edges[len(edges) // 4 : 3 * len(edges) // 4]
    interval = (middle[-1] - middle[0]) / (len(middle) - 1)
    return interval, round(max(abs(c - (middle[0] + i * interval)) for i, c in enumerate(middle)))


def step_rates(board: str, rates: list[int], steps: int) -> dict:
    results = []
    for rate in rates:
        with tempfile.TemporaryDirectory() as tmp:
            trace = Path(tmp) / "trace"
            raw = RawBoard(trace, board)
            if rate > raw.max_rate:
                raw.close()
                results.append({"requested": rate, "exact": False, "refused": f"above rate={raw.max_rate}"})
                continue
            mid = 2
            for face in FACES:
                raw.command("MOTOR", str(mid), face, f"steps={STEPS}", f"rate={rate}", "accel=65535", "dir=1")
                mid += 1
            raw.command("JOG", str(mid), *[x for face in FACES for x in (face, str(steps))])
            raw.expect(f"DONE {mid}".encode(), timeout=10 + 2 * steps / rate)
            raw.device.sync()
            raw.close()
            edges = read_trace(trace)["S"]
        per_axis = []
        for axis in range(6):
            cycles = [c for c, a, _ in edges if a == axis]
            interval, jitter = cruise_stats(cycles) if len(cycles) > 8 else (float("inf"), 0)
            per_axis.append({"steps": len(cycles), "rate": round(F_CPU / interval), "jitter_cycles": jitter})
        exact = all(a["steps"] == steps and abs(a["rate"] - rate) <= 0.02 * rate for a in per_axis)
        results.append(
            {
                "requested": rate,
                "exact": exact,
                "delivered_min": min(a["rate"] for a in per_axis),
                "jitter_cycles_max": max(a["jitter_cycles"] for a in per_axis),
                "jitter_us_max": round(max(a["jitter_cycles"] for a in per_axis) / F_CPU * 1e6, 1),
            }
        )
    best = max((r["requested"] for r in results if r["exact"]), default=None)
    return {"six_axes": results, "highest_exact_rate_per_axis": best}


def stop_latencies(board: str, runs: int) -> dict:
    estop_us, estop_off_us, watchdog_ms = [], [], []
    for run in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            trace = Path(tmp) / "trace"
            raw = RawBoard(trace, board)
            raw.command("JOG", "2", *[x for face in FACES for x in (face, "30000")])
            time.sleep(0.2 + 0.01 * run)
            if run % 2 == 0:
                raw.write(Estop(7).encode())
                raw.expect(b"ESTOP 7")
            else:
                time.sleep(1.3)  # the host falls silent: the watchdog (1000 ms) trips
            raw.device.sync()
            raw.close()
            t = read_trace(trace)
        last_rx, last_step = t["R"][-1][0], t["S"][-1][0]
        off = [c for c, _, on in t["E"] if not on and c >= last_rx]
        if run % 2 == 0:
            estop_us.append((last_step - last_rx) / F_CPU * 1e6)
            estop_off_us.append((max(off) - last_rx) / F_CPU * 1e6)
        else:
            watchdog_ms.append((max(off) - last_rx) / F_CPU * 1e3)
    return {
        "estop_to_last_step_us_sim": _summary(estop_us),
        "estop_to_drivers_off_us_sim": _summary(estop_off_us),
        "watchdog_trip_ms_sim": _summary(watchdog_ms),
    }


def round_trips(board: str, count: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace"
        raw = RawBoard(trace, board)
        time.sleep(0.05)
        raw.port.reset_input_buffer()
        wall = []
        for token in range(1, count + 1):
            start = time.perf_counter()
            raw.write(StatusQuery(token).encode())
            raw.expect(f"STATUS {token} ".encode())
            wall.append((time.perf_counter() - start) * 1e3)
        raw.device.sync()
        raw.close()
        t = read_trace(trace)
    rx, tx = [c for (c,) in t["R"]][-count:], [c for (c,) in t["T"]]
    sim = []
    for received in rx:  # the first line the board sent after each STATUS arrived
        answer = next((c for c in tx if c > received), None)
        if answer is not None:
            sim.append((answer - received) / F_CPU * 1e3)
    return {"status_round_trip_ms_wall": _summary(wall), "status_round_trip_ms_sim": _summary(sim)}


def solutions(count: int) -> list[list[int]]:
    return [
        parse_moves(solve(scramble(3, seed=900 + i)["state"], fallback="two-phase", budget_s=0.5).text)
        for i in range(count)
    ]


def move_gaps_ms(edges: list[tuple[int, int, int]]) -> list[float]:
    """Simulated time from one move's last step to the next move's first step (moves: runs of one axis)."""
    blocks: list[list[int]] = []
    for cycle, axis, _ in edges:
        if blocks and blocks[-1][2] == axis and cycle - blocks[-1][1] < 2 * F_CPU // 1000:
            blocks[-1][1] = cycle
        else:
            blocks.append([cycle, cycle, axis])
    return [(b[0] - a[1]) / F_CPU * 1e3 for a, b in zip(blocks, blocks[1:])]


def host_overhead(board: str, moves_list: list[list[int]]) -> dict:
    out = {}
    for mode in ("turn_frames", "plan_upload"):
        overheads, gaps = [], []
        for moves in moves_list:
            with tempfile.TemporaryDirectory() as tmp:
                trace = Path(tmp) / "trace"
                device = AvrFirmware(board=board, steps_per_quarter=STEPS, trace=trace)
                with RigLink(device.start()) as link:
                    link.connect()
                    link.wait(
                        [link.enable()]
                        + [link.setup_motor(f, steps=STEPS, rate=RATE, accel=ACCEL, direction=1) for f in FACES],
                        timeout=5,
                    )
                    turns = [(FACES[m // 3], {0: 1, 1: 2, 2: -1}[m % 3]) for m in moves]
                    start = time.monotonic()
                    motions = [link.turn(*t) for t in turns] if mode == "turn_frames" else link.plan(turns)
                    link.wait(motions, timeout=30)
                    wall = time.monotonic() - start
                device.sync()
                device.stop()
                overheads.append(wall - sum(profile_seconds(STEPS * abs(q), RATE, ACCEL) for _, q in turns))
                gaps += move_gaps_ms(read_trace(trace)["S"])
        out[mode] = {
            "overhead_s": _summary(overheads),
            "moves_mean": statistics.mean(len(m) for m in moves_list),
            "step_gap_between_moves_ms_sim": _summary(gaps),
        }
    return out


def suite_seconds() -> float:
    start = time.monotonic()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "tests/test_link.py",
            "tests/test_firmware_board.py",
            "--firmware",
            "avr",
        ],
        cwd=REPO,
        check=False,
        capture_output=True,
    )
    return round(time.monotonic() - start, 1)


def _summary(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    return {"n": len(values), "median": round(statistics.median(values), 3), "max": round(max(values), 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (under a minute)")
    parser.add_argument("--board", default="ramps", choices=("ramps", "header"))
    parser.add_argument("--suite", action="store_true", help="also time the HIL test suite")
    args = parser.parse_args()
    elf, _ = build(args.board)
    rates = [5000, 10000, 20000] if args.quick else [5000, 10000, 12500, 15000, 20000, 25000]
    result = {
        "board": args.board,
        "load": os.getloadavg()[0],
        **flash_and_ram(elf),
        "step_rate": step_rates(args.board, rates, 4000 if args.quick else 12000),
        **stop_latencies(args.board, 4 if args.quick else 10),
        **round_trips(args.board, 20 if args.quick else 100),
        "host_overhead_3x3": host_overhead(args.board, solutions(3 if args.quick else 10)),
    }
    if args.suite:
        result["hil_suite_s"] = suite_seconds()
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
