"""E-stop latency in simulated dry runs, for bench/robotd.py and bench/controllers.py.

``stop_latency(config, repeats)`` assembles robotd in simulation from the
config that ``config(directory)`` writes (motors slow enough to be caught
mid-execution), starts 2x2x2 runs and stops each 0.3 s into execution. It
measures the time from the stop request to the simulated controller acting
on its emergency stop (its ``estop_times()``: M112, real-time ``!`` + reset,
all servo channels off, ...): median and max.
"""

from __future__ import annotations

import contextlib
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from robot import assemble


def stop_latency(
    config: Callable[[Path], Path],
    repeats: int,
    *,
    rig: str | None = None,
    stop: Callable[[object], object] = lambda daemon: daemon.stop(),
    around: Callable[[object], contextlib.AbstractContextManager] = lambda daemon: contextlib.nullcontext(),
) -> dict:
    """``repeats`` runs, each stopped mid-execution by ``stop(daemon)``, each inside ``around(daemon)`` (e.g.
    robotd's signal handlers)."""
    delays = []
    with tempfile.TemporaryDirectory() as tmp:
        built = assemble.build(config(Path(tmp)), sim=True, web=False, rig=rig)
        try:
            for k in range(repeats):
                with around(built.daemon):
                    built.daemon.start_run(puzzle=2, seed=50 + k)
                    while built.daemon.runner.phase != "executing":
                        time.sleep(0.001)
                    time.sleep(0.3)
                    asked = time.monotonic()
                    stop(built.daemon)
                    built.daemon.runner.wait(10)
                delays.append(handled_at(built.simulation.firmware, asked) - asked)
        finally:
            built.close()
    return {
        "repeats": repeats,
        "estop_handled_ms_median": round(statistics.median(delays) * 1000, 2),
        "estop_handled_ms_max": round(max(delays) * 1000, 2),
    }


def handled_at(device, asked: float, timeout_s: float = 2.0) -> float:
    """When the simulated controller acted on the emergency stop sent after ``asked``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        times = [t for t in device.estop_times() if t >= asked]
        if times:
            return times[0]
        time.sleep(0.001)
    raise RuntimeError("the simulated controller never acted on the emergency stop")
