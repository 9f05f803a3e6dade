"""Dry runs with line faults through every simulated motor controller; prints one JSON object.

    python bench/controllers.py [--runs N] [--stops K] [--controllers robotd,marlin,grblhal,maestro]

For each controller (``maestro`` drives the flip/spin rig, the others the
six-motor rig), on its simulator over a pseudo-terminal:

- ``dry_runs``: N complete runs, alternating 2x2x2 and 3x3x3, each with
  bytes dropped, corrupted, duplicated and noise injected in both
  directions (seeded per run); how many ended with the virtual cube solved,
  and how many ended otherwise (a lost or doubled turn leaves the cube
  unsolved and the verifying re-scan says so);
- ``stop``: from ``stop()`` to the simulated controller acting on its
  emergency stop (M112, real-time ``!`` + reset, all servo channels off),
  mid-execution: median and max (bench/estop.py).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

# run as a script, this folder comes first on sys.path, and bench/serial.py would shadow pyserial
sys.path[0] = str(Path(__file__).resolve().parent.parent)

from bench.estop import stop_latency  # noqa: E402
from robot import assemble  # noqa: E402

CONTROLLERS = ("robotd", "marlin", "grblhal", "maestro")
FAULTS = "drop = 0.02\ncorrupt = 0.02\nduplicate = 0.01\nnoise = 0.01\nseed = {seed}\n"
SIX_AXIS = "[rig]\nquarter_turn_s = {q}\nhalf_turn_s = {h}\nsettle_s = 0.0\n"
# servos ten times quicker than the defaults (the figures here are about faults, not speed); the Maestro's
# CRC on, as docs/hardware.md recommends: without it a damaged byte can move a servo before the host sees it
FLIP_SPIN = (
    '[rig]\nkind = "flip-spin"\nflip_s = 0.07\nspin_quarter_s = 0.03\nspin_half_s = 0.05\n'
    "turn_quarter_s = 0.04\nturn_half_s = 0.065\nhold_s = 0.02\nrelease_s = 0.02\nsettle_s = 0.005\n"
)
MAESTRO = "[controller.maestro]\ncrc = true\nservo_us_per_ms = 20.0\n"


def rig_of(controller: str) -> str:
    return "flip-spin" if controller == "maestro" else "six-axis"


def write_config(directory: Path, controller: str, faults: str = "", slow: bool = False) -> Path:
    rig = FLIP_SPIN if controller == "maestro" else SIX_AXIS.format(q=0.2 if slow else 0.02, h=0.3 if slow else 0.03)
    text = f'[robotd]\ndata_dir = "{directory / "data"}"\n{rig}[controller]\nkind = "{controller}"\n'
    if controller == "maestro":
        text += MAESTRO
    if faults:
        text += f"[sim.faults]\n{faults}"
    path = directory / "robotd.toml"
    path.write_text(text)
    return path


def dry_runs(controller: str, count: int) -> dict:
    summaries = []
    for k in range(count):
        with tempfile.TemporaryDirectory() as tmp:
            config = write_config(Path(tmp), controller, FAULTS.format(seed=100 + k))
            built = assemble.build(config, sim=True, web=False, rig=rig_of(controller))
            try:
                summaries.append(built.once(puzzle=2 if k % 2 == 0 else 3, seed=2000 + k))
            finally:
                built.close()
    solved = [s for s in summaries if s["solved"]]
    overhead = [s["host_overhead_s"] for s in solved if s["host_overhead_s"] is not None]
    return {
        "runs": count,
        "solved": len(solved),
        "not_solved": count - len(solved),
        "errors": sorted({(s["error"] or "").split(";")[0] for s in summaries if not s["solved"]}),
        "motor_s_median": round(statistics.median(s["estimated_s"] or 0 for s in solved), 3) if solved else None,
        "host_overhead_s_median": round(statistics.median(overhead), 3) if overhead else None,
        "link_counters": _sum_counters(s["link"] for s in summaries),
    }


def _sum_counters(links) -> dict:
    total: dict[str, int] = {}
    for link in links:
        for key, value in link.items():
            if isinstance(value, (int, float)):
                total[key] = total.get(key, 0) + value
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--stops", type=int, default=10)
    parser.add_argument("--controllers", default=",".join(CONTROLLERS))
    args = parser.parse_args()
    started = time.perf_counter()
    result = {}
    for controller in args.controllers.split(","):
        begun = time.perf_counter()
        result[controller] = {
            "rig": rig_of(controller),
            "dry_runs": dry_runs(controller, args.runs),
            "stop": stop_latency(
                partial(write_config, controller=controller, slow=True), args.stops, rig=rig_of(controller)
            ),
            "seconds": round(time.perf_counter() - begun, 1),
        }
    result["faults"] = FAULTS.format(seed="100+run").replace("\n", "; ").strip("; ")
    result["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
