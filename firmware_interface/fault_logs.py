"""Fault dumps on disk: the last frames each way when the link faulted, one file per fault, the newest kept.

Each dump is ``<folder>/fault-<YYYYmmdd-HHMMSS-micro>.log`` in the traffic
log format (``python -m firmware_interface decode`` reads it). After a
dump is written, all but the newest ``keep`` are deleted (oldest first, by
name, which is by time); other files in the folder are left alone.
``keep = 0`` writes none.
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path

NAME = re.compile(r"^fault-(\d{8}-\d{6}-\d{6})(?:-(\d+))?\.log$")


class FaultLogs:
    """Writes fault dumps to ``folder``, keeping the newest ``keep``."""

    def __init__(self, folder: str | os.PathLike, keep: int):
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 0:
            raise ValueError(f"the number of fault logs to keep must be a whole number >= 0, got {keep!r}")
        self.folder, self.keep = Path(folder), keep

    def save(self, text: str) -> str | None:
        """Write one dump; its path, or None when none are kept. Raises OSError when the disk refuses."""
        if self.keep == 0:
            return None
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._new_path()
        path.write_text(text)
        self.prune()
        return str(path)

    def files(self) -> list[Path]:
        """The dumps in the folder, oldest first."""
        if not self.folder.is_dir():
            return []
        found = [
            (match.group(1), int(match.group(2) or 0), path)
            for path in self.folder.iterdir()
            if (match := NAME.match(path.name))
        ]
        return [path for *_, path in sorted(found)]

    def prune(self) -> None:
        """Delete all but the newest ``keep`` dumps."""
        files = self.files()
        for old in files[: max(0, len(files) - self.keep)]:
            try:
                old.unlink()
            except FileNotFoundError:
                pass

    def _new_path(self) -> Path:
        stamp = f"fault-{datetime.now():%Y%m%d-%H%M%S-%f}"
        path = self.folder / f"{stamp}.log"
        extra = 0
        while path.exists():
            extra += 1
            path = self.folder / f"{stamp}-{extra}.log"
        return path
