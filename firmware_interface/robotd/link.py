"""Host side of the firmware link: ``RigLink`` drives a rig over pyserial with protocol v2 (or v1).

The handshake asks for version 2; a version-1 device answers ``proto=1``
without a session, and the link greets it again at once with ``proto=1``
and runs a version-1 session (``info["protocol"]``). ``plan`` then sends
TURN/PAIR frames instead of PLAN, so callers need not care; ``setup_motor``
and ``jog`` need version 2.

Threading model
---------------
A ``RigLink`` owns one I/O thread (``riglink <port>``, a daemon thread) that
reads the port, decodes frames and runs every timer: retransmission,
heartbeat, silence detection, handshake and emergency-stop retries. All
state sits behind one lock; every public method is thread-safe.

* Never block: ``turn``, ``turn_pair``, ``moves``, ``plan``, ``home``, ``enable``,
  ``disable``, ``set_speed``, ``setup_motor``, ``jog`` (queue steps, return Motions),
  ``estop(wait=False)`` (returns a Future), ``status``.
* Block: ``connect``, ``wait``, ``Motion.wait``, ``estop()`` (at most
  ``timing.estop_timeout``), ``query``, ``clear``, ``close``.
* Futures and the ``on_fault`` callback complete in the I/O thread (or the
  calling thread), never under the lock; keep callbacks short.

From an asyncio event loop (the daemon): ``await asyncio.wrap_future(
motion.completed)``; ``turn``/``estop(wait=False)``/``status`` directly;
``connect``/``clear``/``query`` through ``loop.run_in_executor``.

Faults: any fault stops the link (no new frames are sent, queued motions
fail with the ``LinkError``) and dumps the last frames each way to the
``firmware_interface.robotd.link`` logger (and to ``fault_log_dir`` if given).
``log_limits`` bounds the disk: the trace rotates by size, and only the
newest fault dumps stay (``framelog.LogLimits``).
A device fault (stall, limit, emergency stop, ...) is cleared with
``clear()``; a reset, silence, unplug or retransmission failure needs
``connect()`` again (then home the rig: its position is unknown).

Where the parts live: port.py (the port, the I/O thread, the lock and fault
reports: ``RigPort``, the base class), handshake.py (greeting the device),
transport.py and flow.py (the protocol's state machine), commands.py (the
command set, mixed in).
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future

from ..errors import ConfigError, DeviceFault, LinkError, PortError
from ..motion import Motion, result_within
from ..steps import CLEAR, RIGS, Rig, Step
from .commands import RigCommands
from .framelog import LogLimits
from .handshake import Handshake
from .outgoing import Outgoing
from .port import RigPort
from .protocol import DecodeError, HelloReply, Text, next_mid, parse_device
from .timing import LinkTiming
from .transport import Transport, report_dict


class RigLink(RigPort, RigCommands):
    """A connection to one rig's firmware (see the module docstring for threads and faults)."""

    def __init__(
        self,
        port: str,
        *,
        timing: LinkTiming | None = None,
        log_size: int = 100,
        trace: str | os.PathLike | None = None,
        fault_log_dir: str | os.PathLike | None = None,
        log_limits: LogLimits | None = None,
        on_fault: Callable[[LinkError], None] | None = None,
    ):
        if not isinstance(port, str) or not port:
            raise ConfigError(f"port must be a device path or pyserial URL, got {port!r}")
        super().__init__(
            port,
            timing or LinkTiming.for_port(port),
            log_size=log_size,
            trace=trace,
            fault_log_dir=fault_log_dir,
            log_limits=log_limits or LogLimits(),
            on_fault=on_fault,
        )
        self._t = Transport(self.timing, port, self._write_port, self._note, self._after)
        self._info: dict | None = None
        self._greeting: Handshake | None = None  # while connect() waits for the device's answer
        self._motors: tuple[str, ...] = ()
        self._rig: Rig | None = None

    # ------------------------------------------------------------ what the I/O thread calls

    def _lost_port(self, why: str) -> None:
        self._port_lost = True
        err = PortError(why, port=self.port)
        self._t.fail(err, dead=True, now=time.monotonic())
        if self._greeting is not None:
            self._greeting.fail(err)

    def _on_bytes(self, data: bytes, now: float) -> None:
        for item in self._decoder.feed(data):
            self._log("<", item.raw, now)
            msg = item if isinstance(item, (DecodeError, Text)) else parse_device(item)
            if isinstance(msg, DecodeError):
                self._t.counters["decode_errors"] += 1
            if isinstance(msg, (DecodeError, Text)):
                if self._greeting is not None:
                    self._greeting.heard(item.raw)
                continue
            if self._greeting is not None:
                self._greeting.on_message(msg, item.raw, now)
            self._t.on_message(msg, now)

    def _tick(self, now: float) -> None:
        frame = self._greeting.repeat(now) if self._greeting is not None else None
        if frame is not None:
            self._t.write(frame, now)
        self._t.tick(now)

    # ------------------------------------------------------------ connect

    def connect(self) -> dict:
        """Open the port if needed, wait for the device and open a session; returns the handshake as a dict.

        Boards that reset when the port opens are expected: HELLO is repeated
        until the device answers, for up to ``timing.boot_timeout`` seconds.
        Raises ``PortError``, ``HandshakeError`` or ``ProtocolVersionError``.
        """
        if self._closing:
            raise LinkError("the link was closed", port=self.port)
        self._open_port()
        with self._critical():
            now = time.monotonic()
            if self._t.pending or self._t.backlog or self._t.unacked:
                self._t.fail(
                    LinkError("a new session replaced the one this motion was sent in", port=self.port),
                    dead=True,
                    now=now,
                )
            self._t.reset(now)
            self._reported, self._info = None, None
            session, first_seq = f"{random.getrandbits(32):08X}", random.randrange(1, 65536)
            greeting = Handshake(session, first_seq, now, self.timing, self.port, self._traffic, self._after)
            self._greeting = greeting
            self._tick(now)
        try:
            reply = greeting.future.result(timeout=self.timing.boot_timeout)
        except TimeoutError:
            raise greeting.timeout_error() from None
        finally:
            with self._lock:
                self._greeting = None
        return self._establish(reply, greeting)

    def _establish(self, reply: HelloReply, greeting: Handshake) -> dict:
        greeting.check(reply)
        with self._critical():
            self._t.establish(reply, greeting.first_seq, time.monotonic())
            self._reported = self._t.fault  # a fault latched before we came is no news: info says it
            motors = reply.motors or ()  # checked above: never None here
            self._motors, self._rig = motors, RIGS.get(reply.rig or "")
            self._info = {
                "port": self.port,
                "protocol": reply.proto,
                "firmware": reply.fw,
                "rig": reply.rig,
                "motors": list(motors),
                "boot_id": reply.boot,
                "window": self._t.window,
                "queue": reply.queue,
                "heartbeat_ms": reply.hb,
                "watchdog_ms": reply.watchdog,
                "fault": None if reply.fault == "NONE" else reply.fault,
                "session": greeting.session,
                "plan": reply.plan,
                "rate": reply.rate,
            }
            return dict(self._info)

    @property
    def info(self) -> dict | None:
        """The handshake of the current session (None before ``connect``)."""
        with self._lock:
            return dict(self._info) if self._info else None

    # ------------------------------------------------------------ commands

    def _check_usable(self) -> None:
        if not self._t.connected:
            raise LinkError("not connected: call connect() first", port=self.port)
        if self._t.fault is not None:
            raise self._t.fault

    def _submit(self, make: Callable[[int], Step]) -> Motion:
        return self._submit_many([make])[0]

    def _submit_many(self, makers: list[Callable[[int], Step]], plannable: bool = False) -> list[Motion]:
        """Queue steps with consecutive motion ids, all or none (a maker's ConfigError sends nothing);
        ``plannable`` TURN/PAIR steps go out packed in PLAN frames on a version-2 session."""
        with self._critical():
            self._check_usable()
            mid, steps = self._t.next_mid, []
            for make in makers:
                steps.append(make(mid))
                mid = next_mid(mid)
            self._t.next_mid = mid
            motions = [Motion(step) for step in steps]
            now = time.monotonic()
            for motion in motions:
                self._t.backlog.append(Outgoing(motion.step.verb, motion.step.args(), [motion], plannable=plannable))
            self._t.pump(now)
        return motions

    def _protocol(self) -> int:
        """The version of the current session (0 when not connected)."""
        return self._t.proto if self._t.connected else 0

    def wait(self, motions: Iterable[Motion] | None = None, timeout: float | None = None) -> list[dict]:
        """Block until the motions are done; raise the first failure.

        Without ``motions``: everything queued so far, and the link's fault if it has one
        (motions that failed before the call are no longer queued, but the fault stays).
        """
        check_fault = motions is None
        if motions is None:
            with self._lock:
                motions = [*self._t.pending, *(m for o in self._t.backlog for m in o.motions)]
        deadline = None if timeout is None else time.monotonic() + timeout
        results = [m.wait(None if deadline is None else max(0.0, deadline - time.monotonic())) for m in motions]
        if check_fault and self._t.fault is not None:
            raise self._t.fault
        return results

    # ------------------------------------------------------------ stop, status, clear

    def estop(self, wait: bool = True) -> dict | Future:
        """Emergency stop: sent at once, ahead of anything queued, repeated until the device confirms.

        Every motion not yet done fails (those the device finished first still
        complete). Returns ``{"acknowledged_s", "done_through"}``, or with
        ``wait=False`` a Future of it. Raises ``AckTimeout`` if the device does
        not confirm within ``timing.estop_timeout``.
        """
        future: Future = Future()
        with self._critical():
            if self._ser is None or self._port_lost:
                raise PortError("emergency stop impossible: the port is not open", port=self.port)
            now = time.monotonic()
            self._t.send_estop(future, now)
            dead = self._t.fault if self._t.dead else None
            if self._t.connected and not self._t.dead:
                self._t.fail(
                    DeviceFault("emergency stop requested by the host: clear() to go on", code="ESTOP", port=self.port),
                    dead=False,
                    now=now,
                    query=False,
                )
        if dead is not None:
            raise dead
        return future.result() if wait else future

    def query(self, timeout: float | None = None) -> dict:
        """Ask the device for its state (STATUS, safe to repeat) and return it as a dict."""
        future: Future = Future()
        with self._critical():
            if self._ser is None or self._port_lost or self._t.dead:
                raise self._t.fault or LinkError("not connected: call connect() first", port=self.port)
            self._t.send_query(time.monotonic(), future)
        return result_within(future, timeout or self.timing.query_timeout * 2, "no answer to STATUS")

    def clear(self, timeout: float | None = None) -> dict:
        """Clear a latched device fault (stall, limit, emergency stop, ...) and return the device state."""
        with self._critical():
            self._check_connected_alive()
            settling = self._t.settle_pending
        if settling:
            try:
                self.query()  # the faulted device's done count settles the motions
            except LinkError:
                pass
        future: Future = Future()
        with self._critical():
            self._check_connected_alive()
            self._t.submit(Outgoing(CLEAR, (), future=future), time.monotonic())
        limit = timeout or self.timing.ack_timeout * (self.timing.max_retransmits + 2) + 0.5
        result_within(future, limit, "CLEAR not acknowledged")
        with self._lock:
            self._reported = None
        return self.query()

    def _check_connected_alive(self) -> None:
        if not self._t.connected:
            raise LinkError("not connected: call connect() first", port=self.port)
        if self._t.dead and self._t.fault is not None:  # a dead transport always has its fault
            raise self._t.fault

    def status(self) -> dict:
        """Health of the link as a plain dict (no I/O)."""
        with self._lock:
            t, now = self._t, time.monotonic()
            fault = t.fault
            return {
                "port": self.port,
                "connected": t.connected and not t.dead,
                "healthy": t.connected and not t.dead and fault is None,
                "fault": None
                if fault is None
                else {
                    "type": type(fault).__name__,
                    "code": getattr(fault, "code", None),
                    "message": str(fault),
                    "done_through": fault.done_through,
                },
                "handshake": dict(self._info) if self._info else None,
                "device": None if t.report is None else report_dict(t.report),
                "last_heard_s": round(now - t.last_rx, 4) if t.connected else None,
                "in_flight": len(t.unacked),
                "on_device": len(t.pending),
                "backlog": len(t.backlog),
                "done_through": t.done_mid,
                "counters": dict(t.counters),
            }

    def close(self) -> None:
        """Close the port. Does not stop the motors (estop() does; the device's watchdog will, too)."""
        with self._critical():
            if self._closing:
                return
            self._closing = True
            self._t.fail(
                LinkError("the link was closed before this was confirmed", port=self.port),
                dead=True,
                now=time.monotonic(),
            )
        self._close_port()
        self._traffic.close()

    def __enter__(self) -> RigLink:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
