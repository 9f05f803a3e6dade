"""What every experiment's report shares: the machine, timings as medians, plots as PNGs.

matplotlib is imported only when a plot is drawn (the ``[research]`` extra);
without it an experiment still prints its figures and says the plot was
skipped.
"""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Any

IMAGE_DIR = Path(__file__).resolve().parents[2] / "docs" / "img"


def machine() -> dict:
    """CPU model, cores, memory and the load when the experiment started."""
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        memory_kb = int(Path("/proc/meminfo").read_text().split()[1])
    except OSError:
        memory_kb = 0
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "memory_gb": round(memory_kb / 2**20, 1),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
    }


def timed(fn: Callable[..., Any], *args: Any, repeats: int = 1) -> tuple[Any, float, list[float]]:
    """(last result, median seconds, every run's seconds) of calling ``fn(*args)`` ``repeats`` times."""
    runs, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn(*args)
        runs.append(time.perf_counter() - start)
    return result, statistics.median(runs), [round(s, 3) for s in runs]


def save_plot(
    name: str,
    draw: Callable[[Any], None],
    size: tuple[float, float] = (10, 4),
    panels: int = 1,
    out: Path | None = None,
) -> str | None:
    """Draw with ``draw(axes)`` and save ``out`` (default ``docs/img/research-<name>.png``); None when
    matplotlib is missing."""
    try:  # imported by name: the robot's environment (and its type check) has no matplotlib
        import_module("matplotlib").use("Agg")
        plt = import_module("matplotlib.pyplot")
    except ImportError:
        return None
    figure, axes = plt.subplots(1, panels, figsize=size, layout="constrained")
    draw(axes)
    path = out or IMAGE_DIR / f"research-{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return str(path)
