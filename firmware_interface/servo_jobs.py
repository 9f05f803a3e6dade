"""The job queue of a servo link (Maestro, host-pulsed PWM): ``ServoJobs``.

A servo link hands every command to one worker thread as a job, so commands reach the servos in the
order they were given and public methods return at once with a ``Motion`` (or a ``Future``). The link
subclasses ``ServoJobs`` and gives three hooks:

* ``_check_usable()``: raises the ``LinkError`` that refuses a new job (not connected, a fault latched);
* ``_before_job()``: runs on the worker before each job; raising fails the job unrun;
* ``_on_fault(err)``: the fault hook, called on the worker when a job raises ``err``; returns the fault
  the link now holds (a link that latches faults may return an earlier one), which fails a motion's
  futures. A job that is not a motion (a query) fails with its own ``err``.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass

from .errors import LinkError
from .motion import Motion, result_within, settle
from .steps import Step

log = logging.getLogger(__name__)


@dataclass
class ServoJob:
    run: Callable[[], object]
    future: Future
    motion: Motion | None = None

    def settle(self, value: object = None, error: BaseException | None = None) -> None:
        """Resolve the job's future (and its motion's ``received``, True on success) unless already done."""
        settle(self.future, value, error)
        if self.motion is not None:
            settle(self.motion.received, True if error is None else None, error)


class ServoJobs:
    """Jobs run in order on a worker thread, one worker per connection."""

    port: str  # set by the link

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.Queue[ServoJob | None] = queue.Queue()
        self._worker: threading.Thread | None = None
        self._next_mid = 1

    # ------------------------------------------------------------ hooks

    def _check_usable(self) -> None:
        raise NotImplementedError

    def _before_job(self) -> None:
        """Nothing by default: a job queued before a fault still runs (and meets the fault where it acts)."""

    def _on_fault(self, err: LinkError) -> LinkError:
        """By default the link holds no fault of its own: the job fails with ``err``."""
        return err

    # ------------------------------------------------------------ the worker

    def _start_worker(self, name: str) -> None:
        """A fresh queue and its worker (the old worker, if any, must be stopped first)."""
        self._jobs = queue.Queue()
        self._worker = threading.Thread(target=self._work, args=(self._jobs,), name=name, daemon=True)
        self._worker.start()

    def _stop_worker(self, timeout: float) -> None:
        """Queue the worker's stop mark behind the jobs queued and give it ``timeout`` seconds to end."""
        worker, self._worker = self._worker, None
        if worker is not None:
            self._jobs.put(None)
            worker.join(timeout=timeout)

    def _work(self, jobs: queue.Queue[ServoJob | None]) -> None:
        while (job := jobs.get()) is not None:
            try:
                self._before_job()
                value = job.run()
            except LinkError as err:
                fault = self._on_fault(err)
                job.settle(error=fault if job.motion is not None else err)
            except Exception as err:  # a bug: fail the job, keep the worker
                log.exception("%s: job failed", self.port)
                job.settle(error=LinkError(f"internal error: {err!r}", port=self.port))
            else:
                job.settle(value if value is not None else {"mid": job.motion.mid if job.motion else None})

    def _take_queued(self) -> list[ServoJob]:
        """Take every job still queued off the queue (the worker's stop mark stays); called with the lock held."""
        pending = []
        while True:
            try:
                pending.append(self._jobs.get_nowait())
            except queue.Empty:
                break
        if None in pending:
            self._jobs.put(None)
        return [job for job in pending if job is not None]

    # ------------------------------------------------------------ queueing

    def _submit(self, run: Callable[[], object], motion: Motion | None = None, check: bool = True) -> Future:
        """Queue ``run``; its future is the motion's ``completed`` (or a new one). ``check``: refuse if unusable."""
        future = motion.completed if motion is not None else Future()
        with self._lock:
            if check:
                self._check_usable()
            self._jobs.put(ServoJob(run, future, motion))
        return future

    def _motion(self, verb: str, tokens: Iterable[str]) -> Motion:
        with self._lock:
            motion = Motion(Step(verb, self._next_mid, motors=tuple(tokens)))
            self._next_mid += 1
        return motion

    @property
    def backlog(self) -> int:
        """Jobs queued and not yet taken by the worker."""
        return self._jobs.qsize()

    def wait(self, motions: Iterable[Motion] | None = None, timeout: float | None = None) -> list[dict]:
        """Wait for these motions; with none given, for everything queued so far (jobs run in order)."""
        if motions is None:
            result_within(self._submit(lambda: None, check=False), timeout, "the queue did not drain")
            return []
        return [motion.wait(timeout) for motion in motions]
