"""Simulated firmware on a pseudo-terminal, so the host goes through the real pyserial path.

``SimulatedFirmware(...).start()`` opens a pty pair with ``os.openpty``,
runs the protocol engine (``firmware.Firmware``) in a thread on the master
side and returns the slave's device path for ``RigLink`` or a terminal.
It owns a virtual cube that every finished turn updates, and injects the
faults of a ``FaultConfig``. Like a real board it notices the port being
opened and closed (the master sees a hang-up while no one holds the slave
open); with ``reset_on_open`` it reboots on each open as an Arduino does.

    python -m firmware_interface.robotd.simulator --rig six-axis [--drop 0.1 ...]

prints the device path and runs until Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import random
import select
import signal
import sys
import threading
import time

from ..errors import ConfigError, LinkError
from ..faults import Channel, DeviceTriggers, FaultConfig
from ..pty_device import lines_from, open_pty, read_into, write_from
from ..steps import DEFAULT_PLAN, DEFAULT_RATE, RIGS, Step
from ..virtual_cube import CORNER_CUTTING_DEG, VirtualCube
from .device import Firmware, MotorTiming
from .protocol import MAX_LINE, PROTOCOL_VERSION, PROTOCOL_VERSIONS


class SimulatedFirmware:
    """A six-motor rig's firmware on a pty. All public methods are thread-safe."""

    def __init__(
        self,
        rig: str = "six-axis",
        timing: MotorTiming | dict | None = None,
        faults: FaultConfig | dict | None = None,
        *,
        state: str | None = None,
        size: int = 3,
        reset_on_open: bool = False,
        boot_ms: float = 0.0,
        heartbeat_ms: int = 100,
        watchdog_ms: int = 1000,
        protocol: int = PROTOCOL_VERSION,
        min_protocol: int = 1,
        firmware: str = "robotd-sim/1.0",
        window: int = 8,
        queue: int = 16,
        plan: int = DEFAULT_PLAN,
        rate: int = DEFAULT_RATE,
        seed: int | None = None,
        jam_deg: float | None = CORNER_CUTTING_DEG,
    ):
        if rig not in RIGS:
            raise ConfigError(f"unknown rig {rig!r} (known: {', '.join(RIGS)})")
        self.faults = FaultConfig.from_config(faults)
        for motor in (*self.faults.stall, *self.faults.limit):
            if motor not in RIGS[rig].motors:
                raise ConfigError(
                    f"simulator faults: {motor!r} is no motor of a {rig} rig ({','.join(RIGS[rig].motors)})"
                )
        self._rng = random.Random(seed if seed is not None else self.faults.seed)
        self._fw = Firmware(
            rig=RIGS[rig],
            timing=MotorTiming.from_config(timing),
            cube=VirtualCube(state, size),
            proto=protocol,
            min_proto=min_protocol,
            fw=firmware,
            window=window,
            queue=queue,
            plan=plan,
            rate=rate,
            heartbeat_ms=heartbeat_ms,
            watchdog_ms=watchdog_ms,
            rng=self._rng,
            jam_deg=jam_deg,
        )
        self._fw.stalled.update(self.faults.stall)
        self._fw.limit.update(self.faults.limit)
        self.reset_on_open, self.boot_ms = reset_on_open, boot_ms
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._to_device = Channel(self.faults.to_device, self._rng)
        self._to_host = Channel(self.faults.to_host, self._rng)
        self._master: int | None = None
        self._wake_r, self._wake_w = os.pipe()  # lets API calls interrupt the thread's poll
        os.set_blocking(self._wake_w, False)
        self.path: str | None = None
        self._thread: threading.Thread | None = None
        self._attached = self._silent = self._closed = False
        self._booting_until: float | None = None
        self._inbuf, self._outbuf = bytearray(), bytearray()
        self._triggers = DeviceTriggers(self.faults)
        self.opens = 0

    # ------------------------------------------------------------ public API

    def start(self) -> str:
        """Open the pty, boot the firmware and return the device path to open."""
        if self._thread is not None:
            raise ConfigError("simulator already started")
        self._master, self.path = open_pty()
        with self._lock:
            self._fw.power_on(time.monotonic())
        self._thread = threading.Thread(target=self._run, name=f"simulated-firmware {self.path}", daemon=True)
        self._thread.start()
        return self.path

    def stop(self) -> None:
        """Stop the thread and close the pty (a host still attached sees the port vanish)."""
        self._stop.set()
        self._wake()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)
        with self._lock:
            self._close_master()
            for fd in (self._wake_r, self._wake_w):
                if fd >= 0:
                    os.close(fd)
            self._wake_r = self._wake_w = -1

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"!")
        except (BlockingIOError, OSError):
            pass

    def __enter__(self) -> SimulatedFirmware:
        if self._thread is None:
            self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def cube(self) -> str:
        """The virtual cube's facelet string (in the letters it was given)."""
        with self._lock:
            return self._fw.cube.facelets

    def set_state(self, facelets: str) -> None:
        """Load a cube state (e.g. a scramble); refused with ConfigError if impossible."""
        with self._lock:
            self._fw.cube.set_state(facelets)

    def executed(self) -> list[Step]:
        """Every step finished since start, in order (across reboots)."""
        with self._lock:
            return list(self._fw.executed)

    def estop_times(self) -> list[float]:
        """``time.monotonic()`` of each ESTOP frame the firmware handled."""
        with self._lock:
            return list(self._fw.estop_times)

    def stall(self, motor: str, stalled: bool = True) -> None:
        """Make a motor stall part-way through its next move (or stop doing so)."""
        self._motor_fault(self._fw.stalled, motor, stalled)

    def home_switch_missing(self, motor: str, missing: bool = True) -> None:
        """Make homing of a motor fail with LIMIT (its switch is never seen)."""
        self._motor_fault(self._fw.limit, motor, missing)

    def reset(self) -> None:
        """Reboot now, as a watchdog reset or brown-out would: new boot id, queue and session lost."""
        with self._lock:
            self._reboot(time.monotonic())
        self._wake()

    def go_silent(self) -> None:
        """Hang: read and drop everything, answer nothing, move nothing."""
        with self._lock:
            self._silent = True
        self._wake()

    def close_port(self) -> None:
        """Vanish like an unplugged USB cable: the host's next read or write fails."""
        with self._lock:
            self._close_master()

    def info(self) -> dict:
        """State of the simulator as a plain dict."""
        with self._lock:
            fw = self._fw
            return {
                "path": self.path,
                "rig": fw.rig.name,
                "boot_id": fw.boot_id,
                "state": fw.state(),
                "fault": fw.fault[0] if fw.fault else None,
                "attached": self._attached,
                "silent": self._silent,
                "closed": self._closed,
                "opens": self.opens,
                "protocol": fw.session_proto or None,
                "enabled": sorted(fw.enabled),
                "motor_setup": dict(fw.motor_setup),
                "steps_executed": len(fw.executed),
                "queued": len(fw.queue) + len(fw.moving),
                "cube": fw.cube.facelets,
                "estops": len(fw.estop_times),
                "to_device": dict(self._to_device.counts),
                "to_host": dict(self._to_host.counts),
            }

    def _motor_fault(self, motors: set, motor: str, on: bool) -> None:
        if motor not in self._fw.rig.motors:
            raise ConfigError(f"{motor!r} is no motor of this rig ({','.join(self._fw.rig.motors)})")
        with self._lock:
            (motors.add if on else motors.discard)(motor)

    # ------------------------------------------------------------ the thread

    def _close_master(self) -> None:
        if self._master is not None:
            os.close(self._master)
            self._master = None
        self._closed = True

    def _reboot(self, now: float) -> None:
        self._to_device.clear()
        self._to_host.clear()
        self._fw.powered = False
        self._booting_until = now + self.boot_ms / 1000
        if self.boot_ms <= 0:
            self._power_on(now)

    def _power_on(self, now: float) -> None:
        self._booting_until = None
        self._fw.power_on(now)

    def _run(self) -> None:
        if self._master is None:  # start() opens the pty before it starts this thread
            return
        poller, waker = select.poll(), select.poll()
        poller.register(self._master, select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        waker.register(self._wake_r, select.POLLIN)
        while not self._stop.is_set():
            with self._lock:
                if self._closed:
                    return
                wait = self._cycle(time.monotonic(), poller)
            if not self._attached:
                waker.poll(5)  # a hung-up master polls ready at once: wait on the wake pipe
            elif wait > 0:
                poller.poll(wait * 1000)
            if waker.poll(0):
                os.read(self._wake_r, 512)

    def _cycle(self, now: float, poller) -> float:
        """One pass: notice open/close, read, run the firmware, write. Returns seconds to sleep."""
        attached = not any(fd == self._master and ev & select.POLLHUP for fd, ev in poller.poll(0))
        if attached and not self._attached:
            self.opens += 1
            if self.reset_on_open:
                self._reboot(now)
        self._attached = attached
        if attached:
            self._read(now)
        fw = self._fw
        delivered = self._to_device.take(now)
        if self._booting_until is not None and now >= self._booting_until:
            self._power_on(now)
        running = fw.powered and not self._silent
        if delivered and running:
            fw.receive(delivered, now)
        if running:
            fw.tick(now)
            self._fire_triggers(now)
            for frame in fw.take_output():
                self._to_host.push(frame, now)
        out = self._to_host.take(now)
        if attached and not self._silent and not self._closed:
            self._outbuf += out
            self._write()
        deadlines = [
            t
            for t in (
                fw.next_deadline() if running else None,
                self._to_device.next_due(),
                self._to_host.next_due(),
                self._booting_until,
            )
            if t is not None
        ]
        wait = min(deadlines, default=now + 0.05) - now
        return 0.001 if self._outbuf else min(max(wait, 0.0), 0.05)

    def _read(self, now: float) -> None:
        while self._master is not None and read_into(self._master, self._inbuf):
            for line in lines_from(self._inbuf, 2 * MAX_LINE):
                self._to_device.push(line, now)

    def _write(self) -> None:
        write_from(self._master, self._outbuf)

    def _fire_triggers(self, now: float) -> None:
        for name in self._triggers.due(len(self._fw.executed)):
            if name == "reset":
                self._reboot(now)
            elif name == "silent":
                self._silent = True
            else:
                self._close_master()


# ---------------------------------------------------------------- command line


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m firmware_interface.robotd.simulator",
        description="Run the simulated cube-robot firmware on a pseudo-terminal.",
    )
    p.add_argument("--rig", default="six-axis", help="rig kind (six-axis: one motor per face U R F D L B)")
    for name in ("drop", "corrupt", "duplicate", "delay"):
        p.add_argument(
            f"--{name}",
            type=float,
            default=0.0,
            metavar="P",
            help=f"probability that a frame is {name}{'ped' if name == 'drop' else 'd'} (each direction)",
        )
    p.add_argument(
        "--noise",
        type=float,
        default=0.0,
        metavar="P",
        help="probability that random bytes (line noise) come ahead of a frame (each direction)",
    )
    p.add_argument("--delay-ms", type=float, default=50.0, help="how long a delayed frame is held")
    for name, default in (("quarter", 80.0), ("half", 130.0), ("home", 300.0), ("settle", 0.0)):
        p.add_argument(f"--{name}-ms", type=float, default=default, help=f"motor timing: {name} (ms)")
    p.add_argument("--stall", action="append", default=[], metavar="MOTOR", help="motor that stalls on its next move")
    p.add_argument("--limit", action="append", default=[], metavar="MOTOR", help="motor whose home switch is missing")
    for name in ("reset", "silent", "close"):
        p.add_argument(f"--{name}-after", type=int, metavar="STEPS", help=f"{name} after this many finished steps")
    p.add_argument("--reset-on-open", action="store_true", help="reboot whenever the port is opened (like an Arduino)")
    p.add_argument("--boot-ms", type=float, default=0.0, help="boot time after a reset, input ignored meanwhile")
    p.add_argument("--heartbeat-ms", type=int, default=100)
    p.add_argument("--watchdog-ms", type=int, default=1000, help="stop the motors after this long without the host")
    p.add_argument("--state", help="initial cube facelet string (default: solved)")
    p.add_argument("--size", type=int, choices=(2, 3), default=3, help="cube size when --state is not given")
    p.add_argument("--seed", type=int, help="seed for fault injection and boot ids")
    p.add_argument(
        "--protocol",
        type=int,
        choices=PROTOCOL_VERSIONS,
        default=PROTOCOL_VERSION,
        help="highest protocol version spoken (1: a version-1 device)",
    )
    p.add_argument("--queue", type=int, default=16, help="motion queue capacity (steps)")
    p.add_argument(
        "--jam-deg",
        type=float,
        default=CORNER_CUTTING_DEG,
        help="the cube jams (STALL) when a face starts turning while an adjacent one is further than this "
        "from aligned (overlapping turns, protocol 3); below 0: never",
    )
    p.add_argument("--link", help="also make this symlink point at the device path")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    rates = {k: getattr(args, k) for k in ("drop", "corrupt", "duplicate", "delay", "noise", "delay_ms")}
    devices = {
        "stall": args.stall,
        "limit": args.limit,
        "reset_after": args.reset_after,
        "silent_after": args.silent_after,
        "close_after": args.close_after,
    }
    timing = {f"{k}_ms": getattr(args, f"{k}_ms") for k in ("quarter", "half", "home", "settle")}
    try:
        sim = SimulatedFirmware(
            args.rig,
            timing,
            {**rates, **devices},
            state=args.state,
            size=args.size,
            reset_on_open=args.reset_on_open,
            boot_ms=args.boot_ms,
            heartbeat_ms=args.heartbeat_ms,
            watchdog_ms=args.watchdog_ms,
            seed=args.seed,
            protocol=args.protocol,
            queue=args.queue,
            jam_deg=args.jam_deg if args.jam_deg >= 0 else None,
        )
        path = sim.start()
        if args.link:
            if os.path.islink(args.link):
                os.unlink(args.link)
            os.symlink(path, args.link)
    except (LinkError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    # Ctrl-C and SIGTERM only set a flag: a KeyboardInterrupt raised while ``sim.info()`` held the simulator's
    # lock could leave it held, and the summary below would then wait for it forever.
    stopping = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopping.set())
    print(path, flush=True)
    print(
        f"simulated {args.rig} firmware on {path} (boot id {sim.info()['boot_id']}); Ctrl-C to stop",
        file=sys.stderr,
        flush=True,
    )
    try:
        while not stopping.wait(0.2) and sim.info()["closed"] is False:
            pass
    finally:
        info = sim.info()
        sim.stop()
        if args.link and os.path.islink(args.link):
            os.unlink(args.link)
    print(f"stopped: {info['steps_executed']} steps executed, cube {info['cube']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
