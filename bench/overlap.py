"""Overlapping turns against real grbl: motor time on the same solutions, read from the STEP pins.

    python bench/overlap.py [--quick] [--solutions N] [--jam-solutions M] [--overlap-deg D]

Both firmwares run on the simulated ATmega2560 (firmware/sim) with a pin
trace; a solution's motor time is from its first STEP edge to its last, in
simulated time (16 MHz cycles, exact). Same motors for both: 800 steps per
quarter turn, 8,000 steps/s, at 160,000 and at 40,000 steps/s².

- robotd: the firmware's protocol 3, each motor set up with MOTOR (its
  ``overlap=`` from ``--overlap-deg``, default ``[rig] overlap_deg``), the
  solution planned by the six-motor rig (opposite faces paired) and
  uploaded with PLAN; the cube under the harness jams if a face starts
  turning while an adjacent one is further than ``CORNER_CUTTING_DEG``
  from aligned. ``estimate_s`` is the rig's timing model
  (``SixAxisRig.planned_s``) for the same moves, ``estimate_error`` its
  relative error against the pins.
- grbl: ``shared/stock-firmware/grbl-mega-5x-6axis.elf`` with ``$100-$105``,
  ``$110-$115`` and ``$120-$125`` set to the same steps, rate and
  acceleration, one ``G1`` line per move (``G91``, 90 units a quarter
  turn), each sent as soon as the previous one is answered, so its planner
  stays full.
- jams: ``--jam-solutions`` solutions one after the other through robotd
  at 160,000 steps/s² (ten to a session, simulated time running at twice
  the wall clock's pace), counting jams and checking the cube ends as the
  moves say.

The machine may be shared: a run whose trace shows no step edge for 20 ms
(the moves reached the firmware late because the harness or the host was
not scheduled in time) or whose link failed is run again, up to five
times.

Prints one JSON object: per acceleration each solution's times and ratio,
the median ratio and the largest estimate error; the jam count; flash and
RAM of the build.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

REPO = Path(__file__).resolve().parents[1]
# bench/serial.py would shadow pyserial: take this folder off the path, put the repo first
sys.path[:] = [str(REPO)] + [p for p in sys.path if Path(p or ".").resolve() != REPO / "bench"]

import serial  # noqa: E402

from bench.firmware import flash_and_ram, read_trace, solutions  # noqa: E402
from firmware_interface import LinkError, RigLink  # noqa: E402
from firmware_interface.robotd.avr import AvrFirmware, build  # noqa: E402
from firmware_interface.robotd.overlap import overlap_steps  # noqa: E402
from firmware_interface.stock_firmware import stock_board  # noqa: E402
from firmware_interface.virtual_cube import CORNER_CUTTING_DEG, VirtualCube  # noqa: E402
from robot.config import Config  # noqa: E402
from robot.rig import rig_from_config  # noqa: E402
from robot.six_axis import SixAxisRig  # noqa: E402
from solver.puzzles.cube.geometry import FACES  # noqa: E402
from solver.puzzles.cube.notation import format_moves, move_face, move_turns  # noqa: E402

F_CPU = 16_000_000
STEPS, RATE = 800, 8000  # steps per quarter turn, steps/s
ACCELS = (160_000, 40_000)  # steps/s²
UNITS = 90  # grbl: units per quarter turn
GRBL_AXES = dict(zip(FACES, "XYZABC"))  # stock_firmware's default wiring
GRBL_TURN = {1: 90, 2: 180, 3: -90}  # move_turns → units
STARVED_S = 0.02  # longer without a step edge than either firmware pauses between two moves
TRIES = 5
JAM_SPEED = 2.0  # the jam runs count jams, not time: simulated time at twice the wall clock
T = TypeVar("T", bound=tuple)


def rig(accel: int, overlap_deg: float) -> SixAxisRig:
    """The six-motor rig as robotd reads it from its config: these motors, this overlap."""
    text = (
        f"[rig]\nsettle_s = 0.0\noverlap_deg = {overlap_deg}\n"
        f"[rig.stepper]\nsteps_per_quarter = {STEPS}\nmax_rate = {RATE}\naccel = {accel}\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "robotd.toml"
        path.write_text(text)
        model = rig_from_config(Config.load(path).section("rig"))
    assert isinstance(model, SixAxisRig)
    return model


def motor_seconds(edges: list[tuple[int, ...]]) -> float:
    return (edges[-1][0] - edges[0][0]) / F_CPU if edges else 0.0


def starved(edges: list[tuple[int, ...]]) -> bool:
    """No step edge for STARVED_S somewhere in the run: the moves were sent too late (a loaded machine kept
    the host or the harness from running), so the figure is not the firmware's; that run is repeated."""
    return not edges or any(b[0] - a[0] > STARVED_S * F_CPU for a, b in zip(edges, edges[1:]))


