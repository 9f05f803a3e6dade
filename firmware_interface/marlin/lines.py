"""The lines of a Marlin session: what went out under which number, and what to send when Marlin asks again.

Numbers are given as lines are first sent, so lines dropped before sending
(a stop, a fault) leave no gap. ``LineBook.again(n)`` is the answer to
``Resend: n``: every line from n on, as sent, except that a line known to
have run (a marker proved it) or cancelled by a stop goes again as a no-op
marker under its number: Marlin gets the number it waits for, and nothing
runs twice or after a stop.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass

from ..motion import Motion
from .dialect import marker_command, numbered

BY_OK = "plain"  # answered by its ok
MARKER = "marker"  # answered by the marker it prints (rd<n> rd<n>): proof that it and every line before it ran
POSITION = "position"  # M114: answered by its position report
IDENT = "ident"  # M115: answered by its FIRMWARE_NAME line and the ok after its Cap: lines
STEPS = "steps"  # M92 alone: answered by its report of every axis's steps per unit
REPORTS = (POSITION, IDENT, STEPS)  # lines asked for a report: asked again if the report was lost


@dataclass(eq=False)
class Line:
    text: str
    kind: str = BY_OK
    motion: Motion | None = None
    role: str = ""  # "received" (a move's G1) or "completed" (the line whose answer completes the motion)
    future: Future | None = None  # query(): M114's position; connect(): M115
    n: int = 0  # 0: not numbered yet
    sent_at: float = 0.0
    heard: bool = False  # its report (M114's position, M115's firmware line) came since it was sent
    cancelled: bool = False
    expect_s: float = 0.0  # an M400: how long the motion before it should take (probes wait this much longer)

    def copy(self) -> Line:
        """The same request as a new line (its report was lost: it is asked again under a new number)."""
        return Line(self.text, self.kind, self.motion, self.role, self.future, expect_s=self.expect_s)


class LineBook:
    """Every line sent in this numbering, by number (the last ``size``)."""

    def __init__(self, size: int):
        self.size = size
        self.restart()

    def restart(self) -> None:
        """``M110 N0`` was sent: the next line is N1."""
        self.next_n = 1
        self._sent: dict[int, Line] = {}

    @property
    def last(self) -> int:
        return self.next_n - 1

    def number(self, line: Line) -> None:
        """Give a new line its number (a marker its text)."""
        if line.n:
            return
        line.n, self.next_n = self.next_n, self.next_n + 1
        if line.kind == MARKER:
            line.text = marker_command(line.n)
        self._sent[line.n] = line
        self._sent.pop(line.n - self.size, None)

    def get(self, n: int) -> Line | None:
        return self._sent.get(n)

    def wire(self, line: Line) -> bytes:
        return numbered(line.n, line.text)

    def again(self, n: int, proven: int) -> list[Line] | None:
        """The lines to send for ``Resend: n``, in order; None when line n is no longer kept."""
        lines = []
        for k in range(n, self.next_n):
            line = self._sent.get(k)
            if line is None and k > proven:
                return None
            if line is None or k <= proven or line.cancelled:
                line = self._sent[k] = Line(marker_command(k), MARKER, n=k)
            lines.append(line)
        return lines

    def cancel(self, after: int) -> None:
        """A stop: no line after ``after`` (the last one proven to have run) may run if Marlin asks for it again."""
        for k in range(after + 1, self.next_n):
            line = self._sent.get(k)
            if line is not None:
                line.cancelled = True
