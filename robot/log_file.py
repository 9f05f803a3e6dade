"""robotd's own log file (``[robotd] log_file``), next to stderr, rotated by size.

Off by default: under systemd stderr is the journal, which bounds itself.
The rotation is the standard library's ``RotatingFileHandler``, as for the
serial trace (``firmware_interface.tracefile``): ``robotd.log`` becomes
``robotd.log.1`` when the next record would take it to ``max_mb``, and
files beyond ``backups`` are deleted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from logging.handlers import RotatingFileHandler
from pathlib import Path

from .errors import ConfigError

FORMAT = "%(asctime)s robotd: %(levelname)s: %(name)s: %(message)s"


@dataclass(frozen=True)
class LogFileSettings:
    path: Path
    max_mb: float = 10.0
    backups: int = 4


def attach(settings: LogFileSettings | None, level: str) -> RotatingFileHandler | None:
    """Add the rotated file to the root logger at ``level``; None when no file is configured."""
    if settings is None:
        return None
    try:
        settings.path.parent.mkdir(parents=True, exist_ok=True)
        handler = RotatingFileHandler(settings.path, maxBytes=int(settings.max_mb * 1024 * 1024),
                                      backupCount=settings.backups, encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"[robotd] log_file: cannot open {settings.path}: {error.strerror}") from None
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.setLevel(level.upper())
    logging.getLogger().addHandler(handler)
    return handler


def detach(handler: RotatingFileHandler | None) -> None:
    if handler is not None:
        logging.getLogger().removeHandler(handler)
        handler.close()
