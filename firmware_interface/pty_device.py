"""The device end of a pseudo-terminal, shared by every simulated board.

``open_pty()`` gives the master side (non-blocking) and the path a host
opens; the master sees a hang-up while no host has the port open.
``read_into`` and ``write_from`` move bytes without blocking; ``lines_from``
cuts complete lines (and junk with no line end) out of a read buffer.
"""

from __future__ import annotations

import os
import select
import threading
import time
import tty
from collections.abc import Callable

MAX_BACKLOG = 1 << 16  # bytes kept for a host that does not read; more is dropped as on a USB CDC port
OPEN_SETTLE_S = 0.05  # see PtyBoard._host_attached


def open_pty() -> tuple[int, str]:
    """A raw pty pair: (master fd, non-blocking; the slave's device path)."""
    master, slave = os.openpty()
    tty.setraw(slave)  # no echo, no line editing, whoever opens it
    path = os.ttyname(slave)
    os.close(slave)  # from now on the master sees a hang-up while nobody has it open
    os.set_blocking(master, False)
    return master, path


def read_into(fd: int, buffer: bytearray) -> bool:
    """Append what can be read now; False once the other side is gone or nothing came."""
    try:
        data = os.read(fd, 4096)
    except (BlockingIOError, OSError):
        return False
    buffer += data
    return bool(data)


def lines_from(buffer: bytearray, max_line: int) -> list[bytes]:
    """Complete lines (with their LF) taken out of ``buffer``; junk longer than ``max_line`` with no line
    end is passed on as it is, for the receiver to drop."""
    *lines, rest = bytes(buffer).split(b"\n")
    buffer[:] = rest
    out = [line + b"\n" for line in lines]
    if len(buffer) > max_line:
        out.append(bytes(buffer))
        buffer.clear()
    return out


def write_from(fd: int | None, buffer: bytearray) -> None:
    """Write as much of ``buffer`` as the pty takes now (keeping at most ``MAX_BACKLOG``); a closed
    port drops it all."""
    if len(buffer) > MAX_BACKLOG:
        del buffer[:-MAX_BACKLOG]
    while buffer and fd is not None:
        try:
            n = os.write(fd, buffer)
        except BlockingIOError:
            return
        except OSError:
            buffer.clear()
            return
        del buffer[:n]


class PtyBoard:
    """A simulated board on a pseudo-terminal; subclasses set ``_lock``, ``_stop`` (an Event), ``_thread``
    (None), ``_master`` (None), ``path`` (None), ``_closed`` and ``_silent`` in ``__init__`` and give ``_cycle``
    (one turn of the thread's loop, under the lock) and ``board_name``; those that use ``_host_attached`` also
    ``_attached``."""

    _lock: threading.Lock
    _stop: threading.Event
    _thread: threading.Thread | None
    _master: int | None
    path: str | None
    _closed: bool
    _silent: bool
    _attached: bool
    _opened_at = 0.0  # when a host last opened the port (``_host_attached``)

    board_name = "simulated board"
    cycle_s = 0.0005  # the thread's pause between cycles

    def start(self) -> str:
        """Open the pty, start the board's thread and return the device path a host opens."""
        self._master, self.path = open_pty()
        self._thread = threading.Thread(target=self._run, name=f"{self.board_name} {self.path}", daemon=True)
        self._thread.start()
        return self.path

    def stop(self) -> None:
        """Stop the thread and close the pty (a host still attached sees the port vanish)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)
        with self._lock:
            self._close_master()

    def go_silent(self) -> None:
        """Stop answering (a crashed board), the port staying open."""
        with self._lock:
            self._silent = True

    def close_port(self) -> None:
        """Close the pty: the host sees its port vanish, as when the cable is pulled."""
        with self._lock:
            self._close_master()

    def __enter__(self):
        if self._thread is None:
            self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _close_master(self) -> None:
        if self._master is not None:
            os.close(self._master)
            self._master = None
        self._closed = True

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                if self._closed:
                    return
                self._cycle(time.monotonic())
            time.sleep(self.cycle_s)

    def _cycle(self, now: float) -> None:
        raise NotImplementedError

    def _host_attached(self, now: float, boot: Callable[[float], None] | None) -> bool:
        """Has a host held the port open for ``OPEN_SETTLE_S``? ``boot(now)`` runs as one attaches (a board that
        resets on open). The board serves the host only from then on: pyserial's open() flushes the input it
        finds, and a banner written before that flush was lost (a raw port's first read got nothing, once in a
        CI run at two test workers)."""
        if self._master is None:  # closed; the loop sees _closed next
            return False
        events = select.poll()
        events.register(self._master, select.POLLIN)
        attached = not any(ev & select.POLLHUP for _, ev in events.poll(0))
        if attached and not self._attached:
            self._opened_at = now
            if boot is not None:
                boot(now)
        self._attached = attached
        return attached and now >= self._opened_at + OPEN_SETTLE_S
