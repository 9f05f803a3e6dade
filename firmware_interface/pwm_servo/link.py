"""Host side of servos the host pulses itself (GPIO, PCA9685): ``PwmServoLink``.

It offers what ``robot.servo_motion.ServoMotion`` drives a Maestro with, in the same units: targets in
quarter-microseconds (6000 = 1500 µs, 0 = no pulses). A hobby servo reports nothing, so a move is
timed, not read back: the pulse goes to its target at once, or steps there once per servo frame under
the channel's speed limit (µs per second), and the move is done when the servo has had the time to
follow (``PwmServoTiming.move_s``: the same formula the flip/spin timing model estimates with).

A target outside the channel's range (its outer end-points) is refused, so no command moves a horn
past them. ``estop()`` stops every output's pulses at once (the servos go limp) and latches ESTOP
until ``clear()``; ``close()`` does the same and releases the hardware, and runs at interpreter exit
too. Moves run in order on a worker thread; public methods are thread-safe.
"""

from __future__ import annotations

import atexit
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future

from ..errors import ConfigError, DeviceFault, LinkError
from ..motion import Motion
from ..servo_jobs import ServoJobs
from .outputs import PulseOutputs
from .timing import PwmServoTiming


class PwmServoLink(ServoJobs):
    """Servos on ``channels`` (channel -> lowest and highest pulse width in µs) of the outputs ``opener`` opens."""

    def __init__(
        self,
        opener: Callable[[], PulseOutputs],
        channels: dict[int, tuple[float, float]],
        *,
        where: str,
        timing: PwmServoTiming | None = None,
    ):
        super().__init__()
        self.port, self._opener, self.ranges = where, opener, dict(channels)
        self.timing = timing or PwmServoTiming()
        self._stop = threading.Event()  # set by an e-stop or close: a move in progress stops waiting
        self._outputs: PulseOutputs | None = None
        self._fault: LinkError | None = None
        self._closed = False
        self.pulses: dict[int, float | None] = dict.fromkeys(channels)  # µs each output sends now (None: off)
        self.speeds: dict[int, float] = dict.fromkeys(channels, 0.0)  # µs per second; 0: no limit
        self.counters: dict[str, int] = {"moves_done": 0, "estops": 0}
        atexit.register(_close_at_exit, weakref.ref(self))

    # ------------------------------------------------------------ session

    def connect(self) -> dict:
        """Open the outputs (every servo off) and start the worker."""
        if self._closed:
            raise LinkError("the link was closed", port=self.port)
        self._release()
        outputs = self._opener()
        with self._lock:
            self._outputs, self._fault = outputs, None
            self.pulses = dict.fromkeys(self.ranges)
            self._stop.clear()
            self._start_worker(self.port)
        return dict(self.info)

    @property
    def info(self) -> dict:
        return {"port": self.port, "dialect": "pwm", "channels": len(self.ranges), "outputs": sorted(self.ranges)}

    def close(self) -> None:
        """Every servo off (no pulses), the hardware released; the link cannot connect again."""
        self._closed = True
        self._release()

    def __enter__(self) -> PwmServoLink:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _release(self) -> None:
        self._stop.set()
        self._stop_worker(timeout=2)
        with self._lock:
            outputs, self._outputs = self._outputs, None
            self.pulses = dict.fromkeys(self.ranges)
        if outputs is not None:
            outputs.close()

    # ------------------------------------------------------------ commands

    def move(self, targets: dict[int, int]) -> Motion:
        """Each channel to its target (quarter-µs; 0: off); done once every servo has had the time to get there."""
        checked = self._targets(targets)
        motion = self._motion("MOVE", (f"{ch}={t}" for ch, t in sorted(checked.items())))
        self._submit(lambda: self._move(motion, checked), motion)
        return motion

    def set_speed(self, channel: int, speed: int) -> Motion:
        """Speed limit of a channel's pulse, µs per second (0: none)."""
        self._channel(channel)
        if isinstance(speed, bool) or not isinstance(speed, (int, float)) or speed < 0:
            raise ConfigError(
                f"channel {channel}: speed must be µs per second, 0 or more, got {speed!r}", port=self.port
            )
        motion = self._motion("SET_SPEED", (f"{channel}={speed}",))
        self._submit(lambda: self.speeds.__setitem__(channel, float(speed)), motion)
        return motion

    def set_accel(self, channel: int, accel: int) -> Motion:
        """The host ramps at a constant speed: only 0 (no acceleration limit) is accepted."""
        self._channel(channel)
        if accel != 0:
            raise ConfigError(
                f"channel {channel}: these servos take no acceleration limit, got {accel!r}", port=self.port
            )
        motion = self._motion("SET_ACCEL", (f"{channel}=0",))
        self._submit(lambda: None, motion)
        return motion

    def query(self, timeout: float | None = None) -> dict:
        return {"positions": self._positions(), "moving": False, "targets": self._positions()}

    def estop(self, wait: bool = True) -> dict | Future:
        """Every output off now, ahead of anything queued; latched (ESTOP) until ``clear()``."""
        started = time.monotonic()
        self._latch(
            DeviceFault("emergency stop: every servo switched off; clear() to go on", code="ESTOP", port=self.port)
        )
        with self._lock:
            outputs = self._outputs
            if outputs is not None:
                for channel in self.ranges:
                    outputs.off(channel)
                    self.pulses[channel] = None
        self.counters["estops"] += 1
        result = {"written_s": round(time.monotonic() - started, 6), "positions": self._positions()}
        if wait:
            return result
        future: Future = Future()
        future.set_result(result)
        return future

    def clear(self, timeout: float | None = None) -> dict:
        """Forget a latched e-stop, then ``query()``."""
        with self._lock:
            if self._outputs is None:
                raise LinkError("not connected: call connect() first", port=self.port)
            self._fault = None
            self._stop.clear()
        return self.query(timeout)

    def status(self) -> dict:
        with self._lock:
            fault, connected = self._fault, self._outputs is not None
        return {
            "port": self.port,
            "connected": connected,
            "healthy": connected and fault is None,
            "fault": None
            if fault is None
            else {"type": type(fault).__name__, "code": getattr(fault, "code", None), "message": str(fault)},
            "handshake": self.info if connected else None,
            "targets": self._positions(),
            "positions": self._positions(),
            "backlog": self.backlog,
            "counters": dict(self.counters),
        }

    # ------------------------------------------------------------ the worker

    def _move(self, motion: Motion, targets: dict[int, int]) -> dict:
        motion.received.set_result(True)
        begun = time.monotonic()
        plans = {ch: self._start(ch, target / 4 if target else None) for ch, target in targets.items()}
        longest = max((seconds for _, _, seconds in plans.values()), default=0.0)
        while True:
            elapsed = time.monotonic() - begun
            for channel, (start, goal, _) in plans.items():
                if goal is not None and start is not None and self.speeds[channel] > 0:
                    step = min(self.speeds[channel] * elapsed, abs(goal - start))
                    self._send(channel, start + step if goal >= start else start - step)
            if elapsed >= longest:
                break
            self._nap(min(self.timing.frame, longest - elapsed))
        self._nap(self.timing.settle)
        self.counters["moves_done"] += 1
        return {"mid": motion.mid, "command": motion.command, "positions": self._positions(list(targets))}

    def _start(self, channel: int, goal: float | None) -> tuple[float | None, float | None, float]:
        """Send the first pulse of a move; (where the pulse starts, where it goes, seconds the servo needs)."""
        start = self.pulses[channel]
        if goal is None:
            self._off(channel)
            return start, None, 0.0
        if start is None:
            self._send(channel, goal)  # from "off" the servo may be anywhere: straight to the goal
            return None, goal, self.timing.travel_s(self.timing.off_travel_us)
        if self.speeds[channel] <= 0:
            self._send(channel, goal)
        return start, goal, self.timing.travel_s(abs(goal - start), self.speeds[channel])

    def _send(self, channel: int, us: float) -> None:
        with self._lock:
            self._gate()
            assert self._outputs is not None
            self._outputs.pulse(channel, us)
            self.pulses[channel] = us

    def _off(self, channel: int) -> None:
        with self._lock:
            self._gate()
            assert self._outputs is not None
            self._outputs.off(channel)
            self.pulses[channel] = None

    def _nap(self, seconds: float) -> None:
        if seconds > 0:
            self._stop.wait(seconds)
        with self._lock:
            self._gate()

    def _gate(self) -> None:
        if self._fault is not None:
            raise self._fault
        if self._outputs is None:
            raise LinkError("the link was closed before this was done", port=self.port)

    def _check_usable(self) -> None:
        if self._outputs is None:
            raise LinkError("not connected: call connect() first", port=self.port)
        if self._fault is not None:
            raise self._fault

    def _latch(self, fault: LinkError) -> None:
        with self._lock:
            self._fault = fault
            self._stop.set()

    def _positions(self, channels: list[int] | None = None) -> dict[int, int]:
        """Each channel's pulse in quarter-µs, as a Maestro reports it (0: off)."""
        pulses = dict(self.pulses)
        return {ch: round((pulses[ch] or 0) * 4) for ch in (channels if channels is not None else pulses)}

    # ------------------------------------------------------------ argument checks

    def _channel(self, channel) -> int:
        if isinstance(channel, bool) or channel not in self.ranges:
            raise ConfigError(f"no servo on channel {channel!r} (servos on {sorted(self.ranges)})", port=self.port)
        return channel

    def _targets(self, targets) -> dict[int, int]:
        if not isinstance(targets, dict) or not targets:
            raise ConfigError(f"move() takes a dict {{channel: target in quarter-µs}}, got {targets!r}", port=self.port)
        for channel, target in targets.items():
            low, high = self.ranges[self._channel(channel)]
            if isinstance(target, bool) or not isinstance(target, int) or (target and not low <= target / 4 <= high):
                raise ConfigError(
                    f"channel {channel}: target must be 0 (off) or a pulse within the servo's end-points, "
                    f"{low:g}..{high:g} µs; got {target!r} quarter-µs",
                    port=self.port,
                )
        return dict(targets)


def _close_at_exit(ref: weakref.ref) -> None:
    link = ref()
    if link is not None:
        link.close()
