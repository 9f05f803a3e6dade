"""C sources shipped with robotd, compiled on first use where the machine has a C compiler.

A search's innermost loops (two-phase's, the A* closed set's) are written once in C beside their Python
module. Each is compiled with the system compiler (``$CC``, else ``cc``) into robotd's table cache, under a
name that carries a hash of its source (an updated source is compiled again), and loaded with ctypes.
Where there is no compiler, or its switch (an environment variable) is ``0``, the caller runs its numpy or
Python version instead, and ``status()`` says why.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path

from .tables.cache import cache_dir

COMPILE_TIMEOUT_S = 60


class CompiledSource:
    """One C source file: compiled once into the cache, loaded once per process."""

    def __init__(self, source: Path, stem: str, switch: str):
        self.source, self.stem, self.switch = source, stem, switch
        self._loaded: tuple[ctypes.CDLL | None, str] | None = None

    def library(self) -> ctypes.CDLL | None:
        """The loaded library, compiled on first use; None where it cannot be (see ``status``)."""
        return self._load()[0]

    def status(self) -> str:
        """Compiled (and where), or why not."""
        return self._load()[1]

    def forget(self) -> None:
        """Load again on the next use (the environment or the cache may have changed)."""
        self._loaded = None

    def path(self) -> Path:
        digest = hashlib.sha256(self.source.read_bytes()).hexdigest()[:16]
        return cache_dir() / f"{self.stem}-{digest}-{platform.machine()}.so"

    def _load(self) -> tuple[ctypes.CDLL | None, str]:
        if self._loaded is None:
            self._loaded = self._compile_and_load()
        return self._loaded

    def _compile_and_load(self) -> tuple[ctypes.CDLL | None, str]:
        if os.environ.get(self.switch, "1") == "0":
            return None, f"turned off by {self.switch}=0"
        target = self.path()
        if not target.exists():
            problem = self._compile(target)
            if problem is not None:
                return None, problem
        try:
            return ctypes.CDLL(str(target)), f"compiled ({target})"
        except OSError as error:
            return None, f"could not load {target}: {error}"

    def _compile(self, target: Path) -> str | None:
        """Compile the source into ``target`` (atomically); None, or why it could not be."""
        compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
        if not compiler:
            return "no C compiler found (install gcc, or set $CC)"
        name = self.source.name
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
            os.close(fd)
            command = [compiler, "-O2", "-std=c99", "-shared", "-fPIC", "-o", tmp, str(self.source)]
            done = subprocess.run(command, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
            if done.returncode != 0:
                os.unlink(tmp)
                return f"{compiler} failed on {name}: {done.stderr.strip()[:300]}"
            os.replace(tmp, target)
        except (OSError, subprocess.SubprocessError) as error:
            return f"could not compile {name} into {target.parent}: {error}"
        return None
