"""``RigLink``'s serial port: the lock, the I/O thread, writing frames, the traffic log and fault reports.

``RigPort`` is ``RigLink``'s base class. It opens the port and starts one
I/O thread per port (``riglink <port>``, a daemon thread) that reads it and
hands the bytes to the link's ``_on_bytes``, then runs the link's ``_tick``
(every timer), both under ``_critical``. A failed read or write goes to the
link's ``_lost_port``. The link sets ``_t``, its ``Transport``.

``_critical`` holds the lock and, once it is released, runs the callbacks
queued on ``_after`` (future results) and, for a new fault of the transport,
the ``on_fault`` callback; it logs the fault with the last frames each way
to the ``firmware_interface.robotd.link`` logger first (and saves them to
``fault_log_dir`` if given). The host's own emergency stop is no fault to
explain: it is logged at DEBUG, without frames or dump.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager

import serial

from ..errors import LinkError
from ..serial_port import lost_on_read, lost_on_write, open_serial
from .framelog import LogLimits, TrafficLog
from .protocol import Decoder
from .timing import LinkTiming
from .transport import Transport

log = logging.getLogger("firmware_interface.robotd.link")  # named in RigLink's docs: keep it


class RigPort:
    # what the link gives (see the module docstring)
    _t: Transport
    _on_bytes: Callable[[bytes, float], None]
    _tick: Callable[[float], None]
    _lost_port: Callable[[str], None]

    def __init__(
        self,
        port: str,
        timing: LinkTiming,
        *,
        log_size: int,
        trace: str | os.PathLike | None,
        fault_log_dir: str | os.PathLike | None,
        log_limits: LogLimits,
        on_fault: Callable[[LinkError], None] | None,
    ):
        self.port, self.timing = port, timing
        self._lock = threading.Lock()
        self._after: list[Callable[[], None]] = []
        self._traffic = TrafficLog(log_size, trace, log_limits)
        self._fault_log_dir, self._on_fault = fault_log_dir, on_fault
        self._ser: serial.Serial | None = None
        self._thread: threading.Thread | None = None
        self._closing = self._port_lost = False
        self._decoder = Decoder()
        self._reported: LinkError | None = None

    # ------------------------------------------------------------ lock and logs

    @contextmanager
    def _critical(self):
        """Hold the lock; afterwards (lock released) run queued future results and callbacks."""
        todo: list = []
        try:
            with self._lock:
                try:
                    yield
                finally:
                    self._report_new_fault(todo)
                    todo += self._after
                    self._after.clear()
        finally:
            for call in todo:
                try:
                    call()
                except Exception:  # a user callback must not kill the I/O thread
                    log.exception("%s: callback failed", self.port)

    def _log(self, direction: str, raw: bytes | str, now: float) -> None:
        self._traffic.add(direction, raw, now)

    def _note(self, text: str, now: float) -> None:
        self._traffic.add("!", text, now)

    def dump_log(self) -> list[str]:
        """The last frames each way and the link's notes, oldest first, in the traffic log format."""
        return self._traffic.dump()

    def _report_new_fault(self, todo: list) -> None:
        err = self._t.fault
        if err is None or err is self._reported or self._closing:
            return
        self._reported = err
        self._note(f"fault: {err}", time.monotonic())
        if getattr(err, "code", None) == "ESTOP":  # the host's own stop (the device has no other): asked for
            log.debug("%s", err)
        else:
            self._dump_fault(err)
        if self._on_fault is not None:
            todo.append(lambda: self._on_fault(err))

    def _dump_fault(self, err: LinkError) -> None:
        """Log ``err`` with the last frames each way, and save them to ``fault_log_dir``."""
        err.log = self.dump_log()
        log.error("%s\nlast frames (python -m firmware_interface decode reads them):\n%s", err, "\n".join(err.log))
        if self._fault_log_dir is not None:
            try:
                err.log_path = self._traffic.save(self._fault_log_dir, self.port, type(err).__name__)
            except OSError as oserr:
                log.error("%s: could not write the fault log: %s", self.port, oserr)

    # ------------------------------------------------------------ port and I/O thread

    def _open_port(self) -> None:
        if self._ser is not None and not self._port_lost and self._thread is not None and self._thread.is_alive():
            return
        self._close_port()
        ser = open_serial(self.port, self.timing)
        with self._lock:
            self._ser, self._port_lost, self._decoder = ser, False, Decoder()
            self._traffic.open_trace(self.port)
        self._thread = threading.Thread(target=self._io_loop, args=(ser,), name=f"riglink {self.port}", daemon=True)
        self._thread.start()

    def _close_port(self) -> None:
        ser, thread = self._ser, self._thread
        if ser is None:
            return
        if hasattr(ser, "cancel_read"):
            try:
                ser.cancel_read()
            except Exception:  # not every URL handler supports it; the read times out anyway
                pass
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=1.0)
        try:
            ser.close()
        except (serial.SerialException, OSError):
            pass
        self._ser = None

    def _io_loop(self, ser: serial.Serial) -> None:
        while not self._closing and self._ser is ser:
            try:
                data = ser.read(ser.in_waiting or 1)
            except Exception as err:  # SerialException, OSError, or a handler's own error on a dead port
                if self._closing or self._ser is not ser:
                    return
                with self._critical():
                    self._lost_port(lost_on_read(err))
                return
            with self._critical():
                now = time.monotonic()
                if data:
                    self._on_bytes(data, now)
                self._tick(now)

    def _write_port(self, frame: bytes, now: float) -> None:
        if self._ser is None or self._port_lost:
            return
        try:
            self._ser.write(frame)
        except (serial.SerialException, OSError) as err:
            self._note(f"write failed: {err}", now)
            self._lost_port(lost_on_write(err))
            return
        self._log(">", frame.rstrip(b"\n"), now)
