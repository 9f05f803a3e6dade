"""Seeded stress of flip/spin dry runs through a noisy line: does any run end unsolved? Prints one JSON object.

    python bench/flipspin_stress.py [--quick] [--runs N] [--controller maestro|gpio|pca9685] [--no-crc]

Each run builds the daemon from a quick flip/spin config (``tests/robot_doubles.FLIP_SPIN``'s times),
injects seeded line faults (drop, corrupt, duplicate, noise; a Maestro only: the PWM controllers have
no line) with the Maestro's CRC on, and does one dry run of a seeded scramble, alternating 2x2x2 and
3x3x3. A run that is not done and solved is listed with its seeds, error and final state, so it can be
run again on its own with ``--first K --runs 1``.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:] = [str(REPO)] + [p for p in sys.path if Path(p or ".").resolve() != REPO / "bench"]

from robot import assemble  # noqa: E402

RIG = """
[rig]
kind = "flip-spin"
flip_s = 0.04
spin_quarter_s = 0.02
spin_half_s = 0.03
turn_quarter_s = 0.02
turn_half_s = 0.03
hold_s = 0.01
release_s = 0.01
settle_s = 0.0
"""
SERVOS = {
    "maestro": '[controller]\nkind = "maestro"\n[controller.maestro]\nservo_us_per_ms = 40.0\n',
    "gpio": '[controller]\nkind = "gpio"\n[controller.gpio]\nservo_us_per_ms = 40.0\n',
    "pca9685": '[controller]\nkind = "pca9685"\n[controller.pca9685]\nservo_us_per_ms = 40.0\n',
}
FAULTS = "[sim.faults]\ndrop = 0.03\ncorrupt = 0.03\nduplicate = 0.02\nnoise = 0.02\nseed = {seed}\n"


def config(folder: Path, controller: str, crc: bool, seed: int) -> Path:
    rig = "" if controller != "maestro" else RIG  # the PWM controllers derive the rig's times from their servos
    text = f'[robotd]\ndata_dir = "{folder / "data"}"\n[solver]\nbudget_s = 20\n{rig}'
    text += '[rig]\nkind = "flip-spin"\n' if controller != "maestro" else ""
    text += SERVOS[controller] + ("crc = true\n" if crc and controller == "maestro" else "")
    if controller == "maestro":
        text += FAULTS.format(seed=seed)
    path = folder / "robotd.toml"
    path.write_text(text)
    return path


def one_run(controller: str, crc: bool, seed: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        built = assemble.build(config(Path(folder), controller, crc, seed), sim=True, web=False)
        try:
            summary = built.once(puzzle=2 if seed % 2 == 0 else 3, seed=seed, moves=None if seed % 2 == 0 else 12)
        finally:
            built.close()
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 runs")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--first", type=int, default=0, help="seed of the first run")
    parser.add_argument("--controller", choices=tuple(SERVOS), default="maestro")
    parser.add_argument("--no-crc", action="store_true")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    runs = args.runs or (10 if args.quick else 100)
    began = time.perf_counter()
    failed, wall, counters = [], [], {"resends": 0, "retries": 0, "serial_errors": 0}
    for seed in range(args.first, args.first + runs):
        summary = one_run(args.controller, not args.no_crc, seed)
        wall.append(summary.get("wall_s") or 0.0)
        link = summary.get("link") or {}
        for key in counters:
            counters[key] += int(link.get(key, 0) or 0)
        if not summary.get("solved"):
            failed.append(
                {
                    "seed": seed,
                    "puzzle": summary.get("puzzle"),
                    "outcome": summary.get("outcome"),
                    "error": summary.get("error"),
                    "final_state": summary.get("final_state"),
                }
            )
    report = {
        "bench": "flipspin_stress",
        "controller": args.controller,
        "crc": not args.no_crc and args.controller == "maestro",
        "runs": runs,
        "first_seed": args.first,
        "unsolved": len(failed),
        "failed": failed,
        "link_counters": counters,
        "run_wall_s": {"median": round(statistics.median(wall), 3), "max": round(max(wall), 3)},
        "wall_s": round(time.perf_counter() - began, 3),
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
