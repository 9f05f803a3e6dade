"""The processes the tests started, read from /proc (Linux): which are still alive, and waiting for them to go."""

import ctypes
import multiprocessing
import os
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h

# started by multiprocessing once per interpreter and ended with it: not something a test left behind
INTERPRETER_HELPERS = ("multiprocessing.resource_tracker",)


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def children(parent: int | None = None) -> dict[int, str]:
    """The living child processes of ``parent`` (default: this one), each with its command line."""
    parent = os.getpid() if parent is None else parent
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # ended while we looked
            continue
        if int(fields[1]) == parent and fields[0] != "Z":
            found[int(entry.name)] = command
    return found


def adopt_orphans() -> bool:
    """Make this process the one an orphaned descendant is handed to (a worker of a robotd the tests killed, say),
    so that ``left_behind`` sees it; False where the kernel does not offer it."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def left_behind() -> dict[int, str]:
    """This process's children (adopted orphans too) that would outlive it: less the interpreter's own helpers and
    the multiprocessing children it ends itself on the way out (pools a test did not close)."""
    ended_at_exit = {process.pid for process in multiprocessing.active_children()}
    return {
        pid: command
        for pid, command in children().items()
        if pid not in ended_at_exit and not any(helper in command for helper in INTERPRETER_HELPERS)
    }


def wait_gone(pids, timeout_s: float) -> list[int]:
    """Wait up to ``timeout_s`` for every one of ``pids`` to end; those still alive then."""
    deadline = time.monotonic() + timeout_s
    while True:
        living = [pid for pid in pids if alive(pid)]
        if not living or time.monotonic() >= deadline:
            return living
        time.sleep(0.05)
