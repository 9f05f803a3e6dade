"""A step on its way to a controller, as every link hands it out, and waiting on and settling its futures."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError

from .errors import LinkError
from .steps import Step


class Motion:
    """A queued step on its way to the device.

    ``received`` resolves (True) once the device confirmed receipt; ``completed``
    resolves with a dict once it reports the step done, or fails with the
    ``LinkError`` that stopped it. Both are ``concurrent.futures.Future``:
    from asyncio, ``await asyncio.wrap_future(motion.completed)``.
    """

    def __init__(self, step: Step):
        self.step = step
        self.mid = step.mid
        self.seq: int | None = None
        self.received: Future = Future()
        self.completed: Future = Future()

    @property
    def command(self) -> str:
        return self.step.describe()

    def wait(self, timeout: float | None = None) -> dict:
        """Block until done; raise its LinkError, or LinkError after ``timeout`` seconds."""
        return result_within(self.completed, timeout, f"motion {self.mid} ({self.command}) not done")

    def wait_received(self, timeout: float | None = None) -> bool:
        return result_within(self.received, timeout, f"motion {self.mid} ({self.command}) not acknowledged")

    def __repr__(self) -> str:
        state = "done" if self.completed.done() else "received" if self.received.done() else "sent"
        return f"<Motion {self.mid} {self.command} {state}>"


def result_within(future: Future, timeout: float | None, what: str):
    try:
        return future.result(timeout)
    except TimeoutError:
        raise LinkError(f"{what} after {timeout} s") from None


def settle(future: Future | None, value: object = None, error: BaseException | None = None) -> None:
    """Resolve ``future`` with ``error`` if one is given, else with ``value``, unless it is done already."""
    if future is None or future.done():
        return
    try:
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)
    except InvalidStateError:  # another thread resolved (or the caller cancelled) it just now
        pass


def settle_after(
    after: list[Callable[[], None]], future: Future | None, value: object = None, error: BaseException | None = None
) -> None:
    """Queue ``settle(future, value, error)`` on ``after``, the callbacks a link runs once its lock is released."""
    if future is not None:
        after.append(lambda: settle(future, value, error))
