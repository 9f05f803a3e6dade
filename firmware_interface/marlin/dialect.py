"""Marlin's serial dialect, pure (no I/O): numbered lines, checksums, replies and move encoding.

A line to the board is ``N<n> <command>*<checksum>``: the checksum is the XOR
of every byte before ``*``, written in decimal. Marlin takes line ``n`` into
its command queue only if it follows the last line it took (``n == last +
1``) and the checksum matches; a repeat of the last line or the one before
is dropped without a word; any other number or a bad checksum gets
``Error:...``, ``Resend: <last+1>`` and ``ok``, and Marlin empties its receive
buffer. ``M110 N0`` resets the count (the next line is ``N1``). A line
without a number is run as it is, checksum or not.

Replies are text lines without a checksum: ``ok`` (with ADVANCED_OK ``ok
N<n> P<planner free> B<buffer free>``), ``Resend: <n>``, ``echo:busy:
processing`` (older builds: ``busy: processing``), ``echo:...``,
``Error:...``, ``start`` and the version banner after a reset, M115's
``FIRMWARE_NAME:...`` and ``Cap:NAME:0|1`` lines, M114's ``X:.. Y:..
Count X:..`` and the text of ``M118``, which the link uses as a marker
(``rd<n> rd<n>``: line n ran).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..gcode import number

DEFAULT_AXES = {"U": "X", "R": "Y", "F": "Z", "D": "I", "L": "J", "B": "K"}
# Marlin 2.1 names axes 4..9 I J K U V W by default, A B C U V W when configured so (its bugfix branch's default)
AXIS_NUMBER = {**{a: i for i, a in enumerate("XYZIJKUVW", 1)}, "A": 4, "B": 5, "C": 6}
AXIS_LETTERS = "".join(AXIS_NUMBER)
STOP_LINE = b"M410\n"  # quick stop, unnumbered: Marlin acts on it as it reads it (at once with EMERGENCY_PARSER)

# words of the Error: texts Marlin follows with Resend + ok (a bad line number or checksum): the protocol's own
# recovery, not a fault
LINE_ERROR_WORDS = ("Last Line", "checksum", "Checksum", "Line Number", "with line number")
HALTED = "Printer halted"


def named_as(axis: str, letters: str) -> str:
    """``axis`` as a board with axes ``letters`` names it: itself, or its name of the same axis number (``I`` is
    ``A`` on a board that names axes 4-6 A B C); unchanged when the board has no such axis."""
    if axis in letters:
        return axis
    number = AXIS_NUMBER.get(axis, 0)
    return letters[number - 1] if 0 < number <= len(letters) else axis


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


def marker_command(n: int) -> str:
    """The command of marker line ``n``: Marlin prints ``rd<n> rd<n>`` when it runs it (``parse_reply``: marker)."""
    return f"M118 rd{n} rd{n}"


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
    """One line from Marlin. ``kind``: ok, resend, busy, error, start, banner, echo, position, marker,
    firmware (M115's first line), cap (M115's ``Cap:`` lines), steps (M92's), limits (M203's, M201's,
    M204's), other."""

    kind: str
    text: str = ""
    n: int | None = None  # ok N (ADVANCED_OK), Resend n, an Error's "Last Line", a marker's line
    planner: int | None = None  # ADVANCED_OK P: free planner blocks
    buffer: int | None = None  # ADVANCED_OK B: free command buffer slots

    @property
    def line_error(self) -> bool:
        """An Error: that Marlin recovers from itself with Resend (bad number or checksum)."""
        # only these carry "Last Line:"; a word of them still tells one whose text was garbled on the way
        return self.kind == "error" and any(word in self.text for word in LINE_ERROR_WORDS)

    @property
    def halted(self) -> bool:
        return self.kind == "error" and HALTED in self.text

    @property
    def unknown_command(self) -> bool:
        return self.kind == "echo" and self.text.startswith("Unknown command")


_OK_FIELD = re.compile(r"\b([NPB])(-?\d+)\b")
_RESEND = re.compile(r"^(?:Resend:|rs)\s*N?:?\s*(\d+)$", re.IGNORECASE)
_LAST_LINE = re.compile(r"Last Line:\s*(-?\d+)")
_POSITION = re.compile(r"\b([XYZIJKABCUVWE]):(-?\d+(?:\.\d+)?)")
_MARKER = re.compile(r"^(?:echo:)?rd(\d+) rd(\d+)$")
_BUSY = re.compile(r"^(?:echo:)?busy:")
_STEPS = re.compile(r"^(?:echo:)?\s*M92\s+[XYZIJKABCUVWE]-?\d")
_LIMITS = re.compile(r"^(?:echo:)?\s*M20[134]\s+[A-Z]-?\d")
_SETTING_FIELD = re.compile(r"\b([A-Z])(-?\d+(?:\.\d+)?)")


def parse_reply(raw: str) -> Reply:
    """Classify one reply line (without its line end)."""
    line = raw.strip()
    if line == "ok" or line.startswith("ok "):
        fields = dict(_OK_FIELD.findall(line[2:]))
        get = lambda key: int(fields[key]) if key in fields else None  # noqa: E731
        return Reply("ok", line, get("N"), get("P"), get("B"))
    special = _special(line)
    if special is not None:
        return special
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


def _special(line: str) -> Reply | None:
    """Resend, busy, a marker, or M115's lines; None for anything else."""
    resend = _RESEND.match(line)
    if resend:
        return Reply("resend", line, int(resend.group(1)))
    if _BUSY.match(line):
        return Reply("busy", line.split("busy:", 1)[1].strip())
    marker = _MARKER.match(line)
    if marker:  # both copies must agree: a byte garbled on the way shows
        return Reply("marker", line, int(marker.group(1))) if marker.group(1) == marker.group(2) else Reply("other")
    if line.startswith("FIRMWARE_NAME:"):
        return Reply("firmware", line)
    if line.startswith("Cap:"):
        return Reply("cap", line[4:])
    if _STEPS.match(line):
        return Reply("steps", line)
    if _LIMITS.match(line):
        return Reply("limits", line)
    return None


def parse_setting(text: str) -> tuple[str, dict[str, float]]:
    """A setting's report, ``M203 X500.00 Y500.00`` (or M503's ``echo:  M203 ...``) -> ("M203", {"X": 500.0,
    "Y": 500.0}): M92, M203, M201, M204."""
    words = text.replace("echo:", "").split(None, 1)
    fields = words[1] if len(words) > 1 else ""
    return words[0], {key: float(value) for key, value in _SETTING_FIELD.findall(fields)}


def parse_steps(text: str) -> dict[str, float]:
    """M92's report ``M92 X4.44 Y4.44 ... C4.44`` -> {"X": 4.44, ...}: steps per unit per axis."""
    return {axis: value for axis, value in parse_setting(text)[1].items() if axis != "E"}


def steps_command(steps_per_unit: dict[str, float]) -> str:
    """``M92 A4.444444``: set these axes' steps per unit (until a reset; ``M500`` keeps them)."""
    return "M92 " + " ".join(f"{axis}{steps_per_unit[axis]:.6f}" for axis in steps_per_unit)


def parse_position(text: str) -> dict[str, float]:
    """An M114 report ``X:90.00 Y:-180.00 ... Count X:...`` -> {"X": 90.0, ...} (the part before Count)."""
    head = text.split("Count", 1)[0]
    return {axis: float(value) for axis, value in _POSITION.findall(head)}


def position_agrees(text: str) -> bool:
    """An M114 report whose two halves (units, then ``Count`` steps) name the same axes: one garbled on the way
    (a letter or a colon lost) does not. A report without ``Count`` cannot be checked and passes."""
    head, _, counts = text.partition("Count")
    units = [axis for axis, _ in _POSITION.findall(head) if axis != "E"]
    return bool(units) and (not counts or units == [axis for axis, _ in _POSITION.findall(counts)])


def move_command(
    turns: list[tuple[str, int]],
    units_per_quarter: float,
    feed: float,
    start: dict[str, float] | None = None,
    share: float = 1.0,
) -> str:
    """``G1`` for axes turning at once, e.g. [("X", 1), ("I", -1)] -> ``G1 X90 I-90 F...``: relative, or with
    ``start`` (each axis's position) absolute, to start + the turn (``G1 X180 I0 F...`` from X90 I90);
    with ``share``, that part of the turn (``G1 X30 F...`` for a third of X's quarter).

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
    ends = [d * share + (start or {}).get(axis, 0.0) for (axis, _), d in zip(turns, deltas)]
    axes = " ".join(f"{axis}{number(end)}" for (axis, _), end in zip(turns, ends))
    return f"G1 {axes} F{number(rate)}"
