"""The simavr harness's pin trace (``AvrBoard(trace=...)``): when each STEP edge came, placed on the host's clock.

The harness writes ``S <cycle> <axis> <forward>`` for every STEP edge
(firmware/sim/axes.c), so what the motors did is read from the pins, not
from what the firmware says. ``StepClock(board)`` pins the simulated cycle
counter (a harness SYNC) to ``time.monotonic()``: the harness keeps
simulated time at wall-clock pace, so a cycle maps to a host time to about
a millisecond. Benches and tests use it to time a stop from the call to
the last step.
"""

from __future__ import annotations

import os
import time
from typing import Protocol

F_CPU = 16_000_000  # the simulated ATmega2560's clock


class Synced(Protocol):
    def sync(self, timeout: float = 2.0) -> dict: ...


def step_cycles(trace: str | os.PathLike) -> list[int]:
    """The cycle of every STEP edge so far, in order."""
    with open(trace) as lines:
        return [int(line.split()[1]) for line in lines if line.startswith("S ")]


class StepClock:
    """A harness cycle and the host time it was read at: converts between the two."""

    def __init__(self, board: Synced):
        before = time.monotonic()
        self.cycle = board.sync()["cycle"]
        self.host = (before + time.monotonic()) / 2

    def host_time(self, cycle: int) -> float:
        return self.host + (cycle - self.cycle) / F_CPU

    def cycle_at(self, host: float) -> int:
        return round(self.cycle + (host - self.host) * F_CPU)


def motion_end(edges: list[int], cycle: int, gap_s: float = 0.05, under_way_s: float = 0.02) -> int | None:
    """The last STEP edge of the motion under way at ``cycle`` (it ends before the first ``gap_s`` without an
    edge); None when no motor had stepped within ``under_way_s`` before ``cycle``."""
    gap = gap_s * F_CPU
    last = max((edge for edge in edges if edge <= cycle), default=None)
    if last is None or cycle - last > under_way_s * F_CPU:
        return None
    for edge in (edge for edge in edges if edge > cycle):
        if edge - last > gap:
            break
        last = edge
    return last


def motion_spans(edges: list[int], gap_s: float = 0.2) -> list[float]:
    """How long each motion took, first to last STEP edge (seconds): motions are apart by more than ``gap_s``
    without an edge."""
    spans: list[float] = []
    first = before = edges[0] if edges else 0
    for edge in edges:
        if not spans or edge - before > gap_s * F_CPU:
            first = edge
            spans.append(0.0)
        spans[-1] = (edge - first) / F_CPU
        before = edge
    return spans
