"""grblHAL's serial dialect, pure (no I/O): replies, status reports, code tables and the lines robotd sends.

Lines to the board are plain G-code ended by a line feed, with no line
number and no checksum. The board answers each line with ``ok`` or
``error:N``. Besides lines, single real-time bytes act the moment they
arrive, wherever they sit in the stream: ``?`` (status report), ``!``
(feed hold), ``~`` (cycle start or resume) and 0x18 (soft reset); grbl
also takes every byte from 0x80 up out of the stream.

Pushed by the board at any time: status reports ``<Idle|MPos:...|FS:...>``
(state, then ``|``-separated fields; ``MPos`` or ``WPos``, with ``WCO`` now
and then so that one can be had from the other), ``ALARM:N``, the welcome
banner ``GrblHAL 1.1f ['$' or '$HELP' for help]`` (``Grbl 1.1h ['$' for
help]`` from classic grbl or grblHAL in compatibility mode) after every
reset, and bracketed messages such as ``[MSG:'$H'|'$X' to unlock]`` or
the ``[VER:...]`` lines of ``$I``.

The meanings below follow grblHAL's documented error table, in short words
of our own; alarms.py has the alarms.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ..gcode import number

STATUS_QUERY = b"?"
FEED_HOLD = b"!"
CYCLE_START = b"~"
SOFT_RESET = b"\x18"
REALTIME = frozenset(b"?!~\x18")  # plus every byte >= 0x80, which grbl drops or acts on

AXIS_LETTERS = "XYZABCUV"  # grblHAL's axis letters, in report order (3 to 8 axes)
DEFAULT_AXES = {"U": "X", "R": "Y", "F": "Z", "D": "A", "L": "B", "B": "C"}
STATES = ("Idle", "Run", "Hold", "Jog", "Alarm", "Door", "Check", "Home", "Sleep", "Tool")

ERRORS = {
    1: "expected command letter",
    2: "bad number format",
    3: "invalid '$' statement",
    4: "negative value where a positive one is needed",
    5: "homing is not enabled",
    6: "step pulse shorter than 2 us",
    7: "settings read failed (defaults restored)",
    8: "'$' command only valid while idle",
    9: "G-code locked out during alarm or jog",
    10: "soft limits need homing enabled",
    11: "line too long (not executed)",
    12: "setting exceeds the maximum step rate",
    13: "safety door open",
    14: "build info or startup line too long",
    15: "jog target exceeds machine travel",
    16: "invalid jog command",
    17: "laser mode needs PWM output",
    18: "reset asserted",
    19: "value must be positive",
    20: "unsupported or invalid G-code command",
    21: "two G-code commands of one modal group",
    22: "feed rate not set",
    23: "command needs an integer value",
    24: "two commands that both need axis words",
    25: "repeated G-code word",
    26: "no axis words for a command that needs them",
    27: "invalid line number",
    28: "missing value word",
    29: "G59.x coordinate systems not supported",
    30: "G53 only with G0 or G1",
    31: "axis words that no command uses",
    32: "arc without an in-plane axis word",
    33: "invalid motion target",
    34: "invalid arc radius",
    35: "arc without an in-plane offset",
    36: "unused value words",
    37: "G43.1 offset not on the tool length axis",
    38: "invalid tool number",
    39: "value out of range",
    40: "tool change pending",
    41: "spindle not running",
    42: "plane must be ZX for threading",
    43: "maximum feed rate exceeded",
    44: "spindle speed out of range",
    45: "limit switch engaged: only homing",
    46: "homing required",
    47: "current tool not set",
    48: "conflicting value words",
    49: "power-on self test failed",
    50: "emergency stop active",
    51: "motor fault",
    52: "setting value out of range",
    53: "setting not available",
    54: "retract position below drill depth",
    55: "two auto-squared axes homed together",
    56: "coordinate system locked",
    57: "unexpected file demarcation",
    58: "port not available",
    60: "SD card mount failed",
    61: "file read failed",
    62: "cannot open directory",
    63: "directory not found",
    64: "SD card not mounted",
    65: "file system not mounted",
    66: "file system read-only",
    70: "Bluetooth start failed",
    71: "unknown operation in expression",
    72: "division by zero in expression",
    73: "expression argument out of range",
    74: "invalid expression argument",
    75: "expression syntax error",
    76: "expression result not a number",
    77: "authentication required",
    78: "access denied",
    79: "not allowed during a critical event",
    80: "flow statement outside a macro",
    81: "unknown flow statement",
    82: "flow statement stack overflow",
    83: "out of memory in flow statement",
    84: "could not open file",
}

# errors a line garbled on the wire can draw (a changed letter, digit, sign, comment or line end):
# the line is sent again. Anything else means the board refused a line it read correctly.
LINE_NOISE_ERRORS = frozenset({1, 2, 3, 4, 11, 16, *range(20, 40), 42, 43, 44, 48, 54, 57, *range(71, 77), 80, 81})


def describe_error(code: int | None) -> str:
    return f"error:{code} {ERRORS.get(code, 'unknown error')}" if code is not None else "error (code unreadable)"


def axis_letters(count: int) -> str:
    """The letters of a board with ``count`` axes, in the order its reports list them."""
    return AXIS_LETTERS[: max(0, min(count, len(AXIS_LETTERS)))]


# ---------------------------------------------------------------- replies


@dataclass(frozen=True)
class Status:
    """One status report. Positions are tuples in the board's axis order; absent fields are None."""

    state: str
    substate: int | None = None
    mpos: tuple[float, ...] | None = None
    wpos: tuple[float, ...] | None = None
    wco: tuple[float, ...] | None = None
    feed: float | None = None
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def machine(self) -> tuple[float, ...] | None:
        """Machine position: MPos, or WPos + WCO when the report carries both."""
        if self.mpos is not None:
            return self.mpos
        if self.wpos is not None and self.wco is not None and len(self.wpos) == len(self.wco):
            return tuple(w + o for w, o in zip(self.wpos, self.wco))
        return None

    @property
    def label(self) -> str:
        return self.state if self.substate is None else f"{self.state}:{self.substate}"


