"""Faces a stop left between two quarter turns, found from a G-code board's positions (Marlin, grbl).

An emergency stop in the middle of a turn leaves that face (or pair) where
the motors stopped, some way into the turn; the board reads back where,
in its units. A face turned on from there by whole quarter turns stays
that far off, and jams the faces beside it. ``squaring_turns`` gives the
fraction of a quarter turn that brings each such face to the nearest
quarter-turn position again, counted from where the faces were square
(connect, or the zero the link set since).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from .motion import Motion

# within this fraction of a quarter turn a face counts as square: 0.45 degrees, 2 steps of a 400-step quarter
# turn (a position read back from the motors is off by up to a step)
SQUARE_TOLERANCE = 0.005


def squaring_turns(positions: dict[str, float], units_per_quarter: float) -> dict[str, float]:
    """Each position (units from square) off a quarter-turn position -> the signed fraction of a quarter turn to
    the nearest one (at most a half)."""
    turns = {}
    for name, position in positions.items():
        quarters = position / units_per_quarter
        fraction = round(quarters) - quarters
        if abs(fraction) > SQUARE_TOLERANCE:
            turns[name] = fraction
    return turns


class Squaring:
    """``square()`` for a G-code link, which gives ``off_square()``, ``_lock``, ``_check_usable()``,
    ``_queue_turns(turns)`` (a move of fractional quarter turns, queued to be sent) and ``_run_after()``."""

    _lock: threading.Lock
    _run_after: Callable[[], None]  # LinePort's

    def off_square(self) -> dict[str, float]:
        raise NotImplementedError

    def _check_usable(self) -> None:
        raise NotImplementedError

    def _queue_turns(self, turns: list[tuple[str, float]]) -> Motion:
        raise NotImplementedError

    def square(self) -> list[Motion]:
        """Turn each face a stop left between two quarter turns to the nearest one, a face at a time (a Motion
        each, none when every face is square); between plans, once ``clear()`` has read where the motors are."""
        turns = self.off_square()
        with self._lock:
            self._check_usable()
            motions = [self._queue_turns([(face, fraction)]) for face, fraction in turns.items()]
        self._run_after()
        return motions