def attempts(run: Callable[[], T], timed: bool = True) -> T:
    """``run`` until it neither fails on the link nor (``timed``) shows a starved moment in its step edges
    (its result's first item), at most TRIES times."""
    for attempt in range(TRIES):
        try:
            result = run()
        except LinkError as error:  # the same cause: the harness or the host was not scheduled in time
            print(f"run failed ({type(error).__name__}), again", file=sys.stderr)
            if attempt == TRIES - 1:
                raise
            continue
        if not timed or not starved(result[0]) or attempt == TRIES - 1:
            return result
        print("moves sent too late (a loaded machine), again", file=sys.stderr)
    raise AssertionError("unreachable")


def entries(plan) -> list:
    """Rig commands as ``link.plan`` entries: (motor, q) or a pair of them."""
    turns = [[(t.motor, t.quarter_turns) for t in command.turns] for command in plan]
    return [t[0] if len(t) == 1 else tuple(t) for t in turns]


def robotd_session(moves: list[int], accel: int, overlap_deg: float) -> tuple[list, list, str]:
    """One solution in its own session with a pin trace: (step edges, jams, the cube after)."""
    model = rig(accel, overlap_deg)
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace"
        device = AvrFirmware(steps_per_quarter=STEPS, trace=trace)
        try:
            with RigLink(device.start()) as link:
                link.connect()
                overlap = overlap_steps(overlap_deg, STEPS)
                setup = [link.setup_motor(f, STEPS, RATE, accel, 1, overlap) for f in FACES]
                link.wait([link.enable(), *setup], timeout=5)
                link.wait(link.plan(entries(model.plan(moves))), timeout=60)
            jams, cube = device.jams(), device.cube
        finally:
            device.stop()
        return read_trace(trace)["S"], jams, cube


def robotd_run(moves_list: list[list[int]], accel: int, overlap_deg: float) -> list[dict]:
    """Each solution: motor time on the pins, the rig's estimate, jams, whether the cube is as the moves say."""
    out = []
    for moves in moves_list:
        edges, jams, cube = attempts(partial(robotd_session, moves, accel, overlap_deg))
        if starved(edges):
            raise RuntimeError(f"the machine is too loaded to time {format_moves(moves)}: try again later")
        measured, estimate = motor_seconds(edges), rig(accel, overlap_deg).planned_s(moves)
        print(f"robotd {accel}: {measured:.4f} s, estimate {estimate:.4f} s", file=sys.stderr)
        out.append(
            {
                "moves": len(moves),
                "robotd_s": round(measured, 4),
                "estimate_s": round(estimate, 4),
                "estimate_error": round(estimate / measured - 1, 4),
                "jams": len(jams),
                "cube_as_moves": cube == expected_cube([moves]),
            }
        )
    return out


def grbl_line(port: serial.Serial, line: str, deadline: float) -> None:
    port.write(line.encode() + b"\n")
    while True:
        reply = port.readline().strip()
        if reply == b"ok":
            return
        if reply.startswith(b"error") or time.monotonic() > deadline:
            raise RuntimeError(f"grbl answered {reply!r} to {line!r}")


def grbl_run(moves: list[int], accel: int) -> float:
    """Motor time of ``moves`` on stock grbl, one G1 line a move, its planner kept full."""
    (edges,) = attempts(partial(grbl_session, moves, accel))
    if starved(edges):
        raise RuntimeError(f"the machine is too loaded to time {format_moves(moves)} on grbl: try again later")
    seconds = motor_seconds(edges)
    print(f"grbl {accel}: {seconds:.4f} s", file=sys.stderr)
    return seconds


