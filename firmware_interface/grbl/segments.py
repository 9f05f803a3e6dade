"""The simulated grbl board's motion on one clock: its planner blocks and dwells, where the motors are, holds.

Each ``G1`` is a block (planner.py: it speeds up, cruises and brakes), each
``G4`` a dwell that moves nothing; they run one after the other, and grbl
replans every block as more arrive, the one running too. Between two
blocks' ends the motors are where the running one's profile has taken
them: a status report tells that live position, and a soft reset or an
alarm in motion leaves them there.

A feed hold (``!``), as the stock grbl-Mega-5X binary does it under simavr
(shared/stock-firmware, 5000 units/s²): the motion goes on as planned for
0.09 s more (``hold_lead_s``: the steps grbl had already prepared, its step
segment buffer), then brakes at the running block's acceleration to rest,
into the next block where the two run on along one line. Measured: at 150
units/s a hold ran on 16.0 to 16.2 units (13.5 at speed, 2.25 braking); at
450 units/s it held speed about 0.1 s and then braked for some 20 units
(450²/2/5000); sent while speeding up, it went on speeding up first. What
the hold did not cover stays queued, from rest, until a cycle start
(``~``).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, replace

from ..planner import Block, replan

NOT_YET = math.inf  # the time of a segment that is held, or not yet timed


@dataclass
class Segment:
    """A planner block (or, with ``block`` None, a dwell of ``dwell`` seconds) from ``start`` to ``end``
    (machine positions), running from ``begins`` to ``ends`` (the board's clock)."""

    start: dict[str, float]
    end: dict[str, float]
    block: Block | None
    feed: float
    dwell: float = 0.0
    begins: float = NOT_YET
    ends: float = NOT_YET
    whole: bool = True  # False: a part of a move that a stop or a hold cut short (the rest, if any, comes later)

    def along(self, distance: float) -> dict[str, float]:
        """The position ``distance`` units along its path."""
        if self.block is None or self.block.length <= 0:
            return dict(self.start)
        share = min(max(distance / self.block.length, 0.0), 1.0)
        return {axis: start + (self.end[axis] - start) * share for axis, start in self.start.items()}

    def at(self, now: float) -> dict[str, float]:
        """Where the motors are at ``now`` (its start before it begins, its end once it is over)."""
        if self.block is None or now <= self.begins:
            return dict(self.start) if self.block is not None else dict(self.end)
        return self.along(self.block.profile().distance_at(now - self.begins))

    def cut(self, start: float, stop: float, block: Block) -> Segment:
        """The part of it from ``start`` to ``stop`` units along its path, moved as ``block`` moves."""
        return replace(self, start=self.along(start), end=self.along(stop), block=block)


def _part(segment: Segment, start: float, stop: float, entry: float, leave: float) -> Segment:
    """The part from ``start`` to ``stop`` units along ``segment``, entered at ``entry`` and left at ``leave``
    units/s (the fastest profile between those speeds is the one the whole block had over that part)."""
    original = segment.block
    assert original is not None
    ends = segment.along(stop)
    deltas = {axis: ends[axis] - begin for axis, begin in segment.along(start).items() if ends[axis] != begin}
    block = Block(deltas, stop - start, original.speed, original.acceleration, original.rest, entry=entry, exit=leave)
    return segment.cut(start, stop, block)


class SegmentQueue:
    """The segments queued on the board, on its clock; ``hold_lead_s``: how long a feed hold runs on as planned
    before it brakes."""

    def __init__(self, hold_lead_s: float = 0.0):
        self.hold_lead_s = hold_lead_s
        self.segments: deque[Segment] = deque()
        self.held_from: int | None = None  # a hold: the segments from this index wait for a cycle start

    def __len__(self) -> int:
        return len(self.segments)

    def __getitem__(self, index: int) -> Segment:
        return self.segments[index]

    @property
    def moving(self) -> bool:
        """Segments to run, other than those a hold keeps waiting."""
        return bool(self.segments) and self.held_from != 0

    def add(self, segment: Segment, now: float) -> None:
        """Queue a segment; grbl replans every block (unless a hold keeps them waiting: timed at the resume)."""
        self.segments.append(segment)
        if self.held_from is None:
            self._time(0, now)

    def clear(self) -> None:
        self.segments.clear()
        self.held_from = None

    def done(self, now: float) -> Iterator[Segment]:
        """Take out the segments that are over by ``now``, first to last."""
        while self.segments and self.held_from != 0 and self.segments[0].ends <= now:
            if self.held_from is not None:
                self.held_from -= 1
            yield self.segments.popleft()

    def position(self, mpos: dict[str, float], now: float) -> dict[str, float]:
        """Where the motors are at ``now``: ``mpos`` (the end of the last segment done) moved along the running
        one."""
        head = self.segments[0] if self.moving else None
        if head is None or head.block is None or now <= head.begins:
            return dict(mpos)
        return head.at(now)

    def cut(self, now: float) -> Segment | None:
        """Stop at ``now`` (a soft reset, an alarm): the part of the running segment covered so far (None: none
        was running), and nothing queued any more."""
        head = self.segments[0] if self.moving else None
        self.clear()
        if head is None or head.block is None or now <= head.begins:
            return None
        return replace(head, end=head.at(now), ends=now, whole=False)

    # ------------------------------------------------------------ feed hold

    def hold(self, now: float) -> float:
        """A feed hold at ``now`` (not held yet); returns when the motors come to rest."""
        brake_at = now + self.hold_lead_s
        index = next((i for i, s in enumerate(self.segments) if s.ends > brake_at), None)
        if index is None:  # all over by then: at rest as planned
            self.held_from = len(self.segments)
            return max([now, *(s.ends for s in self.segments)])
        running = self.segments[index]
        if running.block is None or brake_at <= running.begins:  # a dwell, or a segment not yet begun
            self.held_from = index
            return max(running.begins, now)
        return self._brake(index, brake_at)

    def _brake(self, index: int, brake_at: float) -> float:
        """Replace the segments from ``index`` on by: the running one as planned up to ``brake_at``, braking from
        there to rest, and (waiting) what braking did not cover; returns when the braking ends."""
        running = self.segments[index]
        block = running.block
        assert block is not None
        profile = block.profile()
        covered = profile.distance_at(brake_at - running.begins)
        speed = profile.speed_at(brake_at - running.begins)
        braking = speed * speed / (2 * block.acceleration) if math.isfinite(block.acceleration) else 0.0
        last, stop = self._braking_end(index, covered, braking)
        parts = []
        if covered > 0:
            parts.append(replace(_part(running, 0.0, covered, block.entry, speed), ends=brake_at, whole=False))
        rest_at = brake_at + (speed / block.acceleration if braking else 0.0)
        braked = self._braked(index, covered, last, stop, speed, block.acceleration, brake_at, rest_at)
        parts += [braked] if braked is not None else []
        final = self.segments[last]
        assert final.block is not None
        waiting = [] if stop >= final.block.length else [_part(final, stop, final.block.length, 0.0, 0.0)]
        after = list(self.segments)[last + 1 :]
        kept = list(self.segments)[:index]
        self.segments = deque(kept + parts + waiting + after)
        self.held_from = len(kept) + len(parts)
        return rest_at

    def _braking_end(self, index: int, covered: float, braking: float) -> tuple[int, float]:
        """Where braking ``braking`` units from ``covered`` along segment ``index`` ends: a segment and how far
        along it; it runs on into the next block only where the two run on at speed."""
        last, distance = index, covered + braking
        while True:
            block = self.segments[last].block
            assert block is not None
            following = self.segments[last + 1] if last + 1 < len(self.segments) else None
            if distance <= block.length or block.exit <= 0 or following is None or following.block is None:
                return last, min(distance, block.length)
            distance -= block.length
            last += 1

    def _braked(self, index, covered, last, stop, speed, acceleration, brake_at, rest_at) -> Segment | None:
        """The braking as one segment from ``covered`` along segment ``index`` to ``stop`` along ``last``."""
        first, final = self.segments[index], self.segments[last]
        start, end = first.along(covered), final.along(stop)
        deltas = {axis: end[axis] - value for axis, value in start.items() if end[axis] != value}
        length = math.hypot(*deltas.values())
        if length <= 0:
            return None
        block = Block(deltas, length, max(speed, 1e-6), acceleration, entry=speed, exit=0.0)
        return Segment(start, end, block, first.feed, begins=brake_at, ends=rest_at, whole=False)

    def resume(self, now: float) -> None:
        """A cycle start: what the hold kept waiting runs from rest."""
        if self.held_from is None:
            return
        waiting = list(self.segments)[self.held_from :]
        self.held_from = None
        for segment in waiting:
            segment.begins = segment.ends = NOT_YET
        if waiting and waiting[0].block is not None:
            waiting[0].block.entry = 0.0
        self._time(len(self.segments) - len(waiting), now)

    def _time(self, first: int, now: float) -> None:
        """Replan and time the segments from ``first`` on: runs of blocks between dwells (a dwell begins and
        ends at rest), the first starting when the one running began (or ``now``)."""
        segments = list(self.segments)[first:]
        clock = segments[0].begins if segments and segments[0].begins <= now else now
        run: list[Segment] = []
        for segment in [*segments, None]:
            if segment is not None and segment.block is not None:
                run.append(segment)
                continue
            if run:
                clock = _time_run(run, clock)
                run = []
            if segment is not None:
                segment.begins, segment.ends = clock, clock + segment.dwell
                clock = segment.ends


def _time_run(run: list[Segment], clock: float) -> float:
    """Replan a run of blocks from ``clock``; returns when it ends."""
    blocks = [segment.block for segment in run if segment.block is not None]
    replan(blocks, 0, clock)
    for segment, block in zip(run, blocks):
        segment.begins, segment.ends = block.start if block.start is not None else clock, block.end
    return run[-1].ends
