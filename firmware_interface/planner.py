"""The motion planner of the simulated G-code boards (Marlin, grbl): moves speed up, cruise and brake.

Each ``G1`` is a block. It moves along its path at the feed rate, no axis
faster than its top speed (Marlin's ``M203``, grbl's ``$110``...), and
speeds up and brakes at its acceleration, no axis faster than its own
(Marlin's ``M201`` and travel acceleration ``M204 T``: the stock builds
have no extruder; grbl's ``$120``...). Blocks along one line in one
direction run on at full speed from one to the next; the lookahead replans
every block as more arrive (Marlin those not yet begun, grbl the one
running too), and the last one ends at rest. Measured on the stock Marlin
binary (shared/stock-firmware: 400 steps per 90 units, 500 units/s, 5000
units/s²), first to last STEP edge:

* a quarter turn (``G1 X90`` at F30000) 0.252 s, as one line or as three
  of 30 units (0.28 s as a trapezoid from rest to rest). Marlin starts and
  ends a move at a step rate above zero: a move took 16 to 19 ms less,
  from sending to M400's ok, than a trapezoid from rest (at F9000 to
  F30000, one axis or two), as one that starts and ends at 222 steps/s
  along its path does (Marlin's machine.py: ``REST_STEPS_S``);
* two quarter turns of one axis one way, 0.433 s (one trapezoid of 180
  units: 0.46 s); a quarter turn of another axis, or of the same axis back,
  after one: 0.512 s, two moves from rest to rest (its junction deviation,
  0.013 units, allows some 12 units/s between square moves: taken as rest);
* two axes together by 90 each, 0.323 s (0.355 s along the 127-unit path).

The stock grbl binary (the same units, 450 units/s, 5000 units/s² per axis)
starts and ends at rest: 0.286 s for ``G1 X90 F27000`` (0.29 s as a
trapezoid), the same as three lines of 30, 0.487 s for two of 90 one way
(0.49 s), 0.568 and 0.577 s for one then another axis or back (0.58 s),
0.341 s for two axes together (0.346 s: each axis's acceleration limits
the path's by its share).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from .turn_speed import Trapezoid

SAME_LINE = 0.9999  # blocks whose directions' cosine is above this run on at full speed from one to the next


@dataclass
class Block:
    """A planned move: each axis by its delta (units) along a path of ``length``; it runs from ``start`` to
    ``end``, entering at ``entry`` and leaving at ``exit`` units/s (set by ``replan``)."""

    deltas: dict[str, float]
    length: float
    speed: float  # the cruise speed along the path, units/s
    acceleration: float  # along the path, units/s²
    rest: float = 0.0  # units/s: what "at rest" is at its start and end (Marlin's: above zero)
    start: float | None = None  # None: not yet timed
    end: float = 0.0
    entry: float = 0.0
    exit: float = 0.0

    def profile(self) -> Trapezoid:
        entry, leave = (min(max(v, self.rest), self.speed) for v in (self.entry, self.exit))
        return Trapezoid(self.length, self.speed, self.acceleration, entry, leave)

    def share_at(self, at: float) -> float:
        """How much of its deltas it has moved by ``at`` (0 to 1)."""
        if self.start is None or self.length <= 0:
            return 0.0
        return min(1.0, self.profile().distance_at(at - self.start) / self.length)

    def junction_from(self, before: Block) -> float:
        """The most speed it can take over from ``before``: all of it along one line, none round a corner."""
        axes = before.deltas.keys() | self.deltas.keys()
        cosine = sum(before.deltas.get(a, 0.0) * self.deltas.get(a, 0.0) for a in axes) / before.length / self.length
        return min(before.speed, self.speed) if cosine > SAME_LINE else 0.0


def planned_block(
    deltas: dict[str, float],
    feed_s: float,
    top: dict[str, float],
    accelerations: dict[str, float],
    path_acceleration: float = math.inf,
    rest_speed: float = 0.0,
) -> Block:
    """The block of a ``G1`` by ``deltas`` at ``feed_s`` units/s, no axis faster than its ``top`` speed nor
    speeding up faster than its ``accelerations`` (units/s, units/s²), the path no faster than
    ``path_acceleration``; ``rest_speed``: what "at rest" is at its ends (units/s)."""
    length = math.hypot(*deltas.values())
    speed, acceleration = feed_s, path_acceleration
    for axis, delta in deltas.items():
        scale = length / abs(delta)  # an axis moves |delta| / length of the path's speed and acceleration
        speed = min(speed, top[axis] * scale)
        acceleration = min(acceleration, accelerations[axis] * scale)
    return Block(deltas, length, max(speed, 1e-6), acceleration, rest_speed)


def steady_block(deltas: dict[str, float], seconds: float) -> Block:
    """A block that takes ``seconds`` at one speed (grbl's rapids and inverse-time moves here)."""
    length = math.hypot(*deltas.values())
    return Block(deltas, length, length / max(seconds, 1e-9), math.inf)


def replan(blocks: Iterable[Block], begun: int, first_start: float) -> None:
    """Speeds and times of every block after the first ``begun`` (which keep theirs): the fastest each can go
    and still stop at the last. The first of them enters as fast as it did (or the block before it leaves);
    the first block starts at ``first_start``."""
    blocks = list(blocks)
    free = blocks[begun:]
    if not free:
        return
    before = blocks[begun - 1] if begun else None
    free[-1].exit = 0.0
    for i in range(len(free) - 1, -1, -1):  # backwards: each as fast as braking to the next allows
        block = free[i]
        most = free[i].junction_from(free[i - 1]) if i else (before.exit if before else block.entry)
        block.entry = min(most, math.sqrt(block.exit**2 + 2 * block.acceleration * block.length))
        if i:
            free[i - 1].exit = block.entry
    _time(free, before, first_start)


def _time(free: Iterable[Block], before: Block | None, first_start: float) -> None:
    """Forwards: each no faster than speeding up from the one before allows, then its start and end."""
    for block in free:
        if before is not None:
            block.entry = min(block.entry, before.exit)
        block.exit = min(block.exit, math.sqrt(block.entry**2 + 2 * block.acceleration * block.length))
        block.start = before.end if before is not None else first_start
        block.end = block.start + block.profile().duration
        before = block