def grbl_session(moves: list[int], accel: int) -> tuple[list]:
    """One solution on a freshly booted grbl with a pin trace: (step edges,)."""
    per_unit = STEPS / UNITS
    settings = [f"${100 + i}={per_unit:.6f}" for i in range(6)]
    settings += [f"${110 + i}={RATE / per_unit * 60:.3f}" for i in range(6)]
    settings += [f"${120 + i}={accel / per_unit:.3f}" for i in range(6)]
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace"
        board = stock_board("grbl", steps_per_quarter=STEPS, trace=trace)
        board.start()
        try:
            with serial.Serial(board.path, 115200, timeout=0.2) as port:
                deadline = time.monotonic() + 10
                while b"Grbl" not in port.readline():
                    if time.monotonic() > deadline:
                        raise RuntimeError("no grbl banner")
                for line in [*settings, "G91"]:
                    grbl_line(port, line, deadline)
                feed = RATE / per_unit * 60
                deadline = time.monotonic() + 120
                for move in moves:
                    axis = GRBL_AXES[FACES[move_face(move)]]
                    grbl_line(port, f"G1 {axis}{GRBL_TURN[move_turns(move)]} F{feed:.0f}", deadline)
                grbl_line(port, "G4 P0", deadline)  # answered once every move before it has run
        finally:
            board.stop()
        return (read_trace(trace)["S"],)


def compare(moves_list: list[list[int]], accel: int, overlap_deg: float) -> dict:
    ours = robotd_run(moves_list, accel, overlap_deg)
    rows = []
    for moves, row in zip(moves_list, ours):
        grbl_s = grbl_run(moves, accel)
        rows.append({**row, "grbl_s": round(grbl_s, 4), "ratio": round(row["robotd_s"] / grbl_s, 4)})
    return {
        "median_ratio": round(statistics.median(r["ratio"] for r in rows), 4),
        "median_robotd_s": round(statistics.median(r["robotd_s"] for r in rows), 4),
        "median_grbl_s": round(statistics.median(r["grbl_s"] for r in rows), 4),
        "max_abs_estimate_error": max(abs(r["estimate_error"]) for r in rows),
        "jams": sum(r["jams"] for r in rows),
        "solutions": [{"text": format_moves(m), **r} for m, r in zip(moves_list, rows)],
    }


def expected_cube(moves_list: list[list[int]]) -> str:
    cube = VirtualCube()
    for move in (m for moves in moves_list for m in moves):
        cube.turn(FACES[move_face(move)], {1: 1, 2: 2, 3: -1}[move_turns(move)])
    return cube.facelets


def jam_session(moves_list: list[list[int]], overlap_deg: float) -> tuple[list, str]:
    """Solutions one after the other in one session at the first acceleration: (jams, the cube after)."""
    model = rig(ACCELS[0], overlap_deg)
    device = AvrFirmware(steps_per_quarter=STEPS, speed=JAM_SPEED)
    try:
        with RigLink(device.start()) as link:
            link.connect()
            overlap = overlap_steps(overlap_deg, STEPS)
            setup = [link.setup_motor(f, STEPS, RATE, ACCELS[0], 1, overlap) for f in FACES]
            link.wait([link.enable(), *setup], timeout=5)
            for moves in moves_list:
                link.wait(link.plan(entries(model.plan(moves))), timeout=60)
        return device.jams(), device.cube
    finally:
        device.stop()


def jam_run(moves_list: list[list[int]], overlap_deg: float, per_session: int = 10) -> dict:
    """Jams over every solution, ``per_session`` of them in one session, and whether each session's cube
    ended as its moves say (a jammed cube turns no more)."""
    jams, cubes_right = 0, 0
    for first in range(0, len(moves_list), per_session):
        chunk = moves_list[first : first + per_session]
        found, cube = attempts(partial(jam_session, chunk, overlap_deg), timed=False)
        jams += len(found)
        cubes_right += cube == expected_cube(chunk)
        print(f"jams after {first + len(chunk)} solutions: {jams}", file=sys.stderr)
    return {
        "solutions": len(moves_list),
        "jams": jams,
        "sessions": -(-len(moves_list) // per_session),
        "sessions_with_the_cube_as_moves": cubes_right,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 solutions, 5 more for jams")
    parser.add_argument("--solutions", type=int, default=10, help="solutions compared with grbl per acceleration")
    parser.add_argument("--jam-solutions", type=int, default=100, help="solutions run for the jam count")
    parser.add_argument("--overlap-deg", type=float, default=CORNER_CUTTING_DEG)
    args = parser.parse_args()
    count, jam_count = (3, 5) if args.quick else (args.solutions, args.jam_solutions)
    elf, _ = build("ramps")
    moves_list = solutions(max(count, jam_count))
    result = {
        "overlap_deg": args.overlap_deg,
        "cube_tolerance_deg": CORNER_CUTTING_DEG,
        "steps_per_quarter": STEPS,
        "rate": RATE,
        "size": flash_and_ram(elf),
        "accel": {str(a): compare(moves_list[:count], a, args.overlap_deg) for a in ACCELS},
        "jams": jam_run(moves_list[:jam_count], args.overlap_deg),
    }
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
