"""Where robotd's log records go: stderr, and its own log file (``[robotd] log_file``), rotated by size.

The file is off by default: under systemd stderr is the journal, which bounds
itself. The rotation is the standard library's ``RotatingFileHandler``, as
for the serial trace (``firmware_interface.tracefile``): ``robotd.log``
becomes ``robotd.log.1`` when the next record would take it to ``max_mb``,
and files beyond ``backups`` are deleted.

``[robotd] log_level`` is the root logger's level from the moment the
config is read, in every mode, so the file gets the runs' records
(``robot.run_log``) at INFO. ``robotd --once`` keeps stderr to warnings
and errors (``quiet_stderr``): its summary is what it prints.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
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
        handler = RotatingFileHandler(
            settings.path, maxBytes=int(settings.max_mb * 1024 * 1024), backupCount=settings.backups, encoding="utf-8"
        )
    except OSError as error:
        raise ConfigError(f"[robotd] log_file: cannot open {settings.path}: {error.strerror}") from None
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.setLevel(level.upper())
    logging.getLogger().addHandler(handler)
    return handler


def start(settings: LogFileSettings | None, level: str) -> Callable[[], None]:
    """Records at ``level`` and above pass the root logger, to stderr and to the file (when configured);
    returns the call that undoes it (the file closed, the root logger's level as it was)."""
    root = logging.getLogger()
    previous = root.level
    handler = attach(settings, level)
    root.setLevel(level.upper())

    def undo() -> None:
        detach(handler)
        root.setLevel(previous)

    return undo


def quiet_stderr(level: int = logging.WARNING) -> None:
    """Only records at ``level`` and above on stderr (the handler ``logging.basicConfig`` made); the log file
    keeps its own level."""
    for handler in logging.getLogger().handlers:
        if type(handler) is logging.StreamHandler:
            handler.setLevel(level)


def detach(handler: RotatingFileHandler | None) -> None:
    if handler is not None:
        logging.getLogger().removeHandler(handler)
        handler.close()
