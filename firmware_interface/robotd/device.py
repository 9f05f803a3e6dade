"""The device side of protocols v1 to v3 as a pure state machine: what the firmware does with each frame.

``Firmware`` has no I/O and no clock of its own: the caller passes bytes
and the current time in, and takes the frames to send out. The simulator
runs it on a pseudo-terminal; it is also the reference a C port can follow
(docs/protocol.md describes the same rules). Motors are modelled by their
timing only; each finished face turn is applied to a ``VirtualCube``.

Turn times: a motor never sent MOTOR takes ``MotorTiming.quarter_ms`` /
``half_ms`` (scaled by SPEED); a motor set up with MOTOR (version 2) follows
the trapezoid profile of docs/protocol.md section 16, ``profile_seconds``.
In a version-3 session turns of motors set up with MOTOR overlap
(section 17, ``overlap.gate_time``); with ``jam_deg`` the cube jams (STALL)
when a face starts turning while an adjacent face is further than that from
aligned.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, fields

from ..errors import ConfigError
from ..steps import CLEAR, DEFAULT_PLAN, DEFAULT_RATE, SIX_AXIS, Rig, Step
from ..virtual_cube import VirtualCube
from .overlap import MotorMove, Ramp, cruise_rate, gate_time, jammed_by, profile_seconds
from .protocol import (
    NO_FAULT,
    PROTOCOL_VERSION,
    PROTOCOL_VERSIONS,
    Ack,
    Boot,
    Command,
    DecodeError,
    Decoder,
    Done,
    Estop,
    EstopReply,
    FaultReport,
    Hello,
    HelloReply,
    Nak,
    Ping,
    Rej,
    Report,
    StatusQuery,
    Text,
    parse_host,
    seq_add,
    seq_diff,
)
from .step_parser import parse_step

__all__ = ["Firmware", "MotorTiming", "cruise_rate", "profile_seconds"]

DEFAULT_JOG_STEPS = 200  # steps per quarter turn assumed for JOG on a motor never set up


@dataclass
class MotorTiming:
    """How long the simulated motors take, in milliseconds (0 = instantly)."""

    quarter_ms: float = 80.0
    half_ms: float = 130.0
    home_ms: float = 300.0
    settle_ms: float = 0.0

    @classmethod
    def from_config(cls, config: MotorTiming | dict | None) -> MotorTiming:
        """From a mapping such as a TOML table; an unknown key or a negative time is an error."""
        if config is None:
            return cls()
        if isinstance(config, MotorTiming):
            return config
        known = [f.name for f in fields(cls)]
        for key, value in config.items():
            if key not in known:
                raise ConfigError(f"simulator timing: unknown key {key!r} (known: {', '.join(known)})")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ConfigError(f"simulator timing: {key} must be a number of milliseconds >= 0, got {value!r}")
        return cls(**{k: float(v) for k, v in config.items()})


@dataclass
class _Running:
    step: Step
    ends: float
    outcome: str | None = None  # a fault code when the step will fail
    motor: str | None = None
    start: float = 0.0
    moves: tuple[MotorMove, ...] = ()  # its motors' ramps, when every one was set up with MOTOR


class Firmware:
    """Device engine of protocols v1 to v3: sessions, sequencing, the step queue, faults, heartbeats.

    ``proto`` is the highest version spoken, ``min_proto`` the lowest (a v1-only device:
    ``proto=1``). ``plan`` and ``rate`` are the version-2 HELLO fields (``plan`` never above the
    queue size). ``jam_deg``: the cube's corner-cutting tolerance (None: it never jams)."""

    def __init__(
        self,
        *,
        rig: Rig = SIX_AXIS,
        timing: MotorTiming | None = None,
        cube: VirtualCube | None = None,
        proto: int = PROTOCOL_VERSION,
        min_proto: int = PROTOCOL_VERSIONS[0],
        fw: str = "robotd-sim/1.0",
        window: int = 8,
        queue: int = 16,
        plan: int = DEFAULT_PLAN,
        rate: int = DEFAULT_RATE,
        heartbeat_ms: int = 100,
        watchdog_ms: int = 1000,
        rng: random.Random | None = None,
        jam_deg: float | None = None,
    ):
        self.jam_deg = jam_deg
        self.rig, self.timing = rig, timing or MotorTiming()
        self.cube = cube or VirtualCube()
        self.proto, self.min_proto, self.fw, self.window, self.queue_size = proto, min_proto, fw, window, queue
        self.plan_size, self.max_rate = max(1, min(plan, queue)), rate
        self.heartbeat_ms, self.watchdog_ms = heartbeat_ms, watchdog_ms
        self.rng = rng or random.Random()
        self.stalled: set[str] = set()  # motors that stall on their next move
        self.limit: set[str] = set()  # motors whose home switch is never found
        self.executed: list[Step] = []  # every step finished, in order, over all boots
        self.estop_times: list[float] = []  # when each ESTOP frame was handled
        self.boot_id = ""
        self._out: list[bytes] = []
        self.powered = False

    # ------------------------------------------------------------ life cycle

    def power_on(self, now: float) -> None:
        """Boot (or reboot): all volatile state is lost, a new boot id is drawn, BOOT is sent."""
        previous = self.boot_id
        while self.boot_id == previous:
            self.boot_id = f"{self.rng.getrandbits(32):08X}"
        self.powered = True
        self.decoder = Decoder()
        self.session: str | None = None
        self.session_proto = 0  # version of the open session
        self.expected = 0
        self.last_reply: bytes = b""
        self.nak_for: int | None = None
        self.queue: deque[Step] = deque()
        self.queued_at: deque[float] = deque()  # when each queued step arrived
        self.now = now
        self.moving: deque[_Running] = deque()  # steps started and not reported done, oldest first
        self.done = 0
        self.fault: tuple[str, int | None, int | None] | None = None  # code, mid, seq
        self.enabled: set[str] = set()
        self.motor_setup: dict[str, tuple[int, ...]] = {}  # MOTOR: steps, rate, accel/100, dir[, overlap]
        self.quarter_ms, self.half_ms = self.timing.quarter_ms, self.timing.half_ms
        self.last_host = now
        self.next_heartbeat = now + self.heartbeat_ms / 1000
        self._out.clear()
        self._send(Boot(self.proto, self.fw, self.boot_id).encode())

    def take_output(self) -> list[bytes]:
        out, self._out = self._out, []
        return out

    def _send(self, frame: bytes) -> None:
        self._out.append(frame)

    # ------------------------------------------------------------ receiving

    def receive(self, data: bytes, now: float) -> None:
        self.now = now
        for item in self.decoder.feed(data):
            if isinstance(item, Text):
                continue
            message = item if isinstance(item, DecodeError) else parse_host(item)
            if isinstance(message, DecodeError):
                self._nak(message.code)
                continue
            self.last_host = now
            self._handle(message, now)

    def _nak(self, code: str) -> None:
        """At most one NAK per expected sequence number: the host retransmits on NAK or timeout."""
        if self.session is not None and self.nak_for != self.expected:
            self.nak_for = self.expected
            self._send(Nak(self.expected, code).encode())

    def _handle(self, message, now: float) -> None:
        if isinstance(message, Estop):  # ahead of everything queued
            self.estop_times.append(now)
            self._send(EstopReply(message.token, self.done).encode())
            self._latch("ESTOP")
            self.enabled.clear()  # drivers off: a jammed rig goes limp
        elif isinstance(message, StatusQuery):
            self._send(self.report(message.token).encode())
        elif isinstance(message, Hello):
            self._hello(message)
        elif isinstance(message, Command):
            self._command(message)
        elif isinstance(message, Ping):
            pass  # any valid frame feeds the watchdog

    def _hello_reply(self, session: str) -> HelloReply:
        v2 = self.session_proto >= 2
        return HelloReply(
            session,
            self.session_proto,
            self.fw,
            self.rig.name,
            self.rig.motors,
            self.boot_id,
            self.window,
            self.queue_size,
            self.heartbeat_ms,
            self.watchdog_ms,
            self.fault[0] if self.fault else NO_FAULT,
            self.plan_size if v2 else None,
            self.max_rate if v2 else None,
        )

    def _hello(self, hello: Hello) -> None:
        if not self.min_proto <= hello.proto <= self.proto:
            self._send(HelloReply(hello.session, self.proto, self.fw).encode())  # no session opened
            return
        if hello.session != self.session or hello.proto != self.session_proto:
            # a new session; a repeated HELLO just gets the reply again
            self._stop_motion()
            self.session, self.expected, self.nak_for, self.done = hello.session, hello.seq, None, 0
            self.session_proto = hello.proto
            self.last_reply = Ack(seq_add(hello.seq, -1)).encode()
        self._send(self._hello_reply(hello.session).encode())

    def _command(self, command: Command) -> None:
        if self.session is None:
            self._send(Rej(command.seq, "NOSESSION").encode())
            return
        ahead = seq_diff(command.seq, self.expected)
        if ahead > 0:
            self._nak("SEQ")
            return
        if ahead < 0:  # a duplicate: say again what was said, do nothing
            self._send(self.last_reply)
            return
        reply, fault = self._accept(command)
        self.expected, self.nak_for = seq_add(self.expected, 1), None
        self.last_reply = reply.encode()
        self._send(self.last_reply)
        if fault:
            self._latch(fault, seq=command.seq)

    def _accept(self, command: Command) -> tuple[Ack | Rej, str | None]:
        if command.verb == CLEAR and not command.args:
            self.fault = None
            return Ack(command.seq), None
        if self.fault is not None:
            return Rej(command.seq, "FAULTED", f"{self.fault[0]} latched"), None
        parsed = parse_step(
            command.verb, command.args, self.rig, self.session_proto, max_rate=self.max_rate, max_plan=self.plan_size
        )
        if isinstance(parsed, tuple):
            return Rej(command.seq, *parsed), parsed[0]
        steps = parsed if isinstance(parsed, list) else [parsed]  # PLAN: all its turns or none
        used = len(self.queue) + len(self.moving)
        if used + len(steps) > self.queue_size:
            return Rej(
                command.seq, "QFULL", f"{used} of {self.queue_size} steps queued, {len(steps)} more sent"
            ), "QFULL"
        self.queue.extend(steps)
        self.queued_at.extend(self.now for _ in steps)
        return Ack(command.seq), None

    # ------------------------------------------------------------ faults

    def _stop_motion(self) -> bool:
        """Stop the motors at once and empty the queue; True if anything was moving or queued."""
        busy = bool(self.moving) or bool(self.queue)
        self.moving.clear()
        self.queue.clear()
        self.queued_at.clear()
        return busy

    def _latch(self, code: str, *, mid: int | None = None, seq: int | None = None, motor: str | None = None) -> None:
        """Stop, empty the queue, latch the first fault until CLEAR, and report it."""
        stopped = self._stop_motion()
        new = self.fault is None
        if new:
            self.fault = (code, mid, seq)
        if new or stopped:
            self._send(FaultReport(code, self.done, mid, seq, motor).encode())

    # ------------------------------------------------------------ time

    def state(self) -> str:
        if self.session is None:
            return "IDLE"
        if self.fault is not None:
            return "FAULT"
        return "RUN" if self.moving or self.queue else "READY"

    def report(self, token: int | None = None) -> Report:
        code, mid, seq = self.fault or (NO_FAULT, None, None)
        rx = seq_add(self.expected, -1) if self.session is not None else 0
        enabled = None if token is None else tuple(m for m in self.rig.motors if m in self.enabled)
        speed = None if token is None else round(self.quarter_ms)
        return Report(
            token,
            self.boot_id,
            self.state(),
            rx,
            self.done,
            len(self.queue) + len(self.moving),
            code,
            mid,
            seq,
            en=enabled,
            speed=speed,
        )

    def tick(self, now: float) -> None:
        """Advance motors, heartbeat and watchdog to ``now``."""
        self._finish_due(now)
        while self.queue and self.fault is None:
            start = self._start_time(self.queue[0], now)
            if start is None or start > now:
                break
            self.queued_at.popleft()
            self._start(self.queue.popleft(), start)
            self._finish_due(now)
        if self.session is not None and now - self.last_host > self.watchdog_ms / 1000:
            if self.moving or self.queue:
                self._latch("HOSTLOST")
                self.enabled.clear()  # drivers off
        if now >= self.next_heartbeat:
            self._send(self.report().encode())
            self.next_heartbeat += self.heartbeat_ms / 1000
            if self.next_heartbeat <= now:  # fell behind (a stalled process): do not send a burst
                self.next_heartbeat = now + self.heartbeat_ms / 1000

    def next_deadline(self) -> float:
        """The latest time ``tick`` must be called by (sooner if bytes arrive)."""
        times = [self.next_heartbeat]
        if self.moving:
            times.append(self.moving[0].ends)
            start = self._start_time(self.queue[0], self.moving[-1].start) if self.queue else None
            if start is not None:
                times.append(start)
        if self.session is not None and (self.moving or self.queue):
            times.append(self.last_host + self.watchdog_ms / 1000)
        return min(times)

    def _start(self, step: Step, now: float) -> None:
        motors = [m for m, _ in step.turns] or list(step.motors or self.rig.motors)
        if step.verb in ("ENABLE", "DISABLE", "SPEED", "MOTOR"):
            if step.verb == "MOTOR":
                if step.setup is not None:  # always: parse_step checks a MOTOR step's setup
                    self.motor_setup[step.motors[0]] = step.setup
            elif step.verb == "ENABLE":
                self.enabled.update(motors)
            elif step.verb == "DISABLE":
                self.enabled.difference_update(motors)
            elif step.quarter_ms is not None:  # SPEED, whose quarter_ms parse_step checks
                ratio = self.timing.half_ms / self.timing.quarter_ms if self.timing.quarter_ms else 1.6
                self.quarter_ms, self.half_ms = step.quarter_ms, step.quarter_ms * ratio
            self.moving.append(_Running(step, now, start=now))
            return
        off = [m for m in motors if m not in self.enabled]
        if off:
            self._latch("DISABLED", mid=step.mid, motor=off[0])
            return
        if step.verb == "HOME":
            ms, bad, code = self.timing.home_ms, [m for m in motors if m in self.limit], "LIMIT"
        else:
            ms = max(self.move_ms(step.verb, m, q) for m, q in step.turns)
            bad, code = [m for m in motors if m in self.stalled], "STALL"
        moves = self._moves(step, now)
        jammed = self._jammed(moves, now)
        if jammed is not None:
            self._latch("STALL", mid=step.mid, motor=jammed)
        elif bad:  # fails part-way
            self.moving.append(_Running(step, now + ms / 2000, code, bad[0], now))
        else:
            self.moving.append(_Running(step, now + (ms + self.timing.settle_ms) / 1000, start=now, moves=moves))

    # ------------------------------------------------------------ overlapping turns (version 3)

    def _finish_due(self, now: float) -> None:
        while self.moving and now >= self.moving[0].ends:
            self._finish(self.moving.popleft())

    def _start_time(self, step: Step, now: float) -> float | None:
        """When ``step`` may start: ``now`` with nothing moving; a version-3 turn of motors set up with
        MOTOR at its gate (section 17); anything else (None) once every motor has stopped."""
        if not self.moving:
            return now
        overlapping = self.session_proto >= 3 and step.verb in ("TURN", "PAIR")
        if not overlapping or any(not r.moves for r in self.moving) or not self._moves(step, now):
            return None
        overlap = {m: setup[4] if len(setup) > 4 else 0 for m, setup in self.motor_setup.items()}
        moving = [move for r in self.moving for move in r.moves]
        gate = gate_time(moving, (m for m, _ in step.turns), overlap, self.rig.opposite)
        return max(self.moving[-1].start, self.queued_at[0], gate)

    def _moves(self, step: Step, start: float) -> tuple[MotorMove, ...]:
        """The ramps of a TURN or PAIR whose motors were all set up with MOTOR, else ()."""
        if step.verb not in ("TURN", "PAIR") or any(m not in self.motor_setup for m, _ in step.turns):
            return ()
        moves = []
        for motor, q in step.turns:
            steps, rate, hundreds = self.motor_setup[motor][:3]
            v = cruise_rate(steps, rate, hundreds * 100, self.quarter_ms / 1000)
            moves.append(MotorMove(motor, start, Ramp(steps * abs(q), v, hundreds * 100)))
        return tuple(moves)

    def _jammed(self, moves: tuple[MotorMove, ...], now: float) -> str | None:
        """The motor of ``moves`` that jams the cube: it starts while an adjacent face is too far off aligned."""
        if self.jam_deg is None:
            return None
        quarters = {m: setup[0] for m, setup in self.motor_setup.items()}
        moving = [move for r in self.moving for move in r.moves]
        return jammed_by(moves, moving, now, quarters, self.jam_deg, self.rig.opposite)

    def move_ms(self, verb: str, motor: str, amount: int) -> float:
        """How long one motor's part of a TURN/PAIR (``amount`` quarter turns) or JOG (steps) takes, in ms."""
        setup = self.motor_setup.get(motor)
        if setup is None:
            if verb == "JOG":
                return self.quarter_ms * abs(amount) / DEFAULT_JOG_STEPS
            return self.quarter_ms if abs(amount) == 1 else self.half_ms
        quarter_steps, rate, accel = setup[:3]
        accel *= 100
        v = cruise_rate(quarter_steps, rate, accel, self.quarter_ms / 1000)
        steps = abs(amount) if verb == "JOG" else quarter_steps * abs(amount)
        return 1000 * profile_seconds(steps, v, accel)

    def _finish(self, running: _Running) -> None:
        step = running.step
        if running.outcome is not None:
            self._latch(running.outcome, mid=step.mid, motor=running.motor)
            return
        for motor, q in step.turns if step.verb != "JOG" else ():  # a jog moves no whole face
            self.cube.turn(motor, q)
        self.done = step.mid
        self.executed.append(step)
        self._send(Done(step.mid).encode())
