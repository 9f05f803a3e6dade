"""One robotd per data directory: an exclusive lock on ``<data_dir>/robotd.pid``.

Two daemons on one data directory would fight over the serial port and the
cameras, and each would take the other's live run for one cut short by a
crash. The lock is an ``flock`` on a file that also holds the owner's pid
(for the message): the kernel drops it when the process dies, however it
dies, so a stale lock cannot keep a restarted daemon out.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import TextIO

from .errors import RobotError

LOCK_NAME = "robotd.pid"


class DataDirLock:
    """Held while this process owns the data directory; ``release()`` (or process exit) frees it."""

    def __init__(self, data_dir: Path):
        self.path = Path(data_dir) / LOCK_NAME
        self._file: TextIO | None = None

    def try_acquire(self) -> bool:
        """Take the lock if no other process holds it; True when this process now holds it."""
        handle = open(self.path, "a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return False
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._file = handle
        return True

    def acquire(self) -> None:
        """Take the lock, or raise a RobotError naming the daemon that holds it."""
        try:
            taken = self.try_acquire()
        except OSError as error:
            raise RobotError(f"[robotd] data_dir: cannot create the lock file {self.path}: {error.strerror}") from None
        if not taken:
            raise RobotError(
                f"another robotd ({self._holder()}) is using the data directory {self.path.parent}: "
                "stop it first (e.g. systemctl stop robotd), or give this one another "
                "[robotd] data_dir"
            )

    def release(self) -> None:
        if self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
            self._file = None

    def _holder(self) -> str:
        try:
            pid = self.path.read_text().strip()
        except OSError:
            pid = ""
        return f"pid {pid}" if pid.isdigit() else "pid unknown"
