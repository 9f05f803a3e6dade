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
done when reached (enable, disable); ``reset``, a soft reset (0x18) done
on its banner (resets.py).

Recovery: an ``error:N`` that a garbled line can draw, or no reply for
``probe_after``, sends the line again, at most ``retries`` times in all,
then a ``DeviceFault``. Any other ``error:N`` is a fault once the same line
drew it twice (a garbled reply can read as any code). ``ALARM:N``, an
``Alarm`` report, check mode and sleep are faults; an alarm after which
grbl reads nothing until a reset (alarms.py) sets ``needs_reset``, and so
does a ``$X`` twice unanswered. A feed hold the host did not ask for (a
noisy line can make a ``!``) is resumed with ``~``. A banner while
connected is a ``DeviceReset`` unless it follows the host's own soft reset;
nothing heard for ``silence`` while a job is pending is ``DeviceSilent``.
What the board says of itself goes into ``report`` (identity.py).
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future

from ..errors import DeviceFault, DeviceSilent, HandshakeError, LinkError
from ..motion import settle_after
from .alarms import RESET_MESSAGE, UNLOCKED_MESSAGE, alarm_advice, alarm_message, describe_alarm, needs_reset
from .dialect import CYCLE_START, LINE_NOISE_ERRORS, STATUS_QUERY, Reply, Status, axis_letters, describe_error
from .identity import BoardReport, not_grbl
from .jobs import Job, Referee
from .resets import Resets
from .timing import GrblTiming

