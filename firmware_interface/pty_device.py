"""The device end of a pseudo-terminal, shared by every simulated board.

``open_pty()`` gives the master side (non-blocking) and the path a host
opens; the master sees a hang-up while no host has the port open.
``read_into`` and ``write_from`` move bytes without blocking; ``lines_from``
cuts complete lines (and junk with no line end) out of a read buffer.
"""

from __future__ import annotations

import os
import tty

MAX_BACKLOG = 1 << 16      # bytes kept for a host that does not read; more is dropped as on a USB CDC port


def open_pty() -> tuple[int, str]:
    """A raw pty pair: (master fd, non-blocking; the slave's device path)."""
    master, slave = os.openpty()
    tty.setraw(slave)                  # no echo, no line editing, whoever opens it
    path = os.ttyname(slave)
    os.close(slave)                    # from now on the master sees a hang-up while nobody has it open
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
