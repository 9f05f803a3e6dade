"""What ``MaestroLink``'s worker does, job by job, and what it knows of the servos it holds.

Each job talks to the Maestro through ``MaestroPort`` and checks the result by reading it back
(link.py explains the rules). ``targets`` is what each channel was last told (0: off),
kept in the order the packets went out on the wire.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import Future

from ..errors import AckTimeout, DeviceFault, DeviceReset, DeviceSilent, HandshakeError, LinkError
from . import dialect as mp

log = logging.getLogger(__name__)


def _position_ok(reply: bytes) -> bool:
    return mp.word(reply) <= mp.MAX_VALUE


def _flag_ok(reply: bytes) -> bool:
    return reply[0] in (0, 1)


def _errors_ok(reply: bytes) -> bool:
    return mp.word(reply) <= mp.ERROR_MASK


def _us(target: int) -> str:
    return "off" if target == 0 else f"{target / 4:g} µs"


class MaestroSession:
    def __init__(self, link):
        self.link = link
        self.forget()

    def forget(self) -> None:
        self.targets: dict[int, int] = {}
        self.positions: dict[int, int] = {}
        self.speeds: dict[int, int] = {}
        self.accels: dict[int, int] = {}
        self.script_running = False

    @property
    def io(self):
        return self.link.io

    @property
    def timing(self):
        return self.link.timing

    def _now(self) -> float:
        return time.monotonic()

    # ------------------------------------------------------------ reads

    def position(self, channel: int) -> int:
        value = mp.word(self.io.read_twice(mp.GET_POSITION, channel, plausible=_position_ok))
        self.positions[channel] = value
        return value

    def moving(self) -> bool:
        return self.io.ask(mp.GET_MOVING, plausible=_flag_ok)[0] == 1

    def read_errors(self, silence: float | None = None, count: bool = True) -> int:
        bits = mp.word(self.io.ask(mp.GET_ERRORS, plausible=_errors_ok, silence=silence))
        if not count:
            return bits
        counters = self.link.counters
        for name in mp.error_names(bits):
            counters["error_bits"][name] += 1
        if bits & mp.SERIAL_ERRORS:
            counters["serial_errors"] += 1
            log.info("%s: serial errors on the line: %s", self.link.port, ", ".join(mp.error_names(bits)))
        return bits

    # ------------------------------------------------------------ handshake

    def hello(self) -> dict:
        try:
            stale = self.read_errors(silence=self.timing.boot_timeout, count=False)  # from before we came
        except DeviceSilent:
            raise HandshakeError(
                f"no answer to get errors (0xA1) within {self.timing.boot_timeout:g} s: no Maestro on this port, "
                f"the wrong baud rate (a Maestro in UART mode runs at one fixed rate), or CRC enabled on the "
                f"Maestro but not here (crc={self.link.crc})",
                port=self.link.port,
            ) from None
        if self._protocol_errors_persist():
            raise HandshakeError(
                "the Maestro flags every command as a serial protocol error: the host sends CRC "
                "bytes but CRC is not enabled on the Maestro (crc=True here), or another program "
                "writes to the port",
                port=self.link.port,
            )
        self.script_running = self.io.read_twice(mp.GET_SCRIPT_STATUS, plausible=_flag_ok)[0] == 0
        for channel in range(self.link.channels):
            try:
                self.position(channel)
            except DeviceSilent:
                raise HandshakeError(
                    f"channel {channel} does not answer: does this Maestro have {self.link.channels} channels?",
                    port=self.link.port,
                ) from None
        return {
            "dialect": "maestro",
            "protocol": "compact",
            "crc": self.link.crc,
            "channels": self.link.channels,
            "cleared_errors": mp.error_names(stale),
            "script_running": self.script_running,
            "positions": dict(self.positions),
        }

    def _protocol_errors_persist(self) -> bool:
        for _ in range(self.timing.protocol_checks):
            if not self.read_errors() & mp.PROTOCOL_ERROR:
                return False
        return True

    # ------------------------------------------------------------ jobs

    def move(self, motion, targets: dict[int, int]) -> dict:
        start = self.confirm_held(list(self.targets))
        for channel in targets:
            start.setdefault(channel, self.position(channel))
        travel = {ch: self._travel(start[ch], t) for ch, t in targets.items()}
        sent = self.send(targets)
        motion.received.set_result(True)
        sent, resends = self._reach(targets, travel, sent, start)
        self.confirm_held([ch for ch in self.targets if ch not in targets])
        self._wait_servos(travel, sent)
        self.check_errors()
        self.link.finished(motion)
        self.link.counters["moves_done"] += 1
        return {
            "mid": motion.mid,
            "command": motion.command,
            "positions": {ch: self.positions[ch] for ch in targets},
            "resends": resends,
        }

    def setting(self, motion, channel: int, value: int, kind: str) -> dict:
        (self.speeds if kind == "speed" else self.accels)[channel] = value
        encode = mp.set_speed if kind == "speed" else mp.set_accel
        self.io.write(encode(channel, value, crc=self.link.crc))
        motion.received.set_result(True)
        self.link.finished(motion)
        return {"mid": motion.mid, "command": motion.command}

    def home(self, motion) -> dict:
        before = {ch: self.position(ch) for ch in range(self.link.channels)}
        self.io.write(mp.simple(mp.GO_HOME, crc=self.link.crc))
        sent = self._now()
        motion.received.set_result(True)
        after = self._resting()
        self.io.write(then=lambda: self.targets.update(after))  # no bytes: ordered against an e-stop
        self._wait_servos({ch: self._travel(before[ch], after[ch]) for ch in after}, sent)
        self.check_errors()
        self.link.finished(motion)
        return {"mid": motion.mid, "command": motion.command, "positions": after}

    def query(self) -> dict:
        self.confirm_held(list(self.targets))
        positions = {ch: self.position(ch) for ch in range(self.link.channels)}
        moving = self.moving()
        bits = self.check_errors()
        return {
            "positions": positions,
            "moving": moving,
            "targets": dict(self.targets),
            "errors": mp.error_names(bits),
            "script_running": self.script_running,
            "done_through": self.link.done_through,
        }

    # ------------------------------------------------------------ move steps

    def send(self, targets: dict[int, int]) -> float:
        """Settings and targets of these channels, in one write; returns when it went out."""
        crc, packets = self.link.crc, []
        for channel, target in targets.items():
            if channel in self.speeds:
                packets.append(mp.set_speed(channel, self.speeds[channel], crc=crc))
            if channel in self.accels:
                packets.append(mp.set_accel(channel, self.accels[channel], crc=crc))
            packets.append(mp.set_target(channel, target, crc=crc))
        self.io.write(*packets, then=lambda: self.targets.update(targets))
        return self._now()

    def _reach(self, targets, travel, sent: float, start) -> tuple[float, int]:
        """Wait until every channel reads back its target; send again the targets that did not take."""
        pending, tries = dict(targets), {ch: 0 for ch in targets}
        seen: dict[int, int] = {}
        deadline = self._now() + 2 * self._ramp_time(targets, start) + self.timing.move_margin
        while pending:
            if self._now() > deadline:
                late = ", ".join(
                    f"channel {ch} at {_us(self.positions.get(ch, 0))} (target {_us(t)})" for ch, t in pending.items()
                )
                raise DeviceFault(f"the move did not finish in time: {late}", code="TIMEOUT", port=self.link.port)
            if self.moving():
                self.link.nap(self.timing.poll)
                continue
            for channel, target in list(pending.items()):
                position = self.position(channel)
                if position == target:
                    del pending[channel]
                elif seen.get(channel) != position:
                    seen[channel] = position  # is it still on its way? look again after a servo period
                else:
                    sent = self._send_again(channel, target, position, tries, travel)
                    seen.pop(channel)
            if pending:
                self.link.nap(self.timing.period)
        return sent, sum(tries.values())

    def _send_again(self, channel: int, target: int, position: int, tries: dict, travel: dict) -> float:
        tries[channel] += 1
        if tries[channel] > self.timing.resends:
            self.targets[channel] = position  # where the Maestro holds it now, for later checks
            raise DeviceFault(
                f"channel {channel} stays at {_us(position)} instead of {_us(target)} after "
                f"{self.timing.resends} resends (is the target outside the channel's min/max set in "
                f"the Maestro? it clamps targets to them)",
                code="TARGET",
                port=self.link.port,
            )
        self.link.counters["resends"] += 1
        log.info(
            "%s: channel %d settled at %s, not %s: target sent again",
            self.link.port,
            channel,
            _us(position),
            _us(target),
        )
        travel[channel] = max(travel[channel], abs(target - position) / 4 if target and position else 0.0)
        return self.send({channel: target})

    def confirm_held(self, channels: list[int]) -> dict[int, int]:
        """Positions of channels that should rest at their last target; one resting elsewhere is a reset."""
        found = {}
        for channel in channels:
            target, position, tries = self.targets[channel], self.position(channel), 0
            while position != target:
                tries += 1
                self.link.nap(self.timing.period)
                if self.moving() and tries < 100:
                    continue
                again = self.position(channel)
                if again == position:
                    raise DeviceReset(
                        f"the servo controller reset: channel {channel} went to {_us(position)} while "
                        f"it was held at {_us(target)}: connect() again and bring the rig home",
                        port=self.link.port,
                    )
                position = again
            found[channel] = position
        return found

    def _travel(self, start: int, target: int) -> float:
        """µs the servo's horn may have to travel; a servo coming from 'off' may be anywhere."""
        if target == 0:
            return 0.0
        return abs(target - start) / 4 if start else self.timing.off_travel_us

    def _ramp_time(self, targets, start) -> float:
        """Seconds the Maestro needs to ramp the pulses under the channels' speed and acceleration limits."""
        longest = 0.0
        for channel, target in targets.items():
            distance = abs(target - start.get(channel, target))
            speed, accel = self.speeds.get(channel, 0), self.accels.get(channel, 0)
            cruise = distance / (speed * 100.0) if speed else 0.0
            ramp = 2 * (distance / (accel * 1250.0)) ** 0.5 if accel else 0.0
            longest = max(longest, cruise + ramp)
        return longest

    def _wait_servos(self, travel: dict[int, float], sent: float) -> None:
        """The Maestro is done when its pulses are; the servos need the time to follow them."""
        rate = self.timing.servo_us_per_ms
        follow = max(travel.values(), default=0.0) / rate / 1000 if rate else 0.0
        due = max(sent + follow, self._now()) + self.timing.settle
        self.link.nap(due - self._now())

    def _resting(self) -> dict[int, int]:
        """Every channel's position once two rounds of reads agree and the Maestro is not moving."""
        previous = None
        deadline = self._now() + self.timing.move_margin
        while self._now() < deadline:
            self.link.nap(self.timing.period)
            if self.moving():
                continue
            now = {ch: self.position(ch) for ch in range(self.link.channels)}
            if now == previous:
                return now
            previous = now
        raise DeviceFault("the servos did not come to rest after go home", code="TIMEOUT", port=self.link.port)

    # ------------------------------------------------------------ the error register

    def check_errors(self) -> int:
        bits = self.read_errors()
        if bits & mp.SCRIPT_ERRORS:
            self._script_errors(bits)
        if bits & mp.PROTOCOL_ERROR and self._protocol_errors_persist():
            raise DeviceFault(
                f"the Maestro keeps reporting: {mp.describe_errors(mp.PROTOCOL_ERROR)} (every "
                f"re-read shows it again: a CRC setting that differs from the Maestro's, or another "
                f"program writing to the port)",
                code="PROTOCOL",
                port=self.link.port,
            )
        return bits

    def _script_errors(self, bits: int) -> None:
        """Believed only when the script that ran has stopped: otherwise the reply was damaged on the way."""
        stopped = self.script_running and self.io.read_twice(mp.GET_SCRIPT_STATUS, plausible=_flag_ok)[0] == 1
        if not stopped:
            self.link.counters["implausible_errors"] += 1
            log.warning(
                "%s: ignored script error bits 0x%03x: no script stopped (a damaged reply)",
                self.link.port,
                bits & mp.SCRIPT_ERRORS,
            )
            return
        self.script_running = False
        raise DeviceFault(
            f"the Maestro's script stopped: {mp.describe_errors(bits & mp.SCRIPT_ERRORS)}",
            code="SCRIPT",
            port=self.link.port,
        )

    # ------------------------------------------------------------ e-stop (runs on the caller's thread)

    def off_packets(self) -> list[bytes]:
        order = list(self.targets) + [ch for ch in range(self.link.channels) if ch not in self.targets]
        return [mp.set_target(ch, 0, crc=self.link.crc) for ch in order]

    def mark_off(self) -> None:
        self.targets = {ch: 0 for ch in range(self.link.channels)}

    def confirm_off(self, io, packets: list[bytes], started: float, written_s: float, future: Future) -> None:
        """Read every channel until all are off, writing the offs again meanwhile; settles ``future``."""
        deadline = started + self.timing.estop_timeout
        try:
            while True:
                positions = {
                    ch: mp.word(
                        io.read_twice(
                            mp.GET_POSITION, ch, plausible=_position_ok, urgent=True, silence=self.timing.estop_timeout
                        )
                    )
                    for ch in range(self.link.channels)
                }
                self.positions.update(positions)
                if not any(positions.values()):
                    future.set_result(
                        {
                            "written_s": round(written_s, 6),
                            "confirmed_s": round(self._now() - started, 6),
                            "positions": positions,
                        }
                    )
                    return
                if self._now() > deadline:
                    raise AckTimeout(
                        f"e-stop not confirmed within {self.timing.estop_timeout:g} s: still {positions}",
                        port=self.link.port,
                    )
                io.write(*packets, urgent=True)
                time.sleep(self.timing.estop_retry)
        except LinkError as err:
            future.set_exception(err)
