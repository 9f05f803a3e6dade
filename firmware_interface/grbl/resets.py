"""The soft resets of a grbl session (0x18): the handshake's, the emergency stop's and ``clear()``'s.

grbl answers a soft reset with its banner (after ``ALARM:3`` when it was
moving), and reads no line until that banner: lines sent before it are
lost. ``Resets`` remembers the resets the host sent, so that their banners
are not taken for the board's own reset (a ``DeviceReset``), and runs the
``reset`` job: a soft reset, done when its banner comes. grbl-Mega-5X
prints that banner 0.25 s after a reset from idle and 1.0 s after one in
motion (``GrblTiming.reset_banner``).

Called by ``GrblSession`` under the link's lock, like the session itself.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future

from ..errors import DeviceFault, DeviceReset
from ..line_estop import PendingEstop
from .dialect import FEED_HOLD, SOFT_RESET
from .jobs import Job

RESET_TRIES = 3  # soft resets a reset job sends before it gives up
# after a limit alarm grbl takes a 0x18 only once it has printed [MSG:Reset to continue] (0.5 s after the
# ALARM line on grbl-Mega-5X; one sent before is lost); without that message, a reset goes out this late
MESSAGE_WAIT = 1.0


class Resets:
    def __init__(self, session):
        self.session = session
        self.sent: deque[float] = deque()  # our soft resets whose banner has not come yet
        self.hello: Future | None = None  # connect() waits for a banner
        self.banner_at: float | None = None
        self.handshake_reset_at: float | None = None  # the last 0x18 connect() sent for want of a banner
        self.next_reset = 0.0
        self.estop: PendingEstop | None = None

    def soft_reset(self, now: float) -> None:
        """0x18, whose banner (and ALARM:3, if the board was moving) will not be a DeviceReset."""
        self.session.send(SOFT_RESET)
        self.sent.append(now)

    def resend(self, now: float) -> None:
        """The e-stop's 0x18 again: grbl ignores it while it resets, so one banner still answers both."""
        self.session.send(SOFT_RESET)
        if self.sent:
            self.sent[-1] = now
        else:
            self.sent.append(now)

    def awaited(self, now: float, answered: bool = False) -> bool:
        """Is a soft reset of ours (sent within ``reset_banner``) still to show? ``answered``: its banner came."""
        while self.sent and now - self.sent[0] > self.session.timing.reset_banner:
            self.sent.popleft()
        if not self.sent:
            return False
        if answered:
            self.sent.popleft()
        return True

    def on_banner(self, text: str, now: float) -> None:
        session = self.session
        ours = self.awaited(now, answered=True)
        if self.hello is not None:
            self.banner_at = now
            return
        if not ours:
            if self.late_handshake_answer(now):
                return  # lines sent before it are lost, and sent again when no reply comes (GrblSession.tick)
            if not session.dead:
                session.fail(
                    DeviceReset(
                        f"the board reset ({text} banner): queued moves are lost, connect() again", port=session.port
                    ),
                    dead=True,
                )
            return
        self.estop_seen(now)
        job = session.jobs[0] if session.jobs else None
        if job is not None and job.kind == "reset":
            session.finish(job, {"line": None})
            session.start(now)
        elif job is not None and job.cancel == "reset":  # a runaway move held and reset: now $X can be read
            session.referee.unlock(job, now)

    # ------------------------------------------------------------ clear()'s reset job

    def start_job(self, job: Job, now: float) -> None:
        """A reset job's start: 0x18, unless one of ours is still to show its banner (that one will do) or grbl
        has not asked for it yet (attempts stays 0 until it is sent)."""
        job.sent_at = now
        if self.awaited(now):
            job.attempts = 1
        elif not self.too_soon(now):
            self.send_for(job, now)

    def too_soon(self, now: float) -> bool:
        """After a limit alarm, before its [MSG:Reset to continue]: grbl would lose a 0x18."""
        alarm_at = self.session.limit_alarm_at
        return alarm_at is not None and not self.session.reset_asked and now - alarm_at < MESSAGE_WAIT

    def send_for(self, job: Job, now: float) -> None:
        job.sent_at = now
        job.attempts += 1
        self.soft_reset(now)

    def job_tick(self, job: Job, now: float) -> None:
        if job.attempts == 0:
            if not self.too_soon(now):
                self.send_for(job, now)
            return
        if now - job.sent_at <= self.session.timing.reset_banner:
            return
        if job.attempts >= RESET_TRIES:
            message = f"no banner after {job.attempts} soft resets (0x18): power the board off and on, then connect()"
            return self.session.fail(DeviceFault(message, code="ERROR", port=self.session.port), dead=False)
        self.send_for(job, now)

    # ------------------------------------------------------------ connect() and estop()

    def begin_handshake(self, hello: Future, now: float) -> None:
        self.hello, self.banner_at, self.handshake_reset_at = hello, None, None
        self.next_reset = now + self.session.timing.banner_wait

    def late_handshake_answer(self, now: float) -> bool:
        """Is a banner after the handshake, still in connect(), the answer to the handshake's own 0x18? A board
        that resets on open but boots later than ``banner_wait`` (a slow bootloader, a busy host) gets that 0x18
        while booting: its boot banner ends the handshake and took the 0x18's place, and the 0x18's own banner
        follows within ``reset_banner``."""
        sent_at = self.handshake_reset_at
        return self.session.connecting and sent_at is not None and now - sent_at <= self.session.timing.reset_banner

    def handshake_tick(self, now: float) -> None:
        timing = self.session.timing
        if self.banner_at is not None:
            if now - self.banner_at >= timing.settle:  # later banners of repeated resets are over
                self.session.resolve(self.hello, self.session.report.banner)
                self.hello = None
                self.session.busy_since = now
        elif now >= self.next_reset:
            self.soft_reset(now)  # no banner: the board did not reset on open
            self.handshake_reset_at, self.next_reset = now, now + timing.sync_interval

    def begin_estop(self, future: Future, now: float) -> None:
        session = self.session
        session.send(FEED_HOLD)
        self.soft_reset(now)
        self.estop = PendingEstop(
            future,
            now,
            timing=session.timing,
            what="soft reset",
            port=session.port,
            resend=self.resend,
            after=session.after,
        )
        message = "emergency stop (feed hold, soft reset): clear() unlocks grbl ($X) before it moves again"
        session.fail(DeviceFault(message, code="ESTOP", port=session.port), dead=False)

    def estop_seen(self, now: float) -> None:
        if self.estop is not None:
            estop, self.estop = self.estop, None
            estop.confirm(now, self.session.done_mid)

    def estop_tick(self, now: float) -> None:
        if self.estop is not None and self.estop.tick(now):
            self.estop = None
