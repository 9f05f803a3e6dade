"""Marlin's serial dialect, pure (no I/O): numbered lines, checksums, replies and move encoding.

A line to the printer board is ``N<n> <command>*<checksum>``: the checksum is
the XOR of every byte before ``*``, written in decimal. Marlin executes line
``n`` only if it follows the last line it accepted (``n == last + 1``) and the
checksum matches; otherwise it answers ``Error:...`` then ``Resend: <last+1>``
then ``ok``, and drops what else it had received. ``M110 N0`` resets the count
(the next line is ``N1``).

Replies are text lines without any checksum of their own: ``ok`` (with
ADVANCED_OK ``ok N<n> P<planner free> B<buffer free>``), ``Resend: <n>`` (or
``rs <n>``), ``busy: processing``, ``echo:...``, ``Error:...``, ``start`` after
a reset and version banners such as ``Marlin 2.1.2``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..gcode import number

DEFAULT_AXES = {"U": "X", "R": "Y", "F": "Z", "D": "I", "L": "J", "B": "K"}
AXIS_LETTERS = "XYZIJKUVW"  # Marlin 2.1: up to nine axes

# the Error: texts Marlin follows with Resend + ok: the protocol's own recovery, not a fault
LINE_ERRORS = (
    "Line Number is not Last Line Number+1",
    "checksum mismatch",
    "No Checksum with line number",
    "No Line Number with checksum",
)
HALTED = "Printer halted"


def checksum(text: str) -> int:
    """XOR of the bytes of ``text`` (everything before the ``*``)."""
    value = 0
    for byte in text.encode("latin-1", "replace"):  # a garbled byte still counts (and mismatches)
        value ^= byte
    return value


def numbered(n: int, command: str) -> bytes:
    """``command`` as line ``n``: ``N<n> <command>*<checksum>\\n``."""
    body = f"N{n} {command.strip()}"
    return f"{body}*{checksum(body)}\n".encode("ascii")


def reset_line_numbers() -> bytes:
    """Numbered ``M110 N0``: Marlin accepts it whatever its last line, and expects ``N1`` next."""
    return numbered(0, "M110 N0")


def split_numbered(line: str) -> tuple[int | None, str, int | None]:
    """``N12 G1 X9*77`` -> (12, "G1 X9", 77); missing parts are None (device side, for the simulator)."""
    line = line.strip()
    star = line.rfind("*")
    given = None
    if star >= 0:
        try:
            given = int(line[star + 1 :])
        except ValueError:
            given = -1
        line = line[:star]
    match = re.match(r"N(-?\d+)\s*", line)
    if not match:
        return None, line.strip(), given
    return int(match.group(1)), line[match.end() :].strip(), given


@dataclass(frozen=True)
class Reply:
    """One line from Marlin. ``kind``: ok, resend, busy, error, start, banner, echo, position, other."""

    kind: str
    text: str = ""
    n: int | None = None  # ok N (ADVANCED_OK), Resend n, or an Error's "Last Line"
    planner: int | None = None  # ADVANCED_OK P: free planner blocks
    buffer: int | None = None  # ADVANCED_OK B: free command buffer slots

    @property
    def line_error(self) -> bool:
        """An Error: that Marlin recovers from itself with Resend (bad number or checksum)."""
        # only these carry "Last Line:"; either part alone still tells one whose text was garbled on the way
        return self.kind == "error" and ("Last Line" in self.text or any(e in self.text for e in LINE_ERRORS))

    @property
    def halted(self) -> bool:
        return self.kind == "error" and HALTED in self.text


_OK_FIELD = re.compile(r"\b([NPB])(-?\d+)\b")
_RESEND = re.compile(r"^(?:Resend:|rs)\s*N?:?\s*(\d+)", re.IGNORECASE)
_LAST_LINE = re.compile(r"Last Line:\s*(-?\d+)")
_POSITION = re.compile(r"\b([XYZIJKUVWE]):(-?\d+(?:\.\d+)?)")


def parse_reply(raw: str) -> Reply:
    """Classify one reply line (without its line end)."""
    line = raw.strip()
    if line == "ok" or line.startswith("ok "):
        fields = dict(_OK_FIELD.findall(line[2:]))
        get = lambda key: int(fields[key]) if key in fields else None  # noqa: E731
        return Reply("ok", line, get("N"), get("P"), get("B"))
    resend = _RESEND.match(line)
    if resend:
        return Reply("resend", line, int(resend.group(1)))
    if line.startswith("busy:"):
        return Reply("busy", line[5:].strip())
    if line.startswith("Error:") or line.startswith("!!"):
        text = line.split(":", 1)[1].strip() if line.startswith("Error:") else line[2:].strip()
        last = _LAST_LINE.search(text)
        return Reply("error", text, int(last.group(1)) if last else None)
    if line == "start":
        return Reply("start", line)
    if re.match(r"^(echo:\s*)?Marlin\s+\S", line):
        return Reply("banner", line.split("Marlin", 1)[1].strip())
    if line.startswith("echo:"):
        return Reply("echo", line[5:].strip())
    if line.startswith("X:") and _POSITION.search(line):
        return Reply("position", line)
    return Reply("other", line)


def parse_position(text: str) -> dict[str, float]:
    """An M114 report ``X:90.00 Y:0.00 ... Count X:...`` -> {"X": 90.0, ...} (the part before Count)."""
    head = text.split("Count", 1)[0]
    return {axis: float(value) for axis, value in _POSITION.findall(head)}


def move_command(turns: list[tuple[str, int]], units_per_quarter: float, feed: float) -> str:
    """Relative ``G1`` for axes turning at once, e.g. [("X", 1), ("I", -1)] -> ``G1 X90 I-90 F...``.

    Marlin's F is the speed along the path (the Euclidean length of all axis
    moves), so for two axes F is scaled up so that the longer move runs at
    ``feed``: both start and stop together and a pair takes as long as its
    longer face turn.
    """
    if not turns:
        raise ValueError("a move needs at least one axis")
    deltas = [q * units_per_quarter for _, q in turns]
    longest = max(abs(d) for d in deltas)
    rate = feed * math.hypot(*deltas) / longest if longest else feed
    axes = " ".join(f"{axis}{number(d)}" for (axis, _), d in zip(turns, deltas))
    return f"G1 {axes} F{number(rate)}"
