"""An emergency stop of a line link (Marlin's M112, grblHAL's soft reset), sent again until the board confirms it."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Protocol

from .errors import AckTimeout
from .motion import settle_after


class EstopTiming(Protocol):
    """What ``PendingEstop`` reads of a link's timing (``MarlinTiming``, ``GrblTiming``)."""

    @property
    def estop_retry(self) -> float: ...

    @property
    def estop_timeout(self) -> float: ...


@dataclass
class PendingEstop:
    """An emergency stop sent at ``sent`` and not confirmed yet. Its session calls it under the link's lock;
    ``future`` is settled through ``after`` (callbacks the link runs once the lock is released)."""

    future: Future
    sent: float
    timing: EstopTiming
    what: str  # what was sent ("M112", "soft reset"), for the AckTimeout
    port: str
    resend: Callable[[float], None]
    after: list[Callable[[], None]]
    again: float = field(init=False)  # when to send it again

    def __post_init__(self) -> None:
        self.again = self.sent + self.timing.estop_retry

    def confirm(self, now: float, done_through: int) -> None:
        """The board says it stopped."""
        settle_after(
            self.after, self.future, {"acknowledged_s": round(now - self.sent, 4), "done_through": done_through}
        )

    def tick(self, now: float) -> bool:
        """Send it again when due; True once ``estop_timeout`` has passed unconfirmed (the future then fails)."""
        if now - self.sent > self.timing.estop_timeout:
            error = AckTimeout(f"{self.what} not confirmed within {self.timing.estop_timeout} s", port=self.port)
            settle_after(self.after, self.future, error=error)
            return True
        if now >= self.again:
            self.again = now + self.timing.estop_retry
            self.resend(now)
        return False
