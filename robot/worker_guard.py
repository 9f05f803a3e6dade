"""Worker processes that end with the daemon that started them, even when it is killed with SIGKILL.

A worker (the two-phase solver's, about 200 MB) calls ``exit_with_parent``
first. On Linux the kernel then signals it the moment its parent dies
(``prctl(PR_SET_PDEATHSIG)``); everywhere, a daemon thread checks every
``poll_s`` that its parent is still the process that started it. Either way
it exits at once, so nothing is left running after ``kill -9`` of the
daemon.

The kernel's signal comes when the *thread* that started the worker ends,
not only the process: a worker started from a run's thread hears it while
the daemon lives on. So the signal is one nothing else sends (SIGUSR1), and
its handler exits only when the parent really is gone; the thread check
covers the process's death after that.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1  # linux/prctl.h
POLL_S = 1.0


def exit_with_parent(poll_s: float = POLL_S, kernel: bool = True) -> None:
    """Make this process exit when its parent dies: the kernel's signal (Linux, unless ``kernel`` is False)
    and a thread that looks every ``poll_s``."""
    started_by = multiprocessing.parent_process()  # its pid even if it died before this call
    parent = started_by.pid if started_by is not None and started_by.pid is not None else os.getppid()
    if kernel and threading.current_thread() is threading.main_thread():  # where a signal handler can be set
        _ask_the_kernel(parent)
    if os.getppid() != parent:  # died before the signal was asked for
        os._exit(1)
    threading.Thread(target=_watch, args=(parent, poll_s), name="parent watch", daemon=True).start()


def _ask_the_kernel(parent: int) -> None:
    """``PR_SET_PDEATHSIG`` (Linux only) with a handler that exits if ``parent`` is gone."""
    if not sys.platform.startswith("linux"):
        return
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return
    signal.signal(signal.SIGUSR1, lambda _signum, _frame: _exit_if_orphaned(parent))
    prctl(PR_SET_PDEATHSIG, int(signal.SIGUSR1), 0, 0, 0)


def _exit_if_orphaned(parent: int) -> None:
    if os.getppid() != parent:
        os._exit(1)  # no clean-up: nothing of a worker's outlives it, and its parent is not there to hear


def _watch(parent: int, poll_s: float) -> None:
    while True:
        time.sleep(poll_s)
        _exit_if_orphaned(parent)
