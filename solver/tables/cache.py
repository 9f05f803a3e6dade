"""Store and load precomputed tables in the user's cache directory, with a checksum.

A cache file is a magic line, one JSON header line (including the sha256 of
the payload) and the payload bytes. A file that is missing, truncated or
fails its checksum reads as absent, so the caller rebuilds it; writes are
atomic (temporary file, then rename) so a crash never leaves half a table.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

import platformdirs

MAGIC = b"robotd-table\n"


def cache_dir() -> Path:
    """``$ROBOTD_CACHE_DIR``, else the user cache dir.

    platformdirs: ``$XDG_CACHE_HOME/robotd``, ``~/.cache/robotd``.
    """
    if os.environ.get("ROBOTD_CACHE_DIR"):
        return Path(os.environ["ROBOTD_CACHE_DIR"])
    return platformdirs.user_cache_path("robotd")


def read_table(name: str) -> tuple[dict, bytes] | None:
    """(header, payload) of a valid cached table, or None when absent or corrupt."""
    path = cache_dir() / name
    try:
        with open(path, "rb") as f:
            if f.readline() != MAGIC:
                return None
            header = json.loads(f.readline())
            payload = f.read()
    except (OSError, ValueError):
        return None
    if not isinstance(header, dict) or hashlib.sha256(payload).hexdigest() != header.get("sha256"):
        return None
    return header, payload


def write_table(name: str, header: dict, payload: bytes) -> Path | None:
    """Write a table atomically; returns its path, or None (with a warning) if the cache is not writable."""
    directory = cache_dir()
    header = dict(header, sha256=hashlib.sha256(payload).hexdigest())
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=directory)
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + json.dumps(header).encode() + b"\n" + payload)
        os.replace(tmp, directory / name)
    except OSError as error:
        print(
            f"robotd: cannot write table cache in {directory} ({error}); the table will be rebuilt next time",
            file=sys.stderr,
        )
        return None
    return directory / name
