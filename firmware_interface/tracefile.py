"""The serial trace on disk, rotated by size so that it never fills the disk.

The file being written is ``path``. When the next entry would take it to
``max_bytes``, it becomes ``path.1`` (``path.1`` becomes ``path.2``, and so
on; the one beyond ``backups`` is deleted) and a new ``path`` starts with
the log's header line, so every file decodes on its own (``python -m
firmware_interface decode``). At most ``(backups + 1) * max_bytes`` bytes.
The rotation is the standard library's ``RotatingFileHandler``; entries go
to it directly, not through a logger.
"""

from __future__ import annotations

import logging
import os
from logging.handlers import RotatingFileHandler

log = logging.getLogger(__name__)


class TraceFile(RotatingFileHandler):
    """Appends lines to a size-rotated file set; ``header`` opens every file of the set."""

    def __init__(self, path: str | os.PathLike, header: str, max_bytes: int, backups: int):
        if backups < 1:  # RotatingFileHandler never rotates without a backup: the file would only grow
            raise ValueError(f"a rotated trace needs at least one backup, got {backups}")
        super().__init__(
            path, mode="a", maxBytes=max_bytes, backupCount=backups, encoding="utf-8", errors="backslashreplace"
        )
        self.header = header
        self._failed = False
        self.write(header)

    def write(self, line: str) -> None:
        """Append one line (without its newline); written through at once."""
        self.handle(logging.LogRecord("robotd.trace", logging.INFO, "", 0, line, None, None))

    def doRollover(self) -> None:
        super().doRollover()
        if self.stream is not None:  # None only for a handler opened with delay=True, which this is not
            self.stream.write(self.header + self.terminator)

    def handleError(self, record: logging.LogRecord) -> None:
        # A full or failing disk: said once instead of a traceback per frame; the link goes on.
        if not self._failed:
            self._failed = True
            log.warning(
                "cannot write the serial trace %s (said once; frames the disk refuses are not traced)",
                self.baseFilename,
                exc_info=True,
            )
