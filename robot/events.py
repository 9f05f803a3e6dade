"""The event bus: every phase change and executed move goes to every subscriber.

Publishing happens on the thread that drives the run. Subscribers are called
in order on that thread and must not block (the dashboard hands events to
its own loop; the history writes one row). A subscriber that raises is
logged and dropped, never allowed to stop the run.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable

Event = dict
Subscriber = Callable[[Event], None]

log = logging.getLogger("robotd.events")


class EventBus:
    """Numbered events (``seq``) with a time stamp, fanned out to subscribers."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self._lock = threading.Lock()
        self._publishing = threading.RLock()  # keeps delivery order equal to seq order
        self._seq = itertools.count(1)

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add a subscriber; returns the call that removes it."""
        with self._lock:
            self._subscribers.append(subscriber)
        return lambda: self.unsubscribe(subscriber)

    def unsubscribe(self, subscriber: Subscriber) -> None:
        with self._lock:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

    def publish(self, kind: str, run_id: int | None = None, **data) -> Event:
        """Stamp and deliver one event; returns it."""
        with self._publishing:
            with self._lock:
                event = {"seq": next(self._seq), "t": time.time(), "kind": kind, "run_id": run_id, "data": data}
                subscribers = list(self._subscribers)
            for subscriber in subscribers:
                try:
                    subscriber(event)
                except Exception:  # a broken listener must not stop the robot
                    log.exception("event subscriber %r failed; removing it", subscriber)
                    self.unsubscribe(subscriber)
        return event
