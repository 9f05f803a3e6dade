"""The host's half of Marlin's line protocol as a state machine: numbered lines, oks, resends, errors, timers.

``MarlinSession`` does no I/O of its own: ``MarlinLink`` calls it under its
lock with the time and a ``write`` function; future results are queued on
``after`` and set once the lock is released (as ``GrblSession`` does).

* Every line is numbered and checksummed; at most ``buffer`` lines await
  their ``ok``. ``Resend: n`` sends again from line n (Marlin has already
  dropped the lines after the bad one, and refuses any line number it has
  seen: nothing runs twice).
* Truthful completion: each move is ``G1`` then ``M400``; Marlin answers
  M400 only once the planner is empty, and that ``ok`` completes the
  motion. Cost: the planner drains between moves (no look-ahead blending,
  one round trip per move; about 1-3 ms on USB), which a cube rig, whose
  faces must stop square before the next turn anyway, hardly notices.
* Plain ``ok`` carries no line number, so oks are counted (the ``ok`` that
  follows a ``Resend`` belongs to the refused line). With ADVANCED_OK
  (``ok N<n> ...``) the number is used instead and counting is not needed.
  When nothing is heard for ``probe_after`` while lines await an ok (a
  lost line or a lost ok), the oldest such line is sent again: Marlin runs
  it if it never got it, or answers ``Resend: last+1``, which tells what it
  has done.
* ``Error:`` other than a bad line number or checksum is a ``DeviceFault``
  (code ERROR, or HALTED for kill()); ``start`` while connected is a
  ``DeviceReset``; nothing heard for ``silence`` s while a line awaits its
  ok (``busy: processing`` counts as heard; ``busy_silence`` while an M400
  waits, since a lost keepalive is no sign of a dead board) is ``DeviceSilent``.
* ``M112`` (``begin_estop``) is repeated until Marlin says it halted.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

from ..errors import DeviceFault, DeviceReset, DeviceSilent, LinkError
from ..line_estop import PendingEstop
from ..motion import Motion, settle_after
from .dialect import Reply, numbered, parse_position, reset_line_numbers
from .timing import MarlinTiming


@dataclass
class _Line:
    n: int
    text: str
    motion: Motion | None = None
    role: str = ""  # "received" (the G1 of a move) or "completed"
    future: Future | None = None  # query(): M114's position


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
        self.timing, self.port, self.buffer, self.history_size = timing, port, buffer, history
        self.send, self.after, self.on_fault = write, after, on_fault
        self.banner: str | None = None
        self.done_mid = 0
        self.counters = {
            "lines_sent": 0,
            "lines_confirmed": 0,
            "resends": 0,
            "line_errors": 0,
            "probes": 0,
            "busy": 0,
            "stray_oks": 0,
            "motions_done": 0,
        }
        self.reset(0.0)

    def reset(self, now: float) -> None:
        """Forget the session (callers fail what was outstanding first)."""
        self.connected = self.dead = self.halted = self.advanced = self.busy = self.probing = False
        self.fault: LinkError | None = None
        self.hello: Future | None = None
        self.hello_due = self.hold_until = self.last_probe = 0.0
        self.last_rx = self.waiting_since = now
        self.next_n, self.swallow, self.received_n = 1, 0, 0
        self.unsent: deque[_Line] = deque()
        self.unconf: deque[_Line] = deque()
        self.history: dict[int, _Line] = {}
        self.estop: PendingEstop | None = None
        self.position: dict | None = None

    def resolve(self, future: Future | None, value=None, error: BaseException | None = None) -> None:
        settle_after(self.after, future, value, error)

    # ------------------------------------------------------------ replies

    def on_line(self, reply: Reply, now: float) -> None:
        self.last_rx, self.busy = now, reply.kind == "busy"
        if reply.kind == "banner":
            self.banner = f"Marlin {reply.text}"
        if self.hello is not None:
            return self.handshake_reply(reply, now)
        if reply.kind == "ok":
            self.on_ok(reply)
        elif reply.kind == "resend":
            self.on_resend(reply.n)
        elif reply.kind == "busy":
            self.counters["busy"] += 1
        elif reply.kind == "position":
            self.position = parse_position(reply.text)
        elif reply.kind == "error":
            self.on_error(reply, now)
        elif reply.kind == "start" and self.connected:
            self.fail(
                DeviceReset("the board reset (start banner): queued moves are lost, connect() again", port=self.port),
                dead=True,
            )
        self.pump(now)

    def handshake_reply(self, reply: Reply, now: float) -> None:
        if reply.kind == "ok":
            self.resolve(self.hello, True)
            self.hello = None
            self.hold_until = now + self.timing.settle
        elif reply.kind in ("start", "banner"):
            self.hello_due = now + 0.05  # it just booted: greet it once the banner is out

    def on_ok(self, reply: Reply) -> None:
        if reply.n is not None:
            self.advanced, self.received_n = True, max(self.received_n, reply.n)
            while self.unconf and self.unconf[0].n <= reply.n:
                self.confirm(self.unconf.popleft())
            while self.unsent and self.unsent[0].n <= reply.n:
                self.confirm(self.unsent.popleft())
        elif self.advanced:
            pass  # the ok after a Resend: no line of ours
        elif self.swallow:
            self.swallow -= 1
        elif self.unconf and time.monotonic() >= self.hold_until:
            self.confirm(self.unconf.popleft())
        else:
            self.counters["stray_oks"] += 1

    def on_resend(self, n: int | None) -> None:
        self.counters["resends"] += 1
        if n is None or not 1 <= n <= self.next_n:
            return  # misread: the next Resend will say it again
        if n <= self.received_n:
            return  # an old Resend doubled by the line: "ok N" said n arrived
        if self.probing:  # answering our probe: Marlin was idle, all before n ran
            while self.unconf and self.unconf[0].n < n:
                self.confirm(self.unconf.popleft())
            self.probing, self.swallow = False, 0
        if not self.advanced:
            self.swallow += 1
        again = [line for line in self.unconf if line.n >= n]
        first = again[0].n if again else (self.unsent[0].n if self.unsent else self.next_n)
        older = [self.history[k] for k in range(n, first) if k in self.history]
        if len(older) != first - n:
            return self.fail(
                LinkError(f"Marlin asks for line {n} again, which is no longer kept", port=self.port), dead=True
            )
        self.unconf = deque(line for line in self.unconf if line.n < n)
        self.unsent.extendleft(reversed([_Line(o.n, o.text) for o in older] + again))

    def on_error(self, reply: Reply, now: float) -> None:
        if reply.line_error:
            self.counters["line_errors"] += 1
            return
        if reply.halted:
            self.halted = True
            if self.estop is not None:
                self.estop.confirm(now, self.done_mid)
                self.estop = None
                return
            return self.fail(
                DeviceFault(
                    f"Marlin halted: {reply.text} (reset the board, then connect())", code="HALTED", port=self.port
                ),
                dead=False,
            )
        self.fail(DeviceFault(f"Marlin reported: Error:{reply.text}", code="ERROR", port=self.port), dead=False)

    def confirm(self, line: _Line) -> None:
        self.counters["lines_confirmed"] += 1
        motion = line.motion
        if line.future is not None:
            self.resolve(line.future, dict(self.position or {}))
        if motion is None:
            return
        self.resolve(motion.received, True)
        if line.role == "completed" and not motion.completed.done():
            self.resolve(motion.completed, {"mid": motion.mid, "command": motion.command, "line": line.n})
            self.done_mid = max(self.done_mid, motion.mid)
            self.counters["motions_done"] += 1

    # ------------------------------------------------------------ sending, timers, faults

    def queue(
        self, text: str, motion: Motion | None = None, role: str = "completed", future: Future | None = None
    ) -> None:
        line = _Line(self.next_n, text, motion, role, future)
        self.next_n += 1
        self.history[line.n] = line
        self.history.pop(line.n - self.history_size, None)
        self.unsent.append(line)

    def pump(self, now: float) -> None:
        while (
            self.unsent
            and len(self.unconf) < self.buffer
            and now >= self.hold_until
            and self.fault is None
            and self.connected
        ):
            line = self.unsent.popleft()
            if not self.unconf:
                self.waiting_since = now
            self.unconf.append(line)
            self.counters["lines_sent"] += 1
            self.send(numbered(line.n, line.text))

    def tick(self, now: float) -> None:
        if self.hello is not None and now >= self.hello_due:
            self.hello_due = now + self.timing.sync_interval
            self.send(reset_line_numbers())
        if self.estop is not None and self.estop.tick(now):
            self.estop = None
        self.pump(now)
        if not self.unconf or self.fault is not None:
            return
        quiet = now - max(self.last_rx, self.waiting_since)
        if quiet > self.silence_limit():
            self.fail(
                DeviceSilent(
                    f"no reply for {quiet:.1f} s with line {self.unconf[0].n} ({self.unconf[0].text}) unanswered",
                    port=self.port,
                ),
                dead=True,
            )
        elif not self.busy and quiet > self.timing.probe_after and now - self.last_probe > self.timing.probe_after:
            line, self.last_probe, self.probing, self.swallow = self.unconf[0], now, True, 0
            self.counters["probes"] += 1
            self.send(numbered(line.n, line.text))

    def silence_limit(self) -> float:
        """How long a quiet board is waited for: longer while it is busy or may be.

        An M400 is answered only once the planner is empty; meanwhile Marlin
        says ``busy: processing`` every M113 interval, and one of those lost
        on a noisy line must not end the session.
        """
        if self.busy or self.unconf[0].text.startswith("M400"):
            return self.timing.busy_silence
        return self.timing.silence

    def begin_estop(self, future: Future, now: float) -> None:
        self.send(b"M112\n")
        self.estop = PendingEstop(
            future, now, timing=self.timing, what="M112", port=self.port, resend=self.resend_estop, after=self.after
        )
        self.halted = True
        self.fail(
            DeviceFault("emergency stop (M112): Marlin is halted until reset", code="ESTOP", port=self.port),
            dead=False,
        )

    def resend_estop(self, now: float) -> None:
        self.send(b"M112\n")

    def fail(self, err: LinkError, dead: bool) -> None:
        """Make ``err`` the fault (a dead one replaces a live one) and fail every line not confirmed."""
        err.done_through = self.done_mid
        if self.fault is None or (dead and not self.dead):
            self.fault = err
            self.on_fault(err)
        self.dead |= dead
        for line in (*self.unconf, *self.unsent):
            for future in (line.future,) if line.motion is None else (line.motion.received, line.motion.completed):
                if future is not None:
                    self.resolve(future, error=self.fault)
        self.unconf.clear()
        self.unsent.clear()
        if dead and self.hello is not None:
            self.resolve(self.hello, error=err)
