"""The host's half of the grblHAL dialect as a state machine: jobs run one at a time, each checked on the board.

``GrblSession`` does no I/O and keeps no clock: ``GrblLink`` calls it under
its lock with the time and a ``write`` function; future results are queued
on ``after`` and set once the lock is released (as ``transport.Transport``
does for robotd's own protocol).

Jobs (jobs.py, judged by its ``Referee``): ``move``; ``line``, done
on its ``ok`` (``$I``, the modal setup); ``unlock`` (``$X``), done once a
report after its ok is not Alarm; ``sync`` and ``home``, no line: the
machine position of an Idle report becomes the targets (``home`` also makes
it the origin); ``query``, the next report; ``mark``, nothing to send,
done when reached (enable, disable).

Recovery: an ``error:N`` that a garbled line can draw, or no reply for
``probe_after``, sends the line again, at most ``retries`` times in all,
then a ``DeviceFault``. Any other ``error:N`` is a fault once the same line
drew it twice (a garbled reply can read as any code). ``ALARM:N``, an
``Alarm`` report, check mode and sleep are faults; a feed hold the host
did not ask for (a noisy line can make a ``!``) is resumed with ``~``. A
banner while connected is a ``DeviceReset`` unless it follows the host's
own soft reset; nothing heard for ``silence`` while a job is pending is
``DeviceSilent``.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass

from ..errors import DeviceFault, DeviceReset, DeviceSilent, LinkError
from ..line_estop import PendingEstop
from ..motion import settle_after
from .dialect import (
    CYCLE_START,
    FEED_HOLD,
    LINE_NOISE_ERRORS,
    SOFT_RESET,
    STATUS_QUERY,
    Reply,
    Status,
    axis_letters,
    describe_alarm,
    describe_error,
    parse_axes_info,
)
from .jobs import Job, Referee


@dataclass(frozen=True)
class GrblTiming:
    """Everything GrblLink waits for, in seconds."""

    baudrate: int = 115200
    banner_wait: float = 0.5  # connect(): a board that resets on open prints its banner by then
    boot_timeout: float = 5.0  # connect(): the whole handshake
    sync_interval: float = 0.5  # repeat the soft reset this often while no banner comes
    settle: float = 0.05  # quiet after a banner; an idle board off target this long: line garbled or lost
    status_interval: float = 0.01  # '?' this often while something is pending
    probe_after: float = 0.1  # no ok or error to a line this long: send it again
    overrun: float = 1.0  # a move still running this long after twice its time is stopped and redone
    silence: float = 2.0  # DeviceSilent after this long without a word
    estop_retry: float = 0.05
    estop_timeout: float = 0.5
    query_timeout: float = 2.0
    write_timeout: float = 0.5
    poll: float = 0.005  # read timeout of the I/O thread
    reopen_pause: float = 0.1  # between closing and reopening the port (a reset by DTR needs it)


class GrblSession:
    def __init__(
        self,
        *,
        axes: dict[str, str],
        units_per_quarter: float,
        tolerance: float,
        retries: int,
        timing,
        port: str,
        write,
        after: list,
    ):
        self.face_of = {axis: face for face, axis in axes.items()}
        self.upq, self.tolerance, self.retries = units_per_quarter, tolerance, retries
        self.timing, self.port, self.send, self.after = timing, port, write, after
        self.referee = Referee(self)
        self.counters = {
            "lines_sent": 0,
            "resends": 0,
            "line_errors": 0,
            "probes": 0,
            "runaways": 0,
            "reports": 0,
            "stray_replies": 0,
            "resumes": 0,
            "motions_done": 0,
        }
        self.origin = {axis: 0.0 for axis in self.face_of}
        self.banner: str | None = None
        self.done_mid = 0
        self.reset(0.0)

    def reset(self, now: float) -> None:
        """Forget the session (callers fail what was outstanding first)."""
        self.fault: LinkError | None = None
        self.dead = False
        self.jobs: deque[Job] = deque()
        self.confirmed: dict[str, float] = {}
        self.status: Status | None = None
        self.wco: tuple[float, ...] | None = None
        self.last_rx = self.busy_since = self.last_ask = now
        self.resets_sent: deque[float] = deque()  # our soft resets whose banner has not come yet
        self.hello: Future | None = None
        self.banner_at: float | None = None
        self.next_reset = 0.0
        self.estop: PendingEstop | None = None
        self.letters: str | None = None  # the board's axes, from $I or the first report
        self.build: dict[str, str] = {}  # $I lines: VER, OPT, AXS, FIRMWARE, ...

    def resolve(self, future: Future | None, value=None, error: BaseException | None = None) -> None:
        settle_after(self.after, future, value, error)

    def machine(self, status: Status) -> dict[str, float] | None:
        """Machine position of our axes from a report (WPos plus the latest WCO when it gives WPos)."""
        values = status.mpos
        if values is None:
            wpos, wco = status.wpos, status.wco or self.wco
            if wpos is None or wco is None or len(wco) != len(wpos):
                return None
            values = tuple(w + o for w, o in zip(wpos, wco))
        letters = (self.letters or axis_letters(len(values)))[: len(values)]
        if any(axis not in letters for axis in self.face_of):
            return None
        return {axis: values[letters.index(axis)] for axis in self.face_of}

    def board_axes(self) -> str:
        """The board's axis letters: from ``$I`` (AXS), else as many as the last report has positions."""
        if self.letters is None and self.status is not None:
            self.letters = axis_letters(len(self.status.mpos or self.status.wpos or ()))
        return self.letters or ""

    def firmware(self) -> str:
        """``grblHAL 1.1f.20240101`` from ``$I``, or the banner's words."""
        version = self.build.get("VER", "").split(":")[0]
        name = self.build.get("FIRMWARE") or (self.banner or "grbl").split()[0]
        return f"{name} {version}" if version else (self.banner or "grbl")

    def fail(self, err: LinkError, dead: bool) -> None:
        err.done_through = self.done_mid
        if self.fault is None or (dead and not self.dead):
            self.fault = err
        self.dead |= dead
        for job in self.jobs:
            for future in (job.future,) if job.motion is None else (job.motion.received, job.motion.completed):
                self.resolve(future, error=self.fault)
        self.jobs.clear()
        if dead and self.hello is not None:
            self.resolve(self.hello, error=err)
            self.hello = None

    # ------------------------------------------------------------ the queue

    def submit(self, job: Job, now: float) -> None:
        if not self.jobs:
            self.busy_since = now
        self.jobs.append(job)
        if len(self.jobs) == 1:
            self.start(now)

    def start(self, now: float) -> None:
        """The head job's first step; jobs that need nothing from the board are done at once."""
        while self.jobs and self.fault is None:
            job = self.jobs[0]
            if job.kind == "mark":
                self.finish(job, job.result())
                continue
            if job.kind == "move":
                self.referee.begin(job, now)
            elif job.text:
                self.transmit(job, job.text, now)
            else:
                self.ask(now)
            return

    def finish(self, job: Job, value) -> None:
        self.jobs.popleft()
        if job.motion is not None:
            self.resolve(job.motion.received, True)
            self.resolve(job.motion.completed, value)
            self.done_mid = max(self.done_mid, job.motion.mid)
            self.counters["motions_done"] += 1
        self.resolve(job.future, value)

    def transmit(self, job: Job, text: str, now: float) -> None:
        job.line, job.sent_at, job.ok_at, job.asked = text, now, None, False
        job.moved = job.matched = False
        job.off_since = None
        job.attempts += 1
        self.counters["lines_sent"] += 1
        self.send(text.encode("ascii") + b"\n")

    def again(self, job: Job, why: str, now: float, text: str | None = None) -> None:
        """Send the head job's line (or ``text``) once more, or give up after ``retries`` attempts."""
        if job.attempts >= self.retries:
            return self.fail(
                DeviceFault(
                    f"{job.describe()} not done after {job.attempts} attempts (last: {why})",
                    code="ERROR",
                    port=self.port,
                ),
                dead=False,
            )
        self.counters["resends"] += 1
        self.transmit(job, text or job.line or job.text, now)

    def ask(self, now: float) -> None:
        self.send(STATUS_QUERY)
        self.last_ask = now
        if self.jobs and (self.jobs[0].line is None or self.jobs[0].ok_at is not None):
            self.jobs[0].asked = True

    # ------------------------------------------------------------ replies

    def on_line(self, reply: Reply, now: float) -> None:
        self.last_rx = now
        handlers = {
            "ok": self.on_ok,
            "error": self.on_error,
            "status": self.on_status,
            "alarm": self.on_alarm,
            "banner": self.on_banner,
            "info": self.on_info,
        }
        if reply.kind in handlers:  # messages ([MSG:...]) and anything else: heard, no more
            handlers[reply.kind](reply, now)

    def on_banner(self, reply: Reply, now: float) -> None:
        self.banner, self.wco = reply.text, None
        ours = self.reset_awaited(now, answered=True)
        if self.hello is not None:
            self.banner_at = now
        elif ours:
            self.estop_seen(now)
        elif not self.dead:
            self.fail(
                DeviceReset(
                    f"the board reset ({reply.text} banner): queued moves are lost, connect() again", port=self.port
                ),
                dead=True,
            )

    def on_info(self, reply: Reply, now: float) -> None:
        key, _, value = reply.text.partition(":")
        self.build[key] = value
        self.letters = parse_axes_info(reply.text) or self.letters

    def on_alarm(self, reply: Reply, now: float) -> None:
        if self.hello is not None or self.reset_awaited(now):
            return self.estop_seen(now)
        if self.jobs and (self.jobs[0].kind == "unlock" or self.jobs[0].cancel):
            return
        self.fail(
            DeviceFault(f"{describe_alarm(reply.code)}; clear() unlocks it ($X)", code="ALARM", port=self.port),
            dead=False,
        )

    def on_ok(self, reply: Reply, now: float) -> None:
        job = self.jobs[0] if self.jobs else None
        if job is None or job.line is None or job.ok_at is not None:
            self.counters["stray_replies"] += 1
            return
        job.ok_at = now
        if job.cancel == "unlock":
            job.cancel = None
        elif job.motion is not None:
            self.resolve(job.motion.received, True)
        if job.kind == "line":
            self.finish(job, {"line": job.text})
            return self.start(now)
        self.ask(now)

    def on_error(self, reply: Reply, now: float) -> None:
        job = self.jobs[0] if self.jobs else None
        if job is None or job.line is None or job.ok_at is not None:
            self.counters["stray_replies"] += 1  # a line that noise made up, or a late copy
            return
        code = reply.code
        if code is None or code in LINE_NOISE_ERRORS:
            self.counters["line_errors"] += 1
        elif code in job.refused:
            return self.fail(
                DeviceFault(f"{describe_error(code)} (line {job.line!r})", code="ERROR", port=self.port), dead=False
            )
        else:
            job.refused.add(code)
        self.again(job, describe_error(code), now)

    def on_status(self, reply: Reply, now: float) -> None:
        status = reply.status
        if status is None:  # a status reply always carries one
            return
        self.status = status
        self.counters["reports"] += 1
        if status.wco is not None:
            self.wco = status.wco
        if status.state == "Alarm" and self.estop is not None:
            self.estop_seen(now)
        if self.hello is not None or self.fault is not None or not self.jobs:
            return
        job = self.jobs[0]
        if self.state_fault(status, job):
            return
        if status.state in ("Hold", "Door") and status.substate in (0, None) and job.cancel is None:
            self.counters["resumes"] += 1
            self.send(CYCLE_START)  # a hold nobody here asked for: line noise made a '!'
        if job.asked:
            self.referee.report(job, status, now)

    def state_fault(self, status: Status, job: Job) -> bool:
        if status.state == "Alarm" and job.kind != "unlock" and not job.cancel:
            message = f"grblHAL is in alarm ({describe_alarm(status.substate)}); clear() unlocks it ($X)"
            self.fail(DeviceFault(message, code="ALARM", port=self.port), dead=False)
        elif status.state == "Check":
            self.fail(
                DeviceFault(
                    "grblHAL is in check mode ($C): it reads G-code but moves nothing; send $C to leave it",
                    code="ERROR",
                    port=self.port,
                ),
                dead=False,
            )
        elif status.state == "Sleep":
            self.fail(
                DeviceFault("grblHAL is asleep ($SLP): reset the board, then connect()", code="ERROR", port=self.port),
                dead=True,
            )
        else:
            return False
        return True

    # ------------------------------------------------------------ time

    def tick(self, now: float) -> None:
        if self.hello is not None:
            return self.handshake_tick(now)
        if self.estop is not None and self.estop.tick(now):
            self.estop = None
        if not self.jobs or self.fault is not None:
            return
        job = self.jobs[0]
        quiet = now - max(self.last_rx, self.busy_since)
        if quiet > self.timing.silence:
            return self.fail(
                DeviceSilent(f"no reply for {quiet:.1f} s while {job.describe()} was pending", port=self.port),
                dead=True,
            )
        if job.line is not None and job.ok_at is None and now - job.sent_at > self.timing.probe_after:
            self.counters["probes"] += 1
            return self.again(job, "no reply to the line", now)
        if now - self.last_ask >= self.timing.status_interval:
            self.ask(now)

    def soft_reset(self, now: float) -> None:
        """0x18, whose banner (and ALARM:3, if the board was moving) will not be a DeviceReset."""
        self.send(SOFT_RESET)
        self.resets_sent.append(now)

    def reset_awaited(self, now: float, answered: bool = False) -> bool:
        """Is a soft reset of ours (sent within ``estop_timeout``) still to show? ``answered``: its banner came."""
        while self.resets_sent and now - self.resets_sent[0] > self.timing.estop_timeout:
            self.resets_sent.popleft()
        if not self.resets_sent:
            return False
        if answered:
            self.resets_sent.popleft()
        return True

    def begin_handshake(self, hello: Future, now: float) -> None:
        self.hello, self.banner_at = hello, None
        self.next_reset = now + self.timing.banner_wait

    def handshake_tick(self, now: float) -> None:
        if self.banner_at is not None:
            if now - self.banner_at >= self.timing.settle:  # later banners of repeated resets are over
                self.resolve(self.hello, self.banner)
                self.hello = None
                self.busy_since = now
        elif now >= self.next_reset:
            self.soft_reset(now)  # no banner: the board did not reset on open
            self.next_reset = now + self.timing.sync_interval

    def begin_estop(self, future: Future, now: float) -> None:
        self.send(FEED_HOLD)
        self.soft_reset(now)
        self.estop = PendingEstop(
            future, now, timing=self.timing, what="soft reset", port=self.port, resend=self.soft_reset, after=self.after
        )
        message = "emergency stop (feed hold, soft reset): clear() unlocks grblHAL ($X) before it moves again"
        self.fail(DeviceFault(message, code="ESTOP", port=self.port), dead=False)

    def estop_seen(self, now: float) -> None:
        if self.estop is not None:
            estop, self.estop = self.estop, None
            estop.confirm(now, self.done_mid)