@dataclass(frozen=True)
class Reply:
    """One line from the board. ``kind``: ok, error, alarm, status, banner, message, info, setting, other."""

    kind: str
    text: str = ""
    code: int | None = None  # error:N, ALARM:N, $N=value
    status: Status | None = None


_BANNER = re.compile(r"\b(GrblHAL|Grbl)\s+(\d+\.\d+[a-z]?)\s*\[", re.IGNORECASE)
_CODE = re.compile(r"^(error|ALARM):\s*(\d{1,3})\s*$")
_SETTING = re.compile(r"^\$(\d{1,4})=(.*)$")


def parse_reply(raw: str) -> Reply:
    """Classify one line (without its line end). Junk before a report's ``<`` is skipped."""
    line = raw.strip()
    if line == "ok":
        return Reply("ok", line)
    if line.startswith("error:") or line.startswith("ALARM:"):
        match = _CODE.match(line)
        kind = "error" if line.startswith("error") else "alarm"
        return Reply(kind, line, int(match.group(2)) if match else None)
    if "<" in line:
        status = parse_status(line[line.rfind("<") :])
        if status is not None:
            return Reply("status", line, status=status)
    banner = _BANNER.search(line)
    if banner and line.rstrip().endswith("]"):
        return Reply("banner", f"{banner.group(1)} {banner.group(2)}")
    setting = _SETTING.match(line)
    if setting:
        return Reply("setting", setting.group(2), int(setting.group(1)))
    if line.startswith("[MSG:") and line.endswith("]"):
        return Reply("message", line[5:-1])
    if line.startswith("[") and line.endswith("]") and ":" in line:
        return Reply("info", line[1:-1])
    return Reply("other", line)


