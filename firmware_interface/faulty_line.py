"""A damaged serial line between the host and a device that sits on a pty of its own.

``FaultyLine(device_path, faults).start()`` opens a new pseudo-terminal for
the host and carries every line between it and the device through a fault
``Channel`` per direction (drops, corruption, duplicates, delays, noise), as
the simulated firmware does internally. It is how faults reach a device the
Python code cannot reach into: the firmware binary under simavr.
"""

from __future__ import annotations

import os
import random
import select
import threading
import time
import tty
from collections.abc import Callable

from .faults import Channel, FaultConfig
from .pty_device import lines_from, open_pty, read_into, write_from

_MAX_LINE_BUFFER = 4096


class FaultyLine:
    """Host pty <-> fault channels <-> the device's pty. ``on_open`` runs when a host opens the port."""

    def __init__(
        self,
        device_path: str,
        faults: FaultConfig,
        rng: random.Random,
        on_open: Callable[[], None] | None = None,
        realtime: frozenset[int] = frozenset(),
    ):
        self.device_path, self.faults, self.on_open, self.realtime = device_path, faults, on_open, realtime
        self.to_device = Channel(faults.to_device, rng, reserved=realtime)
        self.to_host = Channel(faults.to_host, rng)
        self.path: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._buffers = {"host": bytearray(), "device": bytearray()}
        self._out = {"host": bytearray(), "device": bytearray()}

    def start(self) -> str:
        self._master, self.path = open_pty()
        self._device = os.open(self.device_path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        tty.setraw(self._device)
        self._thread = threading.Thread(target=self._run, name=f"faulty-line {self.path}", daemon=True)
        self._thread.start()
        return self.path

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        for fd in (self._master, self._device):
            try:
                os.close(fd)
            except OSError:
                pass

    def counts(self) -> dict:
        return {"to_device": dict(self.to_device.counts), "to_host": dict(self.to_host.counts)}

    def _run(self) -> None:
        attached = False
        host = select.poll()
        host.register(self._master, select.POLLIN)
        while not self._stop.is_set():
            now_attached = not any(ev & select.POLLHUP for _, ev in host.poll(0))
            if now_attached and not attached and self.on_open is not None:
                self.on_open()
            attached = now_attached
            now = time.monotonic()
            if attached:
                self._pass_lines(self._master, "host", self.to_device, now)
            self._pass_lines(self._device, "device", self.to_host, now)
            self._out["device"] += self.to_device.take(now)
            write_from(self._device, self._out["device"])
            out = self.to_host.take(now)
            if attached:
                self._out["host"] += out
                write_from(self._master, self._out["host"])
            readable = [self._device] + ([self._master] if attached else [])
            select.select(readable, [], [], 0.001 if not attached else 0.002)

    def _pass_lines(self, fd: int, side: str, channel: Channel, now: float) -> None:
        buffer, fresh = self._buffers[side], bytearray()
        realtime = self.realtime if side == "host" else frozenset()
        while read_into(fd, fresh):
            for byte in fresh:
                if byte in realtime:
                    channel.push_whole(bytes((byte,)), now)
                    continue
                buffer.append(byte)
                if byte == 0x0A:  # a line goes before a real-time byte that follows it
                    self._push_lines(buffer, channel, now)
            fresh.clear()
            self._push_lines(buffer, channel, now)  # junk too long for a line

    @staticmethod
    def _push_lines(buffer: bytearray, channel: Channel, now: float) -> None:
        for line in lines_from(buffer, _MAX_LINE_BUFFER):
            channel.push(line, now)
