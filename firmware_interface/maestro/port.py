"""Request and reply with a Maestro over one serial port, made safe for a line without framing or checksums.

A query is: flush whatever input is waiting (late or duplicated replies of earlier queries), write
the command, read exactly the reply's bytes with a timeout, and accept them only when they are
plausible and nothing else arrived with them (extra bytes mean a stale reply or noise came first:
which bytes are ours cannot be told, so the query is asked again). ``read_twice`` asks until two
replies in a row agree, for values a decision rests on. Nothing usable for ``silence`` seconds, over
at least ``MIN_TRIES`` tries, is ``DeviceSilent`` (a host stalled within one try must not blame the board
for it); a port that fails is ``PortError``.

Writes are whole packets under a lock, so an e-stop written from another thread lands between two
of the worker's packets, never inside one; ``gate`` is called under that lock before every ordinary
write and query and raises to stop the worker (after an e-stop, say), so nothing it sends can follow
the e-stop's packets.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from types import SimpleNamespace

import serial

from ..errors import DeviceSilent, PortError
from ..serial_port import open_serial
from . import dialect as mp

log = logging.getLogger(__name__)

MIN_TRIES = 3  # tries a query gets before "silent", however long a busy host took over them

_GONE: tuple[type[Exception], ...] = (serial.SerialException, OSError)
try:
    from termios import error as termios_error  # tcflush on a port whose device is gone

    _GONE += (termios_error,)
except ImportError:  # pragma: no cover - not POSIX
    pass


class MaestroPort:
    def __init__(self, port: str, timing, *, crc: bool, gate: Callable[[], None], counters: dict):
        settings = SimpleNamespace(
            baudrate=timing.baudrate, poll=timing.reply_timeout, write_timeout=timing.write_timeout
        )
        self._ser = open_serial(port, settings)
        self.port, self.timing, self.crc, self._gate, self.counters = port, timing, crc, gate, counters
        self._wlock = threading.Lock()  # one packet at a time on the wire
        self._io = threading.Lock()  # one query (write, then read its reply) at a time
        self.last_reply = time.monotonic()

    def close(self) -> None:
        try:
            self._ser.close()
        except (serial.SerialException, OSError):
            pass

    # ------------------------------------------------------------ writing

    def write(self, *packets: bytes, urgent: bool = False, then: Callable[[], None] | None = None) -> None:
        """Write whole packets; ``urgent`` (the e-stop) skips the gate. ``then`` runs under the write lock once
        they are written, so bookkeeping of what the servos were told follows the order on the wire."""
        with self._wlock:
            if not urgent:
                self._gate()
            self._write(b"".join(packets))
            if then is not None:
                then()

    def _write(self, data: bytes) -> None:
        try:
            self._ser.write(data)
            self._ser.flush()
        except _GONE as err:
            raise PortError(f"write failed: the port vanished ({err})", port=self.port) from None

    # ------------------------------------------------------------ queries

    def ask(
        self,
        command: int,
        *data: int,
        plausible: Callable[[bytes], bool] = lambda reply: True,
        urgent: bool = False,
        silence: float | None = None,
    ) -> bytes:
        """One reply to a query, asked as often as needed within ``silence`` seconds."""
        body = mp.packet(command, *data, crc=self.crc)
        size, what = mp.REPLY_BYTES[command], mp.NAMES[command] + (f" {data[0]}" if data else "")
        silence = self.timing.silence if silence is None else silence
        started = time.monotonic()
        tries = 0
        while True:
            reply, extra = self._exchange(body, size, urgent)
            tries += 1
            self.counters["queries"] += 1
            if len(reply) == size and not extra and plausible(reply):
                self.last_reply = time.monotonic()
                return reply
            self._count_bad(reply, size, extra)
            if len(reply) == size:
                self.last_reply = time.monotonic()
            if time.monotonic() - started > silence and tries >= MIN_TRIES:
                got = "garbled replies" if self.last_reply >= started else "no reply"
                raise DeviceSilent(f"{got} to {what} for {silence:g} s ({tries} tries)", port=self.port)
            self.counters["retries"] += 1

    def read_twice(
        self,
        command: int,
        *data: int,
        plausible: Callable[[bytes], bool] = lambda reply: True,
        urgent: bool = False,
        silence: float | None = None,
        tries: int = 16,
    ) -> bytes:
        """A reply that two queries in a row agree on: a stale or damaged one never stands alone."""
        previous = None
        for _ in range(tries):
            reply = self.ask(command, *data, plausible=plausible, urgent=urgent, silence=silence)
            if reply == previous:
                return reply
            if previous is not None:
                self.counters["disagreements"] += 1
            previous = reply
        raise DeviceSilent(
            f"{tries} replies to {mp.NAMES[command]} never agreed twice in a row: the line is too noisy", port=self.port
        )

    def _exchange(self, body: bytes, size: int, urgent: bool) -> tuple[bytes, bool]:
        with self._io:
            try:
                self._ser.reset_input_buffer()
                self.write(body, urgent=urgent)
                reply = self._ser.read(size)
                return reply, self._ser.in_waiting > 0
            except _GONE as err:
                raise PortError(f"the port vanished ({err})", port=self.port) from None

    def _count_bad(self, reply: bytes, size: int, extra: bool) -> None:
        key = "missing_replies" if len(reply) < size else "ambiguous_replies" if extra else "implausible_replies"
        self.counters[key] += 1
        log.debug("%s: %s reply %s", self.port, key.split("_")[0], reply.hex())
