"""A worker process ends with the daemon that started it, even after ``kill -9`` of the daemon."""

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from processes import alive, wait_gone

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

# a stand-in for the daemon: starts a spawned worker as robot.solving does, says its pid, then waits to be killed
PARENT = textwrap.dedent(
    """
    import multiprocessing, os, sys, threading, time
    from concurrent.futures import ProcessPoolExecutor
    from robot.worker_guard import exit_with_parent

    poll_s, kernel, from_thread = float(sys.argv[1]), sys.argv[2] == "kernel", sys.argv[3] == "thread"
    if __name__ == "__main__":
        pool = ProcessPoolExecutor(
            1, mp_context=multiprocessing.get_context("spawn"), initializer=exit_with_parent, initargs=(poll_s, kernel)
        )
        if from_thread:  # a run's thread starts the worker, then ends: the worker must live on
            starter = threading.Thread(target=lambda: pool.submit(int).result())
            starter.start()
            starter.join()
            time.sleep(0.3)
        print(pool.submit(os.getpid).result(timeout=30), flush=True)
        time.sleep(120)
    """
)

# the daemon's own two-phase worker (robot.solving.RigSolver), tables loaded
SOLVER_PARENT = textwrap.dedent(
    """
    import time, types
    from robot.config import Config
    from robot.rig import rig_from_config
    from robot.solving import RigSolver

    if __name__ == "__main__":
        rig = rig_from_config(Config({}).section("rig"))  # the worker weighs its warm-up solve by the rig's time
        solving = RigSolver(types.SimpleNamespace(solve_fallback="two-phase"), rig)
        solving.prepare()
        print(solving.worker_pid(), flush=True)
        time.sleep(120)
    """
)


def worker_of(code: str, *args: str) -> tuple[subprocess.Popen, int]:
    # the killed parent's resource tracker would warn of the semaphores it cleans up: expected here
    env = dict(os.environ, PYTHONWARNINGS="ignore::UserWarning")
    parent = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True, env=env)
    line = parent.stdout.readline()
    assert line.strip().isdigit(), f"the parent said {line!r}"
    return parent, int(line)


def kill_parent(parent: subprocess.Popen) -> None:
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait(5)
    parent.stdout.close()


@pytest.mark.parametrize(
    "poll_s, kernel, started_from",
    [
        (60.0, "kernel", "main"),  # the kernel's signal alone: the poll would come far too late
        (0.2, "no-kernel", "main"),  # the portable check alone
        (0.2, "kernel", "thread"),  # the kernel signals the thread's end: ignored; the check sees the parent die
    ],
)
def test_the_worker_exits_when_its_parent_is_killed(poll_s, kernel, started_from):
    parent, worker = worker_of(PARENT, str(poll_s), kernel, started_from)
    try:
        assert alive(worker)
    finally:
        kill_parent(parent)
    assert wait_gone([worker], timeout_s=5) == []


def test_the_two_phase_worker_exits_after_kill_9_of_the_daemon():
    parent, worker = worker_of(SOLVER_PARENT)
    try:
        assert alive(worker)
    finally:
        kill_parent(parent)
    assert wait_gone([worker], timeout_s=5) == []