__all__ = ["GrblSession", "GrblTiming"]


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
            "soft_resets": 0,
        }
        self.origin = {axis: 0.0 for axis in self.face_of}
        self.done_mid = 0
        self.last_alarm: dict | None = None  # the latest alarm that stopped the link, and what clear() did
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
        self.resets = Resets(self)
        self.report = BoardReport()
        self.connecting = False  # connect() runs: alarms and an unlock are the board's state at connect
        self.needs_reset = False  # grbl reads no line until a soft reset
        self.limit_alarm_at: float | None = None  # when grbl raised a limit alarm ...
        self.reset_asked = False  # ... and whether it has printed [MSG:Reset to continue] since

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
        letters = (self.report.letters or axis_letters(len(values)))[: len(values)]
        if any(axis not in letters for axis in self.face_of):
            return None
        return {axis: values[letters.index(axis)] for axis in self.face_of}

    def board_axes(self) -> str:
        """The board's axis letters: from ``$I`` (AXS), else as many as the last report has positions."""
        status = self.status
        return self.report.axes_from_report(len((status.mpos or status.wpos or ()) if status else ()))

    def fail(self, err: LinkError, dead: bool) -> None:
        err.done_through = self.done_mid
        if self.fault is None or (dead and not self.dead):
            self.fault = err
        self.dead |= dead
        for job in self.jobs:
            for future in (job.future,) if job.motion is None else (job.motion.received, job.motion.completed):
                self.resolve(future, error=self.fault)
        self.jobs.clear()
        if dead and self.resets.hello is not None:
            self.resolve(self.resets.hello, error=err)
            self.resets.hello = None

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
            elif job.kind == "reset":
                self.resets.start_job(job, now)
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
        if job.kind == "reset":
            self.needs_reset = False
            self.counters["soft_resets"] += 1
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

    def reset_first(self, job: Job, now: float) -> None:
        """``$X`` twice unanswered: grbl reads nothing until a reset (a limit alarm whose words were lost)."""
        self.needs_reset = True
        job.line = None
        self.jobs.appendleft(Job("reset"))
        self.start(now)

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
            "setting": self.on_setting,
            "message": self.on_message,
            "other": self.on_other,
        }
        if reply.kind in handlers:
            handlers[reply.kind](reply, now)

    def on_banner(self, reply: Reply, now: float) -> None:
        self.report.banner, self.wco = reply.text, None
        self.needs_reset = self.reset_asked = False
        self.limit_alarm_at = None
        self.resets.on_banner(reply.text, now)

    def on_info(self, reply: Reply, now: float) -> None:
        self.report.on_info(reply.text)

    def on_setting(self, reply: Reply, now: float) -> None:
        if reply.code is not None:
            self.report.settings[reply.code] = reply.text

    def on_message(self, reply: Reply, now: float) -> None:
        if RESET_MESSAGE in reply.text.lower():
            self.needs_reset = self.reset_asked = True
        elif reply.text == UNLOCKED_MESSAGE and self.connecting:
            self.report.was_locked = True

    def on_other(self, reply: Reply, now: float) -> None:
        """A line grbl would not say: during the handshake, maybe another firmware's."""
        if self.resets.hello is None or not reply.text:
            return
        self.report.heard.append(reply.text)
        why = not_grbl(reply.text)
        if why:
            self.resolve(self.resets.hello, error=HandshakeError(why, port=self.port))
            self.resets.hello = None

    def on_alarm(self, reply: Reply, now: float) -> None:
        code = reply.code
        if self.connecting:
            self.report.alarms.append(code)
        if needs_reset(code):
            self.needs_reset, self.limit_alarm_at = True, now
        if self.resets.hello is not None or self.resets.awaited(now):
            return self.resets.estop_seen(now)
        if self.jobs and (self.jobs[0].kind in ("unlock", "reset") or self.jobs[0].cancel):
            return
        self.alarm_fault(code)

    def alarm_fault(self, code: int | None) -> None:
        self.last_alarm = {
            "code": code,
            "alarm": describe_alarm(code),
            "advice": alarm_advice(code),
            "needs_reset": self.needs_reset,
            "cleared": False,
        }
        self.fail(DeviceFault(alarm_message(code, self.needs_reset), code="ALARM", port=self.port), dead=False)

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
        if job.optional:
            self.finish(job, None)  # a question this board does not answer
            return self.start(now)
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
        if status.state == "Alarm" and self.resets.estop is not None:
            self.resets.estop_seen(now)
        if self.resets.hello is not None or self.fault is not None or not self.jobs:
            return
        job = self.jobs[0]
        if job.kind == "reset" or job.cancel == "reset" or self.state_fault(status, job):
            return  # a reset job waits for its banner, not for reports
        if status.state in ("Hold", "Door") and status.substate in (0, None) and job.cancel is None:
            self.counters["resumes"] += 1
            self.send(CYCLE_START)  # a hold nobody here asked for: line noise made a '!'
        if job.asked:
            self.referee.report(job, status, now)

    def state_fault(self, status: Status, job: Job) -> bool:
        if status.state == "Alarm" and job.kind not in ("unlock", "line") and not job.cancel:
            self.alarm_fault(status.substate)
        elif status.state == "Check":
            self.fail(
                DeviceFault(
                    "grbl is in check mode ($C): it reads G-code but moves nothing; send $C to leave it",
                    code="ERROR",
                    port=self.port,
                ),
                dead=False,
            )
        elif status.state == "Sleep":
            self.fail(
                DeviceFault("grbl is asleep ($SLP): reset the board, then connect()", code="ERROR", port=self.port),
                dead=True,
            )
        else:
            return False
        return True

    # ------------------------------------------------------------ time

    def tick(self, now: float) -> None:
        if self.resets.hello is not None:
            return self.resets.handshake_tick(now)
        self.resets.estop_tick(now)
        if not self.jobs or self.fault is not None:
            return
        job = self.jobs[0]
        quiet = now - max(self.last_rx, self.busy_since)
        if quiet > self.timing.silence:
            return self.fail(
                DeviceSilent(f"no reply for {quiet:.1f} s while {job.describe()} was pending", port=self.port),
                dead=True,
            )
        if job.kind == "reset":
            self.resets.job_tick(job, now)
        elif job.cancel == "reset" and now - job.cancel_at > self.timing.reset_banner:
            self.referee.unlock(job, now)  # the banner was lost on the way
        elif job.line is not None and job.ok_at is None and now - job.sent_at > self.timing.probe_after:
            self.counters["probes"] += 1
            if job.kind == "unlock" and job.attempts == 2:
                return self.reset_first(job, now)
            return self.again(job, "no reply to the line", now)
        if now - self.last_ask >= self.timing.status_interval:
            self.ask(now)
