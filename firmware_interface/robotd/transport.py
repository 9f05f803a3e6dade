"""The host's half of the protocol as a state machine: ``Transport``, what the device's messages and the clock do.

``Transport`` extends ``flow.FlowControl`` (sequencing, window,
retransmission, completions, faults; its docstring has the rules, and why
nothing here does I/O or sets a future under the link's lock) with the
device's side: ACK, NAK, REJ, DONE, FAULT, status reports and heartbeats,
BOOT (a reset), the answers to STATUS and ESTOP; and with ``tick``, the
timers: retransmission, PING, STATUS probes, silence, request timeouts.
"""

from __future__ import annotations

from ..errors import AckTimeout, DeviceFault, DeviceReset, DeviceSilent
from .flow import FlowControl
from .protocol import (
    ERROR_CODES,
    NO_FAULT,
    Ack,
    Boot,
    Done,
    EstopReply,
    FaultReport,
    HelloReply,
    Nak,
    Ping,
    Rej,
    Report,
    seq_add,
)


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


class Transport(FlowControl):
    """``FlowControl`` plus what the device's messages and the clock do (see the module docstring)."""

    # ------------------------------------------------------------ receiving

    def on_message(self, msg, now: float) -> None:
        """A device message; outside a session only answers to ESTOP and STATUS count."""
        self.last_rx = now
        self.counters["frames_received"] += 1
        if not self.connected:
            if isinstance(msg, Report) and msg.token in self.queries:
                self.resolve(self.queries.pop(msg.token).future, report_dict(msg))
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
            self.reject(refused.future, DeviceFault(f"CLEAR refused: {rej.code}", code=rej.code, port=self.port))
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
            self.resolve(waiter.future, report_dict(r))
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
            self.resolve(waiter.future, {"acknowledged_s": now - waiter.first, "done_through": reply.done})
            for other in self.estops.values():  # an earlier request's answer may have been lost
                self.resolve(other.future, {"acknowledged_s": now - other.first, "done_through": reply.done})
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

    # ------------------------------------------------------------ time

    def tick(self, now: float) -> None:
        if self.dead:
            return
        t = self.timing
        for token, w in list(self.queries.items()):
            if now - w.first >= t.query_timeout:
                del self.queries[token]
                self.reject(w.future, AckTimeout(f"no answer to STATUS within {t.query_timeout} s", port=self.port))
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
