"""The frames and motions in flight of robotd's protocol: sequencing, window, retransmission, completions.

``FlowControl`` is the part of ``transport.Transport`` that sends and settles
(``Transport`` adds what the device's messages and the clock mean). It does
no I/O and keeps no clock: ``RigLink`` calls it under its lock with the
current time and gives it a ``write`` function. Future results are not set
here but queued on ``after`` (callables the link runs once its lock is
released), so user callbacks never run under the lock.

Rules (docs/protocol.md): go-back-N with cumulative acknowledgements; a
NAK or ``ack_timeout`` without progress resends every unacknowledged
frame, at most ``max_retransmits`` times for one frame; at most ``window``
frames in flight and at most ``queue`` motions on the device (sent and not
done). Completions are cumulative too: motions run in order, so ``DONE m``
(or ``done=m`` in a heartbeat) settles every motion up to m.

Version 2: turns queued with ``plannable`` set are packed, when sent, into
PLAN frames of consecutive motion ids, as many as the frame size, the
device's ``plan`` and the free device queue allow (``outgoing.pack_plan``).
Flow control counts steps (motions), not frames: a PLAN of k turns takes k
queue places.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future

from ..errors import AckTimeout, DeviceFault, LinkError
from ..motion import Motion, settle_after
from ..steps import CLEAR
from .outgoing import Outgoing, Waiter, pack_plan
from .protocol import ERROR_CODES, NO_FAULT, Command, Estop, HelloReply, Report, StatusQuery, seq_add, seq_diff
from .timing import LinkTiming


class FlowControl:
    def __init__(self, timing: LinkTiming, port: str, write, note, after: list):
        self.timing, self.port = timing, port
        self._write_raw, self._note, self.after = write, note, after
        self.counters = {
            "frames_sent": 0,
            "frames_received": 0,
            "retransmissions": 0,
            "naks_received": 0,
            "decode_errors": 0,
            "motions_done": 0,
        }
        self._token = 0
        self.reset(0.0)

    def reset(self, now: float) -> None:
        """Forget the session (callers fail what was outstanding first)."""
        self.connected = False
        self.boot: str | None = None
        self.next_seq, self.next_mid = 1, 1
        self.window, self.queue = self.timing.window, 16
        self.proto, self.plan_max = 1, 1
        self.heartbeat = self.timing.heartbeat
        self.unacked: deque[Outgoing] = deque()
        self.pending: deque[Motion] = deque()
        self.backlog: deque[Outgoing] = deque()
        self.fault: LinkError | None = None
        self.dead = False
        self.settle_pending = False
        self.done_mid = 0
        self.report: Report | None = None
        self.queries: dict[int, Waiter] = {}
        self.estops: dict[int, Waiter] = {}
        self.rto_start = self.last_rx = self.last_tx = self.last_probe = now
        self.go_back: tuple[int | None, float] = (None, 0.0)

    def establish(self, reply: HelloReply, first_seq: int, now: float) -> None:
        # the link checked that the reply has every field of a session before establishing it
        assert reply.window is not None and reply.queue is not None and reply.watchdog is not None
        assert reply.fault is not None
        self.boot = reply.boot
        self.next_seq = first_seq
        self.window = max(1, min(self.timing.window, reply.window))
        self.queue = max(1, reply.queue)
        self.proto = reply.proto
        self.plan_max = max(1, min(reply.plan or 1, self.queue))
        self.heartbeat = max(self.timing.poll, min(self.timing.heartbeat, reply.watchdog / 4000))
        self.connected = True
        self.last_rx = self.last_tx = self.rto_start = now
        if reply.fault != NO_FAULT:
            self.fault = DeviceFault(
                f"the device has a {reply.fault} fault latched from before this session "
                f"({ERROR_CODES.get(reply.fault, 'unknown code')}): clear() it first",
                code=reply.fault,
                port=self.port,
            )

    def token(self) -> int:
        self._token = self._token % 65535 + 1
        return self._token

    # ------------------------------------------------------------ futures (resolved after the lock)

    def resolve(self, future: Future | None, value) -> None:
        settle_after(self.after, future, value)

    def reject(self, future: Future | None, err: BaseException) -> None:
        settle_after(self.after, future, error=err)

    # ------------------------------------------------------------ sending

    def write(self, frame: bytes, now: float) -> None:
        self._write_raw(frame, now)
        self.last_tx = now
        self.counters["frames_sent"] += 1

    def submit(self, out: Outgoing, now: float) -> None:
        self.backlog.append(out)
        self.pump(now)

    def pump(self, now: float) -> None:
        """Send from the backlog while the window and the device queue have room."""
        while self.backlog and self.connected and not self.dead:
            out = self.backlog[0]
            if (self.fault is not None and out.verb != CLEAR) or len(self.unacked) >= self.window:
                return
            free = self.queue - len(self.pending)
            if out.plannable and self.proto >= 2:
                packed = pack_plan(
                    self.backlog, self.next_seq, free, queue=self.queue, plan_max=self.plan_max, idle=not self.pending
                )
                if packed is None:
                    return
                self.next_seq, out = seq_add(self.next_seq, 1), packed
            elif out.motions and len(out.motions) > free:
                return
            else:
                self.backlog.popleft()
                out.seq, self.next_seq = self.next_seq, seq_add(self.next_seq, 1)
                out.frame = Command(out.seq, out.verb, out.args).encode()
            for motion in out.motions:
                motion.seq = out.seq
                self.pending.append(motion)
            if not self.unacked:
                self.rto_start = now
            self.unacked.append(out)
            self.write(out.frame, now)

    def retransmit(self, now: float, why: str) -> None:
        oldest = self.unacked[0]
        if oldest.attempts >= self.timing.max_retransmits:
            if now - self.last_rx >= self.timing.probe_after:
                return  # nothing heard at all: the silence check will name it
            self.fail(
                AckTimeout(
                    f"no acknowledgement for frame #{oldest.seq} ({oldest.text()}) after "
                    f"{oldest.attempts} retransmissions",
                    port=self.port,
                ),
                dead=True,
                now=now,
            )
            return
        oldest.attempts += 1
        frames = list(self.unacked)
        self._note(f"resend #{oldest.seq}..#{frames[-1].seq} after {why} (attempt {oldest.attempts})", now)
        self.counters["retransmissions"] += len(frames)
        self.rto_start, self.go_back = now, (oldest.seq, now)
        for out in frames:
            if self.dead:  # the port failed while writing
                return
            self.write(out.frame, now)

    def send_query(self, now: float, future: Future | None = None) -> None:
        token = self.token()
        frame = StatusQuery(token).encode()
        if future is not None:
            self.queries[token] = Waiter(future, now, now, frame)
        self.write(frame, now)

    def send_estop(self, future: Future, now: float) -> None:
        token = self.token()
        frame = Estop(token).encode()
        self.estops[token] = Waiter(future, now, now, frame)
        self.write(frame, now)

    # ------------------------------------------------------------ acknowledgements and completions

    def ack_through(self, seq: int, now: float) -> None:
        """Every frame up to ``seq`` reached the device."""
        if not self.unacked:
            return
        k = seq_diff(seq, self.unacked[0].seq)
        if k < 0 or k >= len(self.unacked):
            return
        for _ in range(k + 1):
            out = self.unacked.popleft()
            for motion in out.motions:
                self.resolve(motion.received, True)
            if out.verb == CLEAR:
                if self.pending:
                    self.settle(None, now)  # still unsettled: nothing confirms they ran
                self.fault, self.settle_pending = None, False
                self.resolve(out.future, True)
        self.rto_start = now
        self.pump(now)

    def complete_through(self, mid: int, now: float) -> None:
        """Motion ``mid`` and every motion sent before it are done."""
        index = next((i for i, m in enumerate(self.pending) if m.mid == mid), None)
        if index is None:
            return
        for _ in range(index + 1):
            motion = self.pending.popleft()
            self.resolve(motion.received, True)
            self.resolve(motion.completed, {"mid": motion.mid, "command": motion.command, "seq": motion.seq})
            self.counters["motions_done"] += 1
        self.done_mid = mid
        if motion.seq is not None:  # always set: a pending motion was sent in a frame
            self.ack_through(motion.seq, now)
        self.pump(now)

    # ------------------------------------------------------------ faults

    def fail(self, err: LinkError, *, dead: bool, now: float, done: int | None = None, query: bool = True) -> bool:
        """Record a fault (the first one wins, unless the link now dies). Returns True if it is new."""
        new = self.fault is None or (dead and not self.dead)
        if new:
            self.fault = err
            for out in self.backlog:
                for motion in out.motions:
                    self.reject(motion.received, err)
                    self.reject(motion.completed, err)
                self.reject(out.future, err)
            self.backlog.clear()
        if dead and not self.dead:
            self.dead = True
            for waiter in (*self.queries.values(), *self.estops.values()):
                self.reject(waiter.future, err)
            self.queries.clear()
            self.estops.clear()
            for out in self.unacked:
                self.reject(out.future, err)
            self.unacked.clear()
        if self.dead:
            self.settle(None, now)
        elif done is not None:
            self.settle(done, now)
        elif self.pending:
            self.settle_pending = True  # the device's done count, once faulted, tells what ran
            if query:
                self.send_query(now)
        return new

    def settle(self, done: int | None, now: float) -> None:
        """After a fault: motions up to ``done`` ran, every other one failed."""
        if done is not None:
            self.complete_through(done, now)
        err = self.fault or LinkError("link closed", port=self.port)
        err.done_through = self.done_mid
        for motion in self.pending:
            self.reject(motion.received, err)
            self.reject(motion.completed, err)
        self.pending.clear()
        self.settle_pending = False
