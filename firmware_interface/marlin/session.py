"""The host's half of Marlin's line protocol as a state machine: one line at a time, markers, resends, timers.

``MarlinSession`` does no I/O of its own: ``MarlinLink`` calls it under its
lock with the time and a ``write`` function; future results are queued on
``after`` and set once the lock is released (as ``GrblSession`` does).

What stock Marlin 2.1 does (shared/stock-firmware/README.md) and what the
session makes of it:

* Marlin checks a line's number as it moves the line from its 128-byte
  receive buffer into its 4-line command queue, and answers ``ok`` when it
  has run the line (a ``G1``: planned), not when the motion is done. On a
  bad line it says ``Error:``, ``Resend: last+1``, ``ok`` and empties its
  receive buffer: a line arriving just then is cut, and its tail runs as a
  command without a number. So lines go **one at a time**: the next only
  once Marlin has answered the one before, so that none of ours is on the
  wire when Marlin flushes, and at most three of ours are in its queue (the
  one running and silence probes), which leaves room for the stop.
* Marlin drops a repeated line number without a word, so a line is never
  sent again because of silence, only when Marlin asks (``Resend: n``, or
  its ``Error:``'s ``Last Line``), and then from n (``lines.LineBook.again``:
  a line that ran or that a stop cancelled goes again as a no-op under its
  number), once what was on the wire has arrived: a fragment of a line
  Marlin cut may still run (a doubled line's copy), and its ok, or the
  marker it prints, is not taken for an answer. The link's moves are
  absolute (``G90``), so a fragment of a ``G1`` that runs beside the line
  itself sends the face to the same place.
* Plain ``ok`` carries no line number, and a faulty line loses, doubles or
  invents them (an ``Unknown command`` of a garbled fragment has one too):
  oks only pace the sending, and an ok sooner than the line could have
  crossed the wire is not its ok. What has run is proven by **markers**:
  ``M118 rd<n> rd<n>`` prints its own number when it runs, and Marlin runs
  lines in order, so marker n proves every line up to n ran. A move is
  ``G1`` (in parts), ``M400``, marker: the M400 ends with the motion, and
  the move is done when its marker (or a later one) is printed.
* Silence: while a line waits for its answer and nothing is heard for
  ``probe_after``, a new marker line goes after it (a probe, never a line
  sent before): Marlin answers it after what is ahead of it, or asks for a
  line it missed. ``M400`` waits say ``echo:busy: processing`` every 2 s;
  nothing heard for ``silence`` (``busy_silence`` while an M400 waits) is
  ``DeviceSilent``; after a stop, silence counts only from ``stop_recovery``
  after the last ``M410`` written.
* ``Error:`` other than a bad line is a ``DeviceFault`` (ERROR, or HALTED
  for kill()); ``start`` while connected is a ``DeviceReset``.
* Stop (``begin_estop``): ``M410`` unnumbered, at once and again after
  ``estop_retry``; every line not proven to have run is cancelled. Only a
  move's ``G1`` still on the wire holds the first ``M410`` until its ok (at
  most ``estop_hold`` after it crossed): Marlin without EMERGENCY_PARSER
  that read both in one pass would run the ``G1`` after its pause. Marlin
  keeps running but confirms nothing until its quick stop is over; no line
  goes until both ``M410`` are out (one between them costs it 2 s more). The
  stock 2.1 binaries under simavr answered ``clear()`` 1.1 s after a stop
  without EMERGENCY_PARSER, 2.1 s with it. The faces stopped wherever they
  were.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import Future

from ..errors import DeviceFault, DeviceReset, DeviceSilent, HandshakeError, LinkError
from ..motion import settle_after
from .dialect import STOP_LINE, Reply, parse_position, position_agrees, reset_line_numbers
from .identity import BoardReport
from .lines import BY_OK, IDENT, MARKER, POSITION, REPORTS, STEPS, Line, LineBook
from .timing import MarlinTiming

OWED_OK_S = 0.05  # an Unknown command's ok comes right after its echo
TAIL_BYTES = 64  # after a line error, what was on the wire may still arrive and run as a fragment


class MarlinSession:
    def __init__(
        self,
        *,
        timing: MarlinTiming,
        port: str,
        buffer: int,
        history: int,
        write: Callable[[bytes], None],
        after: list[Callable[[], None]],
        on_fault: Callable[[LinkError], None],
    ):
        self.timing, self.port, self.buffer = timing, port, buffer
        self.send, self.after, self.on_fault = write, after, on_fault
        self.book = LineBook(history)
        self.banner: str | None = None
        self.done_mid = 0
        self.counters = dict.fromkeys(
            ("lines_sent", "resends", "line_errors", "probes", "busy", "stray_oks", "markers", "motions_done"), 0
        )
        self.reset(0.0)

    def reset(self, now: float) -> None:
        """Forget the session (callers fail what was outstanding first)."""
        self.connected = self.dead = self.halted = self.advanced = self.resyncing = False
        self.fault: LinkError | None = None
        self.hello: Future | None = None
        self.hello_due = self.last_probe = self.owed_ok_until = self.tails_until = 0.0
        self.last_rx = now
        self.last_busy = self.stopped_at = -1e9
        self.proven = 0
        self.book.restart()
        self.unsent: deque[Line] = deque()
        self.flying: deque[Line] = deque()  # sent, not taken by Marlin yet (one, and silence probes)
        self.held: deque[Line] = deque()  # taken, still to be answered (a marker's text, a report)
        self.report = BoardReport()
        self.position: dict | None = None
        self.position_known = True
        self.stop_at: float | None = None  # the first M410, held until a move's G1 on the wire is taken
        self.stop_again: float | None = None

    @property
    def outstanding(self) -> list[Line]:
        return [*self.flying, *self.held, *self.unsent]

    def resolve(self, future: Future | None, value=None, error: BaseException | None = None) -> None:
        settle_after(self.after, future, value, error)

    # ------------------------------------------------------------ replies

    def on_line(self, reply: Reply, now: float) -> None:
        self.last_rx, kind = now, reply.kind
        if kind == "ok" and self.stop_at is not None:
            self.stop_now(now)  # the held move's G1 was taken (planned): the stop cuts it
        elif kind == "ok":
            self.on_ok(reply, now)
        elif kind == "marker":
            self.on_marker(reply.n or 0)
        elif kind == "resend":
            self.on_resend(reply.n, now)
        elif kind == "busy":
            self.last_busy = now
            self.counters["busy"] += 1
        elif kind in ("position", "firmware", "cap", "steps", "limits"):
            self.on_report(reply)
        elif kind == "error":
            self.on_error(reply, now)
        elif reply.unknown_command:
            self.on_unknown(reply, now)
        elif kind == "banner":
            self.banner = f"Marlin {reply.text}"
        if kind in ("start", "banner") and self.hello is not None:
            self.hello_due = now + self.timing.settle  # it just booted: greet it once its boot text is out
        elif kind == "start" and self.connected:
            message = "the board reset (start banner): queued moves are lost, connect() again"
            self.fail(DeviceReset(message, port=self.port), dead=True)
        self.pump(now)

    def on_ok(self, reply: Reply, now: float) -> None:
        if now <= self.owed_ok_until or now < self.tails_until or self.resyncing:
            self.owed_ok_until = 0.0  # an Unknown command's, an error's or a fragment's, or from before a stop
            return self.stray()
        if self.hello is not None and not self.flying:
            return self.hello_ok(now)
        if reply.n is not None:  # ADVANCED_OK: the number of the line it answers
            self.advanced = True
            taken = [line for line in self.flying if line.n <= reply.n]
            for line in taken:
                self.take(line)
            return None if taken else self.stray()
        head = self.flying[0] if self.flying else None
        if head is None or now - head.sent_at < self.min_reply(head):
            return self.stray()
        self.take(head)

    def take(self, line: Line) -> None:
        """Marlin took the line: a plain one is answered, one that answers with text waits for it."""
        self.flying.remove(line)
        if line.kind == BY_OK or line.heard:
            self.answer(line)
        else:
            self.held.append(line)

    def stray(self) -> None:
        self.counters["stray_oks"] += 1

    def on_marker(self, n: int) -> None:
        """Marker line ``n`` ran, so every line before it did: each is answered (or asked again when its
        report was lost)."""
        line = self.book.get(n)
        if line is None or line in self.unsent:
            return  # from another numbering, or a fragment of a line Marlin refused (it is to go again)
        self.counters["markers"] += 1
        self.proven, self.resyncing = max(self.proven, n), False
        for queue in (self.flying, self.held, self.unsent):  # unsent: sent again on a Resend, ran before
            for line in [line for line in queue if 0 < line.n <= n]:
                queue.remove(line)
                self.proved(line)
        if self.hello is not None and n == 1:
            self.resolve(self.hello, True)
            self.hello = None

    def proved(self, line: Line) -> None:
        if line.kind in REPORTS and not line.heard:
            self.unsent.appendleft(line.copy())  # it ran but its report was lost: ask again
        else:
            self.answer(line)

    def on_report(self, reply: Reply) -> None:
        line = next((line for line in (*self.held, *self.flying) if line.kind in REPORTS), None)
        if reply.kind == "position":
            if not position_agrees(reply.text):
                return  # garbled: M114 is asked again once a marker shows it ran
            self.position = parse_position(reply.text)
            self.report.on_position(list(self.position))
            if line is not None and line.kind == POSITION:
                line.heard = True
                if line in self.held:
                    self.held.remove(line)
                    self.answer(line)
        elif reply.kind == "steps":
            self.report.on_steps(reply.text)
            if line is not None and line.kind == STEPS:
                line.heard = True
        elif reply.kind == "limits":
            self.report.on_limits(reply.text)  # its ok answers the line: a lost report leaves no figure
        elif reply.kind == "firmware":
            self.report.on_firmware(reply.text)
            if line is not None and line.kind == IDENT:
                line.heard = True  # its Cap: lines follow, then its ok
        else:
            self.report.on_capability(reply.text)

    def on_resend(self, n: int | None, now: float) -> None:
        """Marlin took every line before ``n`` and none from ``n`` on: send them again from there, once what was
        on the wire has arrived (Marlin emptied its receive buffer: a line it cut may run as a fragment)."""
        just_asked, self.tails_until = now < self.tails_until, now + TAIL_BYTES * 10 / self.timing.baudrate
        if n is None or not 1 <= n <= self.book.last:
            return  # n = last + 1: it has every line
        for line in [line for line in self.flying if line.n < n]:
            self.take(line)
        self.flying.clear()  # the rest it refused
        waiting = [line.n for line in self.unsent if line.n]
        if just_asked and waiting[:1] == [n]:
            return  # said twice: the Error's Last Line, then Resend
        self.counters["resends"] += 1
        again = self.book.again(n, self.proven)
        if again is None:
            message = f"Marlin asks for line {n} again, which is no longer kept"
            return self.fail(LinkError(message, port=self.port), dead=True)
        self.held = deque(line for line in self.held if line.n < n)
        self.unsent = deque(line for line in self.unsent if not line.n)  # again holds those
        self.unsent.extendleft(reversed(again))

    def on_error(self, reply: Reply, now: float) -> None:
        if reply.line_error:
            self.counters["line_errors"] += 1
            if reply.n is not None:  # Last Line: as good as its Resend, which may be lost on the way
                self.on_resend(reply.n + 1, now)
            return
        if reply.halted:
            self.halted = True
            message = f"Marlin halted: {reply.text} (reset the board, then connect(); square the faces)"
            return self.fail(DeviceFault(message, code="HALTED", port=self.port), dead=False)
        self.fail(DeviceFault(f"Marlin reported: Error:{reply.text}", code="ERROR", port=self.port), dead=False)

    def on_unknown(self, reply: Reply, now: float) -> None:
        """A garbled fragment ran as an unknown command; its ok comes next. Marlin without M118 cannot be driven."""
        self.owed_ok_until = now + OWED_OK_S
        if '"M118' in reply.text:
            message = "this Marlin has no M118, which robotd's markers need: use Marlin 2.0 or later"
            self.fail(HandshakeError(message, port=self.port), dead=True)

    def answer(self, line: Line) -> None:
        if line.text.startswith("G92"):
            self.position_known = True  # home(): the faces were squared and this is zero
        if line.future is not None:
            self.resolve(line.future, dict(self.position or {}) if line.kind == POSITION else True)
        motion = line.motion
        if motion is None:
            return
        self.resolve(motion.received, True)
        if line.role == "completed" and not motion.completed.done():
            self.resolve(motion.completed, {"mid": motion.mid, "command": motion.command, "line": line.n})
            self.done_mid = max(self.done_mid, motion.mid)
            self.counters["motions_done"] += 1

    # ------------------------------------------------------------ the handshake

    def hello_ok(self, now: float) -> None:
        """An ok to M110 (or a late one from before): marker line 1 shows that the numbering starts now."""
        self.book.restart()
        self.send_line(Line("", MARKER), now)

    def hello_tick(self, now: float) -> None:
        if now >= self.hello_due:
            self.hello_due = now + self.timing.sync_interval
            self.flying.clear()  # marker 1 of the last round may still come and is just as good
            self.held.clear()
            self.send(reset_line_numbers())

    # ------------------------------------------------------------ sending, timers, faults

    def queue(self, line: Line) -> None:
        self.unsent.append(line)

    def pump(self, now: float) -> None:
        while (
            self.unsent
            and not self.flying
            and now >= self.tails_until
            and self.stop_at is None
            and self.stop_again is None  # after both M410s: a line between them costs a non-EP Marlin 2 s more
            and self.fault is None
            and (self.connected or self.hello)
        ):
            self.send_line(self.unsent.popleft(), now)

    def send_line(self, line: Line, now: float) -> None:
        self.book.number(line)
        line.sent_at, line.heard = now, False
        self.flying.append(line)
        self.counters["lines_sent"] += 1
        self.send(self.book.wire(line))

    def wire_s(self, line: Line, extra_bytes: int = 0) -> float:
        """How long the line (and ``extra_bytes`` more) takes to cross the wire."""
        return (len(self.book.wire(line)) + extra_bytes) * 10 / self.timing.baudrate

    def min_reply(self, line: Line) -> float:
        """The least time its ok can take: the line and the ok crossing the wire (a share of it, for margin)."""
        return self.timing.reply_share * self.wire_s(line, extra_bytes=3)

    def tick(self, now: float) -> None:
        if self.hello is not None:
            self.hello_tick(now)
        if self.stop_at is not None and now >= self.stop_at:
            self.stop_now(now)
        if self.stop_again is not None and now >= self.stop_again:
            self.stop_again, self.stopped_at = None, now  # each M410 line starts Marlin's pause again
            self.send(STOP_LINE)
        self.pump(now)
        waiting = (*self.flying, *self.held)
        if not waiting or self.fault is not None:
            return
        recovered = self.stopped_at + self.timing.stop_recovery  # a board in a quick stop's pause answers nothing
        quiet = now - max(self.last_rx, min(line.sent_at for line in waiting), recovered)
        if quiet > self.silence_limit(now):
            line = waiting[0]
            message = f"no reply for {quiet:.1f} s with line {line.n} ({line.text}) unanswered"
            self.fail(DeviceSilent(message, port=self.port), dead=True)
        elif quiet > self.timing.probe_after + max(line.expect_s for line in waiting):
            self.probe(now, quiet)

    def probe(self, now: float, quiet: float) -> None:
        """A new marker after the lines that wait: Marlin answers it once it has run them, or asks for what it
        missed. One per ``probe_after``; while Marlin may be busy with an M400 no more than
        ``buffer`` lines of ours in flight, so that its 4-line queue keeps room for the stop."""
        if now - self.last_probe < self.timing.probe_after or self.hello is not None:
            return
        busy = any(line.text == "M400" for line in self.flying) and quiet < self.timing.busy_silence / 2
        if busy and len(self.flying) >= max(self.buffer, 2):
            return
        self.last_probe = now
        self.counters["probes"] += 1
        self.send_line(Line("", MARKER), now)

    def silence_limit(self, now: float) -> float:
        """How long a quiet board is waited for: longer while an M400 waits (a keepalive may be lost)."""
        if now - self.last_busy < self.timing.busy_silence or any(line.text == "M400" for line in self.flying):
            return self.timing.busy_silence
        return self.timing.silence

    def begin_estop(self, future: Future, now: float) -> None:
        """M410 ahead of everything (once Marlin has taken a move's G1 still on the wire); cancel every line not
        proven to have run; fail what is outstanding."""
        move = next((line for line in self.flying if line.text.startswith("G1 ")), None)
        self.stop_at = now if move is None else max(now, move.sent_at + self.wire_s(move) + self.timing.estop_hold)
        if self.stop_at <= now:
            self.stop_now(now)
        self.position_known = False
        message = (
            "emergency stop (M410 quick stop): the faces stopped wherever they were: clear() reads back where "
            "(Marlin takes 1-2 s before it answers again), then square() turns a face left part-way to the nearest "
            "quarter turn"
        )
        self.fail(DeviceFault(message, code="ESTOP", port=self.port), dead=False)
        self.resolve(future, {"acknowledged_s": 0.0, "done_through": self.done_mid, "stop_method": "M410"})

    def stop_now(self, now: float) -> None:
        self.send(STOP_LINE)
        self.stop_at, self.stop_again, self.stopped_at = None, now + self.timing.estop_retry, now

    def resync(self) -> None:
        """After a stop or a fault: a marker first, so that what Marlin still holds is answered before anything
        new is counted."""
        self.flying.clear()
        self.held.clear()
        self.unsent.appendleft(Line("", MARKER))
        self.resyncing = True

    def fail(self, err: LinkError, dead: bool) -> None:
        """Make ``err`` the fault (a dead one replaces a live one) and fail every line not answered."""
        err.done_through = self.done_mid
        if self.fault is None or (dead and not self.dead):
            self.fault = err
            self.on_fault(err)
        self.dead |= dead
        for line in self.outstanding:
            for future in (line.future,) if line.motion is None else (line.motion.received, line.motion.completed):
                if future is not None:
                    self.resolve(future, error=self.fault)
        if not dead:
            self.book.cancel(self.proven)
        self.unsent.clear()
        self.flying.clear()
        self.held.clear()
        if dead and self.hello is not None:
            self.resolve(self.hello, error=err)
