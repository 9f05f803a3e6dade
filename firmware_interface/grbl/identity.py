"""Which board answered: grbl's banner, ``$I`` build info and ``$$`` settings, gathered at connect and judged.

``BoardReport`` collects what a session heard; ``identify`` turns it into
the link's ``info`` fields. Refused, with what to do: another firmware
(``not_grbl``, from its first words), grbl before 1.1 (``too_old``), a
board with too few axes or without the letters the faces are mapped to
(``refusal``). Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field

from .alarms import describe_alarm, flag_on, settings_warnings
from .dialect import axis_letters, parse_axes_info

STOP_METHOD = "feed hold (!) then soft reset (0x18), sent at once ahead of any queued line"
# from estop() to the last STEP edge: at most 3 ms on grbl-Mega-5X 1.1q's pins under simavr
# (bench/grbl_stop.py, docs/hardware.md); 3-10 ms measured on a real board behind a USB-serial adapter
STOP_LATENCY_MS = 10
MIN_VERSION = (1, 1)
OTHER_FIRMWARE = (  # a line that shows the board runs something else: (how it starts, what it is, kind)
    ("Marlin", "Marlin", "marlin"),
    ("echo:", "Marlin", "marlin"),
    ("start", "Marlin", "marlin"),  # its first words after a reset
    ("BOOT proto=", "robotd's own firmware", "robotd"),
    ("HELLO ", "robotd's own firmware", "robotd"),
)
_VERSION = re.compile(r"^(\d+)\.(\d+)")


@dataclass
class BoardReport:
    """What the board said about itself in this session."""

    banner: str | None = None  # "Grbl 1.1q", "GrblHAL 1.1f"
    build: dict[str, str] = field(default_factory=dict)  # $I: VER, OPT, AXS, FIRMWARE, ...
    letters: str | None = None  # its axes, from $I (AXS) or the first report
    settings: dict[int, str] = field(default_factory=dict)  # $$ (or a fresh board's boot text)
    alarms: list[int | None] = field(default_factory=list)  # ALARM:N heard while connecting
    was_locked: bool = False  # $X at connect answered "Caution: Unlocked"
    heard: deque[str] = field(default_factory=lambda: deque(maxlen=3))  # lines no grbl would say

    def on_info(self, text: str) -> None:
        key, _, value = text.partition(":")
        self.build[key] = value
        self.letters = parse_axes_info(text) or self.letters

    def axes_from_report(self, positions: int) -> str:
        """The board's letters: from ``$I`` (AXS), else as many as a report has positions."""
        if self.letters is None and positions:
            self.letters = axis_letters(positions)
        return self.letters or ""

    @property
    def name(self) -> str:
        return self.build.get("FIRMWARE") or (self.banner or "grbl").split()[0]

    @property
    def version(self) -> str | None:
        """``1.1q`` from ``[VER:1.1q.20210103:]``, else from the banner."""
        ver = self.build.get("VER", "").split(":")[0]
        if ver:
            return ".".join(ver.split(".")[:2])
        return self.banner.split()[1] if self.banner and len(self.banner.split()) > 1 else None

    def warnings(self) -> list[str]:
        """What robotd had to do at connect, or what the settings will do, that the user should fix."""
        notes = settings_warnings(self.settings)
        if self.alarms and self.was_locked:
            seen = ", ".join(describe_alarm(code) for code in self.alarms)
            notes.append(f"grbl was in alarm at connect ({seen}); robotd unlocked it with $X")
        elif self.was_locked and not flag_on(self.settings.get(22)):
            notes.append("grbl was locked in alarm at connect (an alarm from before); robotd unlocked it with $X")
        return notes


def identify(report: BoardReport) -> dict:
    """The board's part of the link's ``info``."""
    ver, _, build_text = report.build.get("VER", "").partition(":")
    date = ver.split(".")[2] if ver.count(".") >= 2 else None
    options = report.build.get("OPT", "").split(",")
    number = lambda i: int(options[i]) if len(options) > i and options[i].isdigit() else None  # noqa: E731
    letters = report.letters or ""
    return {
        "firmware": f"{report.name} {report.version}" if report.version else report.name,
        "version": report.version,
        "build_date": date,
        "build_info": build_text or None,
        "build_options": options[0] or None,
        "planner_blocks": number(1),
        "rx_buffer": number(2),
        "axis_count": len(letters),
        "axis_letters": letters,
        "stop_method": STOP_METHOD,
        "stop_latency_ms": STOP_LATENCY_MS,
        "settings": {f"${n}": value for n, value in sorted(report.settings.items()) if n in (1, 13, 20, 21, 22)},
        "warnings": report.warnings(),
    }


def too_old(banner: str) -> str | None:
    """Why a banner's grbl is older than robotd can talk to (0.9 words its reports differently)."""
    match = _VERSION.match(banner.split()[1] if len(banner.split()) > 1 else "")
    if match and (int(match.group(1)), int(match.group(2))) < MIN_VERSION:
        return f"the board runs {banner}: robotd needs grbl 1.1 or grblHAL (older reports differ); update its firmware"
    return None


def refusal(report: BoardReport, axes: dict[str, str]) -> str | None:
    """Why this board cannot drive the faces as ``axes`` maps them, or None when it can."""
    letters = report.letters or ""
    if not letters:
        return "the board reported no axes (no [AXS:...] in $I and no position in its status report)"
    missing = {face: axis for face, axis in axes.items() if axis not in letters}
    if not missing:
        return None
    mapped = ", ".join(f"{face} to {axis}" for face, axis in missing.items())
    if len(letters) < len(axes):
        return (
            f"the board has {len(letters)} axes ({letters}) and robotd needs one per face, {len(axes)}; "
            f"[controller.grblhal] axes maps {mapped}: build grbl with N_AXIS {len(axes)} or more"
        )
    return (
        f"the board's axes are {letters}; [controller.grblhal] axes maps {mapped}, which it lacks: "
        f"map each face to one of {letters}"
    )


def not_grbl(line: str) -> str | None:
    """What a line says the board is when it is plainly not grbl, as a refusal; None for anything else."""
    for start, what, kind in OTHER_FIRMWARE:
        if line.startswith(start):
            return f"the board runs {what}, not grbl (it said {line!r}): set [controller] kind = {kind!r}"
    return None
