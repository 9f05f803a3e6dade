"""Host side of a servo rig on a Pololu Maestro (or a clone) over its compact protocol: ``MaestroLink``.

Every target, position, speed and acceleration is in the Maestro's own units (maestro.py): targets
in quarter-microseconds (6000 = 1500 µs, 0 = no pulses), speed in 0.25 µs per 10 ms, acceleration in
0.25 µs per 10 ms per 80 ms.

The protocol has no acknowledgements and (unless CRC is on) no checksums, so the link reads back
what the Maestro does instead of trusting what it was sent (maestro_session.py has the steps):

* ``move(targets)``: each channel's speed, acceleration and target are sent; the move is complete
  once the Maestro is not moving and a position read-back (two agreeing replies) of every moved
  channel equals its target, and then the servos have had the time to follow the pulse
  (``MaestroTiming.servo_us_per_ms``): the Maestro cannot see the servo itself. A channel that
  settles elsewhere (its target lost or damaged on the way) is sent its target again: targets are
  absolute, so a second copy changes nothing. Too many tries: ``DeviceFault`` (TARGET).
* Before each move, and after it for the channels it left alone, every channel the host holds is
  checked at its last target; one that has settled elsewhere means the Maestro started afresh (it
  says nothing when it resets, it just sends every servo to its start-up position): ``DeviceReset``.
* After each move and on ``query()`` the error register is read (which clears it): serial-line
  errors are counted and logged (the read-back already made the move safe); a protocol error that
  is there again on every re-read, or a script error the script's stopping confirms, is a
  ``DeviceFault`` (PROTOCOL, SCRIPT) with the bit's meaning.
* ``estop()`` writes "target 0" for every channel at once, ahead of anything queued, and repeats it
  until every position reads 0; the link stays faulted (ESTOP) until ``clear()``.

With ``crc=True`` (the Maestro's "Enable CRC" serial setting) the Maestro ignores a damaged command;
without it, noise can move a servo to a wrong target (or, as a stray 0xA2, send every servo home)
before the host can notice. Jobs run in order on a worker thread; public methods are thread-safe.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future
from typing import Any

from ..errors import ConfigError, DeviceFault, DeviceReset, DeviceSilent, HandshakeError, LinkError, PortError
from ..motion import Motion, result_within
from ..servo_jobs import ServoJobs
from . import dialect as mp
from .port import MaestroPort
from .session import MaestroSession
from .timing import MaestroTiming

__all__ = ["MaestroLink", "MaestroTiming"]

log = logging.getLogger(__name__)


_DEAD = (PortError, DeviceSilent, HandshakeError, DeviceReset)  # these need connect() again


class MaestroLink(ServoJobs):
    """A Maestro with ``channels`` servo channels on ``port``."""

    def __init__(self, port: str, *, channels: int = 6, crc: bool = False, timing: MaestroTiming | None = None):
        if not isinstance(port, str) or not port:
            raise ConfigError(f"port must be a device path or pyserial URL, got {port!r}")
        if isinstance(channels, bool) or not isinstance(channels, int) or not 1 <= channels <= mp.MAX_CHANNEL + 1:
            raise ConfigError(f"channels must be 1..{mp.MAX_CHANNEL + 1}, got {channels!r}")
        super().__init__()
        self.port, self.channels, self.crc = port, channels, bool(crc)
        self.timing = timing or MaestroTiming()
        self._wake = threading.Event()  # set when a fault is latched: the worker stops napping
        self._io: MaestroPort | None = None
        self._closing = self._connected = self._dead = False
        self._fault: LinkError | None = None
        self._info: dict | None = None
        self._done_mid = 0
        self.counters: dict[str, Any] = {
            "queries": 0,
            "retries": 0,
            "missing_replies": 0,
            "ambiguous_replies": 0,
            "implausible_replies": 0,
            "disagreements": 0,
            "resends": 0,
            "serial_errors": 0,
            "implausible_errors": 0,
            "moves_done": 0,
            "estops": 0,
            "error_bits": {name: 0 for name, _ in mp.ERROR_BITS.values()},
        }
        self.session = MaestroSession(self)

    # ------------------------------------------------------------ session

    def connect(self) -> dict:
        """Open the port, check a Maestro answers (get errors, which clears stale bits), read every channel."""
        if self._closing:
            raise LinkError("the link was closed", port=self.port)
        self._shutdown(LinkError("a new session replaced the one this was queued in", port=self.port))
        with self._lock:
            self._fault, self._dead, self._connected, self._info = None, False, False, None
            self._wake.clear()
            self.session.forget()
        self._io = MaestroPort(self.port, self.timing, crc=self.crc, gate=self._gate, counters=self.counters)
        self._start_worker(f"maestro {self.port}")
        info = result_within(
            self._submit(self.session.hello, check=False),
            self.timing.boot_timeout * 4 + self.channels * self.timing.silence,
            "no handshake",
        )
        with self._lock:
            self._connected, self._info = True, {"port": self.port, **info}
            return dict(self._info)

    @property
    def info(self) -> dict | None:
        with self._lock:
            return dict(self._info) if self._info else None

    def close(self) -> None:
        with self._lock:
            if self._closing:
                return
            self._closing = True
        self._shutdown(LinkError("the link was closed before this was done", port=self.port))

    def __enter__(self) -> MaestroLink:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _shutdown(self, why: LinkError) -> None:
        if self._worker is not None:
            self.latch(why, dead=True)
            self._stop_worker(timeout=2 * self.timing.silence + 1)
        if self._io is not None:
            self._io.close()
        self._io = None

    # ------------------------------------------------------------ worker, faults

    def _before_job(self) -> None:
        self._gate()  # a job queued behind a latched fault fails with it, unrun

    def _on_fault(self, err: LinkError) -> LinkError:
        return self.latch(err, dead=isinstance(err, _DEAD))

    def latch(self, err: LinkError, dead: bool) -> LinkError:
        """Make ``err`` the link's fault (a dead one replaces a live one), wake the worker, fail the queue."""
        with self._lock:
            estop = getattr(err, "code", None) == "ESTOP" and not self._dead
            if self._fault is None or (dead and not self._dead) or estop:
                err.done_through = self._done_mid
                self._fault = err
                if not self._closing:  # the host's own stop (ESTOP) was asked for: no error
                    log.log(logging.DEBUG if estop else logging.ERROR, "%s", err)
            self._dead |= dead
            fault = self._fault
            self._wake.set()
            pending = self._take_queued()
        for job in pending:
            job.settle(error=fault)
        return fault

    def _gate(self) -> None:
        """Called before every ordinary write: stops the worker once a fault is latched."""
        fault = self._fault
        if fault is not None:
            raise fault

    def nap(self, seconds: float) -> None:
        """Sleep on the worker, waking at once for a fault."""
        if seconds > 0:
            self._wake.wait(seconds)
        self._gate()

    def _check_usable(self) -> None:
        if not self._connected:
            raise (
                self._fault
                if self._dead and self._fault
                else LinkError("not connected: call connect() first", port=self.port)
            )
        if self._fault is not None:
            raise self._fault

    def finished(self, motion: Motion) -> None:
        with self._lock:
            self._done_mid = max(self._done_mid, motion.mid)

    @property
    def done_through(self) -> int:
        """The last motion id known done."""
        return self._done_mid

    @property
    def io(self) -> MaestroPort:
        if self._io is None:
            raise LinkError("not connected: call connect() first", port=self.port)
        return self._io

    # ------------------------------------------------------------ commands

    def move(self, targets: dict[int, int]) -> Motion:
        """Send each channel to its target (quarter-µs; 0 switches it off); done once every servo is there."""
        checked = self._targets(targets)
        motion = self._motion("MOVE", (f"{ch}={t}" for ch, t in sorted(checked.items())))
        self._submit(lambda: self.session.move(motion, checked), motion)
        return motion

    def set_speed(self, channel: int, speed: int) -> Motion:
        """Speed limit of a channel's pulse, in 0.25 µs per 10 ms (0: none). Sent now and with each move."""
        self._setting(channel, speed, mp.MAX_VALUE, "speed")
        motion = self._motion("SET_SPEED", (f"{channel}={speed}",))
        self._submit(lambda: self.session.setting(motion, channel, speed, "speed"), motion)
        return motion

    def set_accel(self, channel: int, accel: int) -> Motion:
        """Acceleration limit, in 0.25 µs per 10 ms per 80 ms (0: none, at most 255). Sent now and with each move."""
        self._setting(channel, accel, mp.MAX_ACCEL, "acceleration")
        motion = self._motion("SET_ACCEL", (f"{channel}={accel}",))
        self._submit(lambda: self.session.setting(motion, channel, accel, "accel"), motion)
        return motion

    def home(self) -> Motion:
        """Go home (0xA2): every channel to the home set in the Maestro; done once they rest. The Maestro does not
        confirm it: if the command is lost the servos stay put, and where they rest is what the link holds."""
        motion = self._motion("HOME", ())
        self._submit(lambda: self.session.home(motion), motion)
        return motion

    def query(self, timeout: float | None = None) -> dict:
        """Positions of every channel, the moving state and the error register (checked as after a move)."""
        return result_within(
            self._submit(self.session.query), timeout or self.timing.query_timeout, "no answer to query"
        )

    def estop(self, wait: bool = True) -> dict | Future:
        """Every channel off (target 0) now, ahead of anything queued; latched (ESTOP) until ``clear()``."""
        started = time.monotonic()
        with self._lock:
            io = self._io
            if io is None:
                raise PortError("emergency stop impossible: the port is not open", port=self.port)
        self.latch(
            DeviceFault(
                "emergency stop: every servo switched off; clear() to go on (a servo then jumps "
                "to its next target at full speed)",
                code="ESTOP",
                port=self.port,
            ),
            dead=False,
        )
        packets = self.session.off_packets()
        io.write(*packets, urgent=True, then=self.session.mark_off)
        self.counters["estops"] += 1
        future: Future = Future()
        args = (io, packets, started, time.monotonic() - started, future)
        if wait:
            self.session.confirm_off(*args)
            return future.result()
        threading.Thread(target=self.session.confirm_off, args=args, daemon=True).start()
        return future

    def clear(self, timeout: float | None = None) -> dict:
        """Forget a latched fault that left the link usable (ESTOP, TARGET, PROTOCOL, SCRIPT), then query()."""
        with self._lock:
            if self._dead or not self._connected:
                raise self._fault or LinkError("not connected: call connect() first", port=self.port)
            self._fault = None
            self._wake.clear()
        return self.query(timeout)

    def status(self) -> dict:
        with self._lock:
            fault, io = self._fault, self._io
            return {
                "port": self.port,
                "connected": self._connected and not self._dead,
                "healthy": self._connected and fault is None,
                "fault": None
                if fault is None
                else {
                    "type": type(fault).__name__,
                    "code": getattr(fault, "code", None),
                    "message": str(fault),
                    "done_through": fault.done_through,
                },
                "handshake": dict(self._info) if self._info else None,
                "crc": self.crc,
                "targets": dict(self.session.targets),
                "positions": dict(self.session.positions),
                "last_heard_s": round(time.monotonic() - io.last_reply, 4) if io else None,
                "backlog": self.backlog,
                "done_through": self._done_mid,
                "counters": {**self.counters, "error_bits": dict(self.counters["error_bits"])},
            }

    # ------------------------------------------------------------ argument checks

    def _channel(self, channel) -> int:
        if isinstance(channel, bool) or not isinstance(channel, int) or not 0 <= channel < self.channels:
            raise ConfigError(f"channel must be 0..{self.channels - 1}, got {channel!r}", port=self.port)
        return channel

    def _targets(self, targets) -> dict[int, int]:
        if not isinstance(targets, dict) or not targets:
            raise ConfigError(f"move() takes a dict {{channel: target in quarter-µs}}, got {targets!r}", port=self.port)
        for channel, target in targets.items():
            self._channel(channel)
            if isinstance(target, bool) or not isinstance(target, int) or not 0 <= target <= mp.MAX_VALUE:
                raise ConfigError(
                    f"channel {channel}: target must be 0 (off) or a pulse in quarter-µs up to "
                    f"{mp.MAX_VALUE}, got {target!r}",
                    port=self.port,
                )
        return dict(targets)

    def _setting(self, channel: int, value: int, limit: int, what: str) -> None:
        self._channel(channel)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= limit:
            raise ConfigError(f"channel {channel}: {what} must be 0..{limit}, got {value!r}", port=self.port)
