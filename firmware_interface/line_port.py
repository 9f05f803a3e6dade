"""The serial port of a line-oriented link (Marlin, grblHAL): opening, the I/O thread, writing.

``LinePort`` is a base class. The link sets ``port``, ``timing`` (with
``reopen_pause`` and what ``open_serial`` reads), ``_lock``, ``_after``
(callbacks run outside the lock), ``_ser`` (None), ``_thread`` (None),
``_closing`` and ``_rx`` (a bytearray), and gives ``_on_raw_line`` (one
received line, without its LF), ``_tick`` (timers, after each read) and
``_port_lost`` (the port failed: why).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol, Self

import serial

from .errors import LinkError
from .serial_port import lost_on_read, lost_on_write, open_serial


class PortTiming(Protocol):
    """What the port code reads of a link's timing (``MarlinTiming``, ``GrblTiming``)."""

    @property
    def baudrate(self) -> int: ...

    @property
    def poll(self) -> float: ...

    @property
    def write_timeout(self) -> float: ...

    @property
    def reopen_pause(self) -> float: ...


log = logging.getLogger(__name__)


class LineSession(Protocol):
    def fail(self, err: LinkError, dead: bool) -> None: ...


class LinePort:
    thread_name = "line link"
    # set by the link (see the module docstring)
    port: str
    _session: LineSession
    timing: PortTiming
    _lock: threading.Lock
    _after: list[Callable[[], None]]
    _ser: serial.Serial | None
    _thread: threading.Thread | None
    _closing: bool
    _rx: bytearray

    def _run_after(self) -> None:
        with self._lock:
            todo, self._after[:] = list(self._after), []  # in place: a session may hold the same list
        for call in todo:
            try:
                call()
            except Exception:
                log.exception("%s: callback failed", self.port)

    def _open_port(self, fresh: bool) -> None:
        if self._ser is not None and not fresh and self._thread is not None and self._thread.is_alive():
            return
        if self._ser is not None:
            self._close_port()
            time.sleep(self.timing.reopen_pause)  # long enough for the board (and a pty) to see the hang-up
        ser = open_serial(self.port, self.timing)
        self._ser = ser
        self._thread = threading.Thread(
            target=self._io_loop, args=(ser,), name=f"{self.thread_name} {self.port}", daemon=True
        )
        self._thread.start()

    def _close_port(self) -> None:
        ser, thread, self._ser = self._ser, self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=1.0)
        if ser is not None:
            try:
                ser.close()
            except (serial.SerialException, OSError):
                pass

    def _io_loop(self, ser: serial.Serial) -> None:
        while not self._closing and self._ser is ser:
            try:
                data = ser.read(ser.in_waiting or 1)
            except Exception as err:
                with self._lock:
                    if self._ser is ser and not self._closing:
                        self._port_lost(lost_on_read(err))
                self._run_after()
                return
            with self._lock:
                now = time.monotonic()
                self._rx += data
                while b"\n" in self._rx:
                    raw, _, rest = bytes(self._rx).partition(b"\n")
                    self._rx = bytearray(rest)
                    self._on_raw_line(raw, now)
                self._tick(now)
            self._run_after()

    def _write(self, data: bytes) -> None:
        if self._ser is None:
            return
        try:
            self._ser.write(data)
        except (serial.SerialException, OSError) as err:
            self._port_lost(lost_on_write(err))

    def close(self) -> None:
        with self._lock:
            if self._closing:
                return
            self._closing = True
            self._session.fail(LinkError("the link was closed before this was done", port=self.port), dead=True)
        self._run_after()
        self._close_port()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _on_raw_line(self, raw: bytes, now: float) -> None:
        raise NotImplementedError

    def _tick(self, now: float) -> None:
        raise NotImplementedError

    def _port_lost(self, why: str) -> None:
        raise NotImplementedError