def _numbers(text: str) -> tuple[float, ...] | None:
    try:
        values = tuple(float(part) for part in text.split(","))
    except ValueError:
        return None
    return values if all(math.isfinite(v) for v in values) else None


def parse_status(text: str) -> Status | None:
    """``<Idle|MPos:1.000,2.000,3.000|FS:0,0>`` -> Status; None for anything damaged (a report is
    taken whole or not at all)."""
    text = text.strip()
    if not (text.startswith("<") and text.endswith(">")) or text.count("<") != 1:
        return None
    head, *parts = text[1:-1].split("|")
    state, _, sub = head.partition(":")
    if state not in STATES or (sub and not sub.isdigit()):
        return None
    values: dict[str, tuple[float, ...]] = {}
    fields: dict[str, str] = {}
    for part in parts:
        key, colon, value = part.partition(":")
        if not colon or not key.isalpha():
            return None
        fields[key] = value
        if key in ("MPos", "WPos", "WCO", "FS", "F"):
            numbers = _numbers(value)
            if numbers is None:
                return None
            values[key] = numbers
    if "MPos" not in values and "WPos" not in values:
        return None
    feed = values.get("FS", values.get("F", (None,)))[0]
    return Status(
        state, int(sub) if sub else None, values.get("MPos"), values.get("WPos"), values.get("WCO"), feed, fields
    )


def parse_axes_info(text: str) -> str | None:
    """``AXS:6:XYZABC`` (a ``$I`` line, brackets removed) -> "XYZABC"."""
    parts = text.split(":")
    if len(parts) == 3 and parts[0] == "AXS" and parts[1].isdigit() and parts[2].isalpha():
        return parts[2].upper()
    return None


# ---------------------------------------------------------------- lines robotd sends


def path_feed(deltas: list[float], feed: float) -> float:
    """grbl's F is the speed along the path of all moving axes: scale it up so that the longest axis
    move runs at ``feed`` and a pair of faces takes as long as its longer turn."""
    longest = max((abs(d) for d in deltas), default=0.0)
    return feed * math.hypot(*deltas) / longest if longest else feed


def move_line(targets: dict[str, float], start: dict[str, float], feed: float) -> str:
    """An absolute move in machine coordinates that also pins the modal state a garbled earlier line
    could have changed (units, distance and feed mode), e.g. ``G90 G21 G94 G53 G1 X90 A-90 F38183.7``."""
    deltas = [targets[axis] - start.get(axis, targets[axis]) for axis in targets]
    axes = " ".join(f"{axis}{number(value)}" for axis, value in targets.items())
    return f"G90 G21 G94 G53 G1 {axes} F{number(path_feed(deltas, feed))}"


SETUP_LINE = "G90 G21 G94"
UNLOCK_LINE = "$X"
BUILD_INFO_LINE = "$I"
SETTINGS_LINE = "$$"
# per-axis settings: this number plus the axis's index ($100, $101, ...), the board's axes in order
STEPS_SETTING, MAX_RATE_SETTING, ACCELERATION_SETTING = 100, 110, 120  # steps/unit, units/min, units/s²


def steps_lines(steps_per_unit: dict[str, float], letters: str) -> list[str]:
    """``$103=4.444444``: set these axes' steps per unit (grbl keeps them in EEPROM)."""
    return [f"${STEPS_SETTING + letters.index(axis)}={value:.6f}" for axis, value in steps_per_unit.items()]


def board_steps(settings: dict[int, str], letters: str) -> dict[str, float]:
    """Axis -> steps per unit from ``$$`` (an axis whose value came garbled is left out)."""
    steps = {}
    for index, axis in enumerate(letters):
        try:
            steps[axis] = float(settings[STEPS_SETTING + index])
        except (KeyError, ValueError):
            pass
    return steps
