"""What the host queues for a grblHAL board (``Job``) and how the reports judge it (``Referee``).

grbl's replies carry no id, so a move is proven by the board's position:
done once its ``ok`` came and a status report asked for after that ok says
Idle with every axis within ``tolerance`` of its target. When the ok and
Idle come so close together that no ``Run`` was seen, a second such report
confirms it (a damaged report could otherwise pass for the target).

Off target while Idle for ``settle`` (long enough for a line still on its
way to show): the line was lost or garbled, and the move is sent again. It
is absolute, so this cannot turn a face twice; a face that a garbled line
turned by mistake is put back first, alone or with its opposite face, so
that two adjacent faces never move together. A face beside a turning one
that moved too cannot be put back safely: two Idle reports in a row that
agree on it (one could be garbled) end the move with a fault. A move that runs far longer
than its feed rate allows (a garbled F) is stopped with a feed hold and,
once held, a soft reset (which grbl takes without an alarm after a
completed hold); once its banner is in, ``$X`` covers a board that locks
anyway, then the move is sent again from where the face stopped.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field

from solver.puzzles.cube.geometry import OPPOSITE

from ..errors import ConfigError, DeviceFault
from ..motion import Motion
from .dialect import FEED_HOLD, UNLOCK_LINE, Status, move_line


@dataclass
class Job:
    kind: str  # move, line, unlock, sync, home, query, mark, reset
    motion: Motion | None = None
    future: Future | None = None
    text: str = ""  # line and unlock: the line
    optional: bool = False  # line: an error answers it too (a question not every build answers)
    turns: tuple[tuple[str, int], ...] = ()  # move: (axis, quarter turns)
    feed: float = 0.0
    goal: dict[str, float] = field(default_factory=dict)  # move: every axis's target once done
    expect_s: float = 0.0  # move: how long it takes at its feed rate
    line: str | None = None  # what was sent last and awaits ok or error
    sent_at: float = 0.0
    ok_at: float | None = None
    asked: bool = False  # a status query went out since the ok (or the start)
    moved: bool = False  # a Run or Hold report since the ok
    matched: bool = False  # one Idle report on target already
    crossed: tuple[str, str] | None = None  # faces beside the turning ones that the last Idle report moved

    def result(self, **more: object) -> dict:
        """What a job with a motion (move, mark) resolves it with: its motion id, command and ``more``."""
        if self.motion is None:
            raise RuntimeError(f"a {self.kind} job has no motion to resolve")
        return {"mid": self.motion.mid, "command": self.motion.command, **more}

    off_since: float | None = None  # idle away from the targets since
    attempts: int = 0
    refused: set = field(default_factory=set)  # error codes a line of this job drew
    cancel: str | None = None  # stopping a runaway move: hold, reset (awaiting the banner), then unlock
    cancel_at: float = 0.0

    def describe(self) -> str:
        return self.motion.command if self.motion is not None else (self.text or self.kind)


def plan_entry(entry, axes: dict[str, str], port: str) -> list[tuple[str, int]]:
    """A ``plan`` entry checked: ``(face, q)`` or a pair of opposite faces ``((f1, q1), (f2, q2))``."""
    pair = isinstance(entry, (tuple, list)) and len(entry) == 2 and isinstance(entry[0], (tuple, list))
    turns = [tuple(t) for t in entry] if pair else [tuple(entry)]
    for turn in turns:
        if (
            len(turn) != 2
            or turn[0] not in axes
            or isinstance(turn[1], bool)
            or not isinstance(turn[1], int)
            or not turn[1]
            or abs(turn[1]) > 2
        ):
            raise ConfigError(f"plan entry {entry!r}: give (face, quarter turns ±1/±2) or a pair of them", port=port)
    if pair and OPPOSITE.get(turns[0][0]) != turns[1][0]:
        raise ConfigError(f"{turns[0][0]} and {turns[1][0]} are not opposite faces", port=port)
    return turns


class Referee:
    """Judges the head job of a ``GrblSession`` from the status reports asked for since its ok."""

    def __init__(self, session):
        self.session = session

    def report(self, job: Job, status: Status, now: float) -> None:
        position = self.session.machine(status)
        if job.kind == "query":
            if position is not None:
                self.done(job, position, now)
        elif job.kind == "unlock" and status.state == "Alarm":
            self.wait_or_retry(job, "grblHAL stayed in alarm after $X", now)
        elif status.state != "Idle":
            job.moved |= status.state in ("Run", "Hold", "Jog", "Home")
            job.off_since = job.crossed = None
            if job.kind == "move":
                self.running(job, status, now)
        elif job.kind == "unlock":
            self.done(job, None, now)
        elif position is None:
            if job.kind == "sync" and any(a not in self.session.board_axes() for a in self.session.face_of):
                self.done(job, None, now)  # the board lacks axes: connect() says which
        elif job.kind == "move":
            self.idle(job, position, now)
        else:
            self.session.confirmed = dict(position)
            if job.kind == "home":
                self.session.origin = dict(position)
            self.done(job, position, now)

    def done(self, job: Job, position: dict[str, float] | None, now: float) -> None:
        motion = job.motion
        self.session.finish(job, position if motion is None else {"mid": motion.mid, "command": motion.command})
        self.session.start(now)

    def wait_or_retry(self, job: Job, why: str, now: float, text: str | None = None) -> None:
        """The board is idle but not as the job wants it: give a late line ``settle`` to show, then resend."""
        job.matched = False
        if job.off_since is None:
            job.off_since = now
        elif now - job.off_since >= self.session.timing.settle:
            self.session.again(job, why, now, text)

    def begin(self, job: Job, now: float) -> None:
        """A move's first line: the targets from the confirmed positions."""
        session = self.session
        job.goal = dict(session.confirmed)
        for axis, q in job.turns:
            job.goal[axis] = session.confirmed[axis] + q * session.upq
        job.expect_s = max(abs(q) for _, q in job.turns) * session.upq / job.feed * 60.0
        moving = {axis: job.goal[axis] for axis, _ in job.turns}
        session.transmit(job, move_line(moving, session.confirmed, job.feed), now)

    def off(self, position: dict[str, float], goal: dict[str, float]) -> list[str]:
        return [axis for axis, value in goal.items() if abs(position[axis] - value) > self.session.tolerance]

    def idle(self, job: Job, position: dict[str, float], now: float) -> None:
        """A move's Idle report: done, wait a little, or send again."""
        wrong = self.off(position, job.goal)
        seen_before, job.crossed = job.crossed, None
        if not wrong:
            if job.moved or job.matched:
                self.session.confirmed = dict(job.goal)
                self.session.finish(job, job.result(line=job.line))
                return self.session.start(now)
            job.matched = True
            return
        where = ", ".join(f"{self.session.face_of[a]} at {position[a]:g} (not {job.goal[a]:g})" for a in wrong)
        crossed = self.crossed(job, position, wrong)
        if crossed and (crossed, where) != seen_before:
            job.crossed = (crossed, where)  # a report can be garbled too: the next one must agree
            return
        if crossed:
            return self.session.fail(
                DeviceFault(
                    f"{crossed} turned during {job.describe()} (a garbled line: grbl lines have no checksum): two "
                    f"adjacent faces moving together jam or scramble the cube; check it, then start again",
                    code="STRAY",
                    port=self.session.port,
                ),
                dead=False,
            )
        self.wait_or_retry(job, f"the board stopped with {where}", now, self.correction(job, position))

    def crossed(self, job: Job, position: dict[str, float], wrong: list[str]) -> str | None:
        """A face next to a turning one that moved too: what no later line can undo."""
        session = self.session
        own = {session.face_of[axis] for axis, _ in job.turns}
        turned = any(abs(position[axis] - session.confirmed[axis]) > session.tolerance for axis, _ in job.turns)
        beside = [
            session.face_of[a]
            for a in wrong
            if session.face_of[a] not in own and OPPOSITE[session.face_of[a]] not in own
        ]
        return ", ".join(beside) if turned and beside else None

    def correction(self, job: Job, position: dict[str, float]) -> str:
        """The line that brings the board nearer the goal: stray faces back first, then the move itself."""
        own = [axis for axis, _ in job.turns]
        stray = [axis for axis in self.off(position, job.goal) if axis not in own]
        if not stray:
            return move_line({axis: job.goal[axis] for axis in own}, position, job.feed)
        opposite = OPPOSITE[self.session.face_of[stray[0]]]
        group = [stray[0], *(a for a in stray if self.session.face_of[a] == opposite)]
        return move_line({axis: job.goal[axis] for axis in group}, position, job.feed)

    def unlock(self, job: Job, now: float) -> None:
        """A held runaway move after its reset's banner (or too long without it): ``$X``, then the move again."""
        job.cancel = "unlock"
        self.session.transmit(job, UNLOCK_LINE, now)

    def running(self, job: Job, status: Status, now: float) -> None:
        """A report while the board moves or holds: watch for a runaway and stop it."""
        session = self.session
        if job.cancel == "hold":
            if status.label == "Hold:0":
                session.resets.soft_reset(now)  # a completed hold: no alarm, the position is kept
                job.cancel, job.cancel_at = "reset", now  # $X once the banner is in (resets.py)
            elif status.state == "Run" and now - job.cancel_at > session.timing.estop_retry:
                job.cancel_at = now
                session.send(FEED_HOLD)
        elif (
            job.cancel is None
            and status.state == "Run"
            and job.ok_at is not None
            and now - job.ok_at > 2 * job.expect_s + session.timing.overrun
        ):
            session.counters["runaways"] += 1
            job.cancel, job.cancel_at = "hold", now
            session.send(FEED_HOLD)
