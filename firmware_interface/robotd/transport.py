"""The host's half of the protocol as a state machine: sequencing, window, retransmission, completions, faults.

``Transport`` does no I/O and keeps no clock: ``RigLink`` calls it under its
lock with the current time and gives it a ``write`` function. Future
results are not set here but queued on ``after`` (callables the link runs
once its lock is released), so user callbacks never run under the lock.

Rules (docs/protocol.md): go-back-N with cumulative acknowledgements; a
NAK or ``ack_timeout`` without progress resends every unacknowledged
frame, at most ``max_retransmits`` times for one frame; at most ``window``
frames in flight and at most ``queue`` motions on the device (sent and not
done). Completions are cumulative too: motions run in order, so ``DONE m``
(or ``done=m`` in a heartbeat) settles every motion up to m.

Version 2: turns queued with ``plannable`` set are packed, when sent, into
PLAN frames of consecutive motion ids, as many as the frame size, the
device's ``plan`` and the free device queue allow. Flow control counts
steps (motions), not frames: a PLAN of k turns takes k queue places.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass, field

from ..errors import AckTimeout, DeviceFault, DeviceReset, DeviceSilent, LinkError
from ..motion import Motion
from ..steps import CLEAR
from .protocol import (
    ERROR_CODES,
    MAX_LINE,
    NO_FAULT,
    Ack,
    Boot,
    Command,
    Done,
    Estop,
    EstopReply,
    FaultReport,
    HelloReply,
    Nak,
    Ping,
    Rej,
    Report,
    StatusQuery,
    next_mid,
    seq_add,
    seq_diff,
)
from .timing import LinkTiming


@dataclass
class Outgoing:
    """A sequenced frame, before and after it is sent. ``motions``: the steps it carries (one, several
    for a PLAN frame, none for CLEAR). A ``plannable`` TURN/PAIR may be merged into a PLAN when sent."""

    verb: str
    args: tuple[str, ...]
    motions: list[Motion] = field(default_factory=list)
    future: Future | None = None  # CLEAR: resolved on acknowledgement
    seq: int = 0
    frame: bytes = b""
    attempts: int = 0
    plannable: bool = False

    def text(self) -> str:
        return " ".join((self.verb, *self.args))


@dataclass
class _Waiter:
    future: Future
    first: float
    last: float
    frame: bytes


def report_dict(r: Report) -> dict:
    return {
        "boot_id": r.boot,
        "state": r.state,
        "received_through": r.rx,
        "done_through": r.done,
        "queued": r.q,
        "fault": None if r.fault == NO_FAULT else r.fault,
        "fault_motion": r.fmid,
        "fault_frame": r.fseq,
        "enabled": list(r.en) if r.en is not None else None,
        "quarter_ms": r.speed,
    }


class Transport:
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
        self.queries: dict[int, _Waiter] = {}
        self.estops: dict[int, _Waiter] = {}
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

    def _resolve(self, future: Future | None, value) -> None:
        if future is not None:
            self.after.append(lambda: _safe(future.set_result, value))

    def _reject(self, future: Future | None, err: BaseException) -> None:
        if future is not None:
            self.after.append(lambda: _safe(future.set_exception, err))

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
                packed = self._pack_plan(free)
                if packed is None:
                    return
                out = packed
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

    def _pack_plan(self, free: int) -> Outgoing | None:
        """Take the longest run of plannable turns at the head of the backlog that fits one PLAN frame
        and the free device queue; None to wait for more room (a bigger frame) first."""
        run: list[Outgoing] = []
        for out in self.backlog:
            if (
                not out.plannable
                or len(run) >= self.plan_max
                or (run and out.motions[0].mid != next_mid(run[-1].motions[0].mid))
            ):
                break
            run.append(out)
        if not self.pending:
            # the motors stand still: a one-turn frame starts them after the shortest time on the wire,
            # and the rest of the plan travels while that turn runs
            run = run[:1]
        # wait until a good share of the queue is free, so a long plan goes in few frames
        if free < min(len(run), max(1, self.queue // 2)):
            return None
        seq, first = self.next_seq, run[0].motions[0].mid
        tokens: list[str] = []
        length = len(f"{seq} PLAN {first}") + 6  # "*CRC\n"
        for out in run[:free]:
            token = out.motions[0].step.plan_token()
            if length + 1 + len(token) > MAX_LINE:
                break
            tokens.append(token)
            length += 1 + len(token)
        taken = [self.backlog.popleft() for _ in tokens]
        self.next_seq = seq_add(seq, 1)
        packed = Outgoing("PLAN", (str(first), *tokens), seq=seq, motions=[o.motions[0] for o in taken])
        packed.frame = Command(seq, packed.verb, packed.args).encode()
        return packed

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
            self.queries[token] = _Waiter(future, now, now, frame)
        self.write(frame, now)

    def send_estop(self, future: Future, now: float) -> None:
        token = self.token()
        frame = Estop(token).encode()
        self.estops[token] = _Waiter(future, now, now, frame)
        self.write(frame, now)

    # ------------------------------------------------------------ receiving

    def on_message(self, msg, now: float) -> None:
        """A device message; outside a session only answers to ESTOP and STATUS count."""
        self.last_rx = now
        self.counters["frames_received"] += 1
        if not self.connected:
            if isinstance(msg, Report) and msg.token in self.queries:
                self._resolve(self.queries.pop(msg.token).future, report_dict(msg))
            elif isinstance(msg, EstopReply):
                self._on_estop_reply(msg, now)
            return
        if isinstance(msg, EstopReply):
            self._on_estop_reply(msg, now)
        if self.dead or isinstance(msg, (HelloReply, EstopReply)):
            return
        if isinstance(msg, Boot):
            if msg.boot != self.boot:
                self.reset_detected(f"it announced boot id {msg.boot}, was {self.boot}", now)
        elif isinstance(msg, Report):
            self._on_report(msg, now)
        elif isinstance(msg, Ack):
            self.ack_through(msg.seq, now)
        elif isinstance(msg, Nak):
            self._on_nak(msg, now)
        elif isinstance(msg, Rej):
            self._on_rej(msg, now)
        elif isinstance(msg, Done):
            self.complete_through(msg.mid, now)
        elif isinstance(msg, FaultReport):
            self._on_fault_report(msg, now)

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
                self._resolve(motion.received, True)
            if out.verb == CLEAR:
                if self.pending:
                    self.settle(None, now)  # still unsettled: nothing confirms they ran
                self.fault, self.settle_pending = None, False
                self._resolve(out.future, True)
        self.rto_start = now
        self.pump(now)

    def complete_through(self, mid: int, now: float) -> None:
        """Motion ``mid`` and every motion sent before it are done."""
        index = next((i for i, m in enumerate(self.pending) if m.mid == mid), None)
        if index is None:
            return
        for _ in range(index + 1):
            motion = self.pending.popleft()
            self._resolve(motion.received, True)
            self._resolve(motion.completed, {"mid": motion.mid, "command": motion.command, "seq": motion.seq})
            self.counters["motions_done"] += 1
        self.done_mid = mid
        if motion.seq is not None:  # always set: a pending motion was sent in a frame
            self.ack_through(motion.seq, now)
        self.pump(now)

    def _on_nak(self, nak: Nak, now: float) -> None:
        self.counters["naks_received"] += 1
        self.ack_through(seq_add(nak.expected, -1), now)
        if not self.unacked or self.unacked[0].seq != nak.expected:
            return
        last_seq, last_time = self.go_back
        if last_seq == nak.expected and now - last_time < self.timing.ack_timeout / 2:
            return  # already went back for this one just now (a duplicated NAK)
        self.retransmit(now, f"NAK {nak.code}")

    def _on_rej(self, rej: Rej, now: float) -> None:
        refused = next((o for o in self.unacked if o.seq == rej.seq), None)
        self.ack_through(rej.seq, now)
        if rej.code == "NOSESSION":
            self.reset_detected("it refused a frame: no session open", now)
            return
        text = f" ({refused.text()})" if refused else ""
        if refused is not None:
            self._reject(refused.future, DeviceFault(f"CLEAR refused: {rej.code}", code=rej.code, port=self.port))
        code = rej.code
        if code == "FAULTED" and self.report is not None and self.report.fault != NO_FAULT:
            code = self.report.fault
        reason = ERROR_CODES.get(rej.code, "unknown error code")
        self.device_fault(
            code, f"device refused frame #{rej.seq}{text}: {rej.code} ({reason}) {rej.detail}".rstrip(), None, now
        )

    def _on_fault_report(self, f: FaultReport, now: float) -> None:
        culprit = next((m for m in self.pending if m.mid == f.mid), None)
        self.complete_through(f.done, now)
        where = []
        if f.motor:
            where.append(f"motor {f.motor}")
        if f.mid:
            where.append(f"motion {f.mid}" + (f" ({culprit.command})" if culprit else ""))
        if f.seq:
            where.append(f"frame #{f.seq}")
        text = f"{f.code} ({ERROR_CODES.get(f.code, 'unknown error code')})"
        self.device_fault(
            f.code,
            f"device fault {text}{' at ' + ', '.join(where) if where else ''}; done through motion {f.done}",
            f.done,
            now,
        )

    def _on_report(self, r: Report, now: float) -> None:
        if r.boot != self.boot:
            self.reset_detected(f"its boot id changed from {self.boot} to {r.boot}", now)
            return
        if r.state == "IDLE":
            self.reset_detected("it reports no open session", now)
            return
        self.report = r
        self.ack_through(r.rx, now)
        self.complete_through(r.done, now)
        waiter = self.queries.pop(r.token, None) if r.token is not None else None
        if waiter is not None:
            self._resolve(waiter.future, report_dict(r))
        if r.fault != NO_FAULT:
            self.device_fault(
                r.fault,
                f"device reports a {r.fault} fault "
                f"({ERROR_CODES.get(r.fault, 'unknown error code')})"
                + (f" at motion {r.fmid}" if r.fmid else "")
                + (f", frame #{r.fseq}" if r.fseq else ""),
                r.done,
                now,
            )

    def _on_estop_reply(self, reply: EstopReply, now: float) -> None:
        waiter = self.estops.pop(reply.token, None)
        if waiter is not None:
            self._resolve(waiter.future, {"acknowledged_s": now - waiter.first, "done_through": reply.done})
            for other in self.estops.values():  # an earlier request's answer may have been lost
                self._resolve(other.future, {"acknowledged_s": now - other.first, "done_through": reply.done})
            self.estops.clear()
        if self.settle_pending and not self.dead:
            self.settle(reply.done, now)

    # ------------------------------------------------------------ faults

    def device_fault(self, code: str, message: str, done: int | None, now: float) -> None:
        if self.fault is None:
            self.fail(DeviceFault(message, code=code, port=self.port), dead=False, now=now, done=done)
        elif self.settle_pending and done is not None:
            self.settle(done, now)

    def reset_detected(self, why: str, now: float) -> None:
        self.fail(
            DeviceReset(
                f"the device was reset mid-sequence ({why}); its queue and session are gone, "
                f"motions after {self.done_mid} were not confirmed: connect() again and home "
                "before going on",
                port=self.port,
            ),
            dead=True,
            now=now,
        )

    def fail(self, err: LinkError, *, dead: bool, now: float, done: int | None = None, query: bool = True) -> bool:
        """Record a fault (the first one wins, unless the link now dies). Returns True if it is new."""
        new = self.fault is None or (dead and not self.dead)
        if new:
            self.fault = err
            for out in self.backlog:
                for motion in out.motions:
                    self._reject(motion.received, err)
                    self._reject(motion.completed, err)
                self._reject(out.future, err)
            self.backlog.clear()
        if dead and not self.dead:
            self.dead = True
            for waiter in (*self.queries.values(), *self.estops.values()):
                self._reject(waiter.future, err)
            self.queries.clear()
            self.estops.clear()
            for out in self.unacked:
                self._reject(out.future, err)
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
            self._reject(motion.received, err)
            self._reject(motion.completed, err)
        self.pending.clear()
        self.settle_pending = False

    # ------------------------------------------------------------ time

    def tick(self, now: float) -> None:
        if self.dead:
            return
        t = self.timing
        for token, w in list(self.queries.items()):
            if now - w.first >= t.query_timeout:
                del self.queries[token]
                self._reject(w.future, AckTimeout(f"no answer to STATUS within {t.query_timeout} s", port=self.port))
            elif now - w.last >= t.ack_timeout:
                w.last = now
                self.write(w.frame, now)
        for w in list(self.estops.values()):
            if now - w.first >= t.estop_timeout:
                self.fail(
                    AckTimeout(
                        f"emergency stop not acknowledged within {t.estop_timeout} s: cut the motor power",
                        port=self.port,
                    ),
                    dead=True,
                    now=now,
                )
                return
            if now - w.last >= t.estop_retry:
                w.last = now
                self.write(w.frame, now)
        if not self.connected:
            return
        if self.unacked and now - self.rto_start >= t.ack_timeout:
            self.retransmit(now, "timeout")
            if self.dead:
                return
        quiet = now - self.last_rx
        if quiet >= t.silence:
            self.fail(
                DeviceSilent(
                    f"nothing heard from the device for {quiet:.2f} s (hung, powered off, or a "
                    f"cable fault); motions after {self.done_mid} were not confirmed",
                    port=self.port,
                ),
                dead=True,
                now=now,
            )
            return
        if quiet >= t.probe_after and now - self.last_probe >= min(self.heartbeat, t.probe_after / 3):
            self.last_probe = now
            self.send_query(now)
        if now - self.last_tx >= self.heartbeat:
            self.write(Ping(self.token()).encode(), now)


def _safe(setter, value) -> None:
    try:
        setter(value)
    except InvalidStateError:
        pass
