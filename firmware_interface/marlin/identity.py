"""Which board answered: Marlin's M115 (firmware, version, axis count, ``Cap:`` lines) and the axis names of its
M114, gathered at connect and judged against the config. Pure: no I/O, no clock.

``BoardReport`` collects what M115 and M114 said; ``board_axes`` maps the
configured faces onto the board's axis names (``I J K`` and ``A B C`` are
the same axes 4-6: Marlin's default names them one way or the other) or
says why the board does not fit; ``identify`` gives the link's ``info``
fields, with the stop method the capabilities call for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .dialect import AXIS_NUMBER, parse_setting, parse_steps

STOP_METHOD = {
    True: "M410 (quick stop), acted on as its bytes arrive (EMERGENCY_PARSER)",
    False: "M410 (quick stop), read at once: robotd keeps at most three lines in Marlin's 4-line command queue",
}
# measured on the stock builds' STEP pins under simavr (bench/stock_links.py, docs/hardware.md): steps end
# within about 1 ms of the bytes, with EMERGENCY_PARSER or without (the link keeps a queue slot free); a
# USB-serial adapter adds its own latency (up to 16 ms)
STOP_LATENCY_MS = {True: 20, False: 20}
_FIELD = re.compile(r"([A-Z_]+):(.*?)(?= [A-Z_]+:|$)")


@dataclass
class BoardReport:
    """What the board said about itself in this session."""

    fields: dict[str, str] = field(default_factory=dict)  # M115: FIRMWARE_NAME, AXIS_COUNT, ...
    capabilities: dict[str, bool] = field(default_factory=dict)  # M115's Cap: lines
    letters: str | None = None  # its axis names, in order, from M114
    steps_per_unit: dict[str, float] = field(default_factory=dict)  # M92's report, per axis
    limits: dict[str, dict[str, float]] = field(default_factory=dict)  # M203's, M201's, M204's reports

    def on_limits(self, text: str) -> None:
        code, values = parse_setting(text)
        self.limits[code] = values

    def on_firmware(self, line: str) -> None:
        self.fields = {key: value.strip() for key, value in _FIELD.findall(line)}

    def on_capability(self, text: str) -> None:
        name, _, value = text.rpartition(":")
        if name and value in ("0", "1"):
            self.capabilities[name] = value == "1"

    def on_steps(self, text: str) -> None:
        self.steps_per_unit = parse_steps(text)

    def on_position(self, axes: list[str]) -> None:
        self.letters = "".join(a for a in axes if a != "E")

    @property
    def firmware(self) -> str:
        """``Marlin bugfix-2.1.x`` from ``FIRMWARE_NAME:Marlin bugfix-2.1.x (Jan  7 2023 04:42:21)``."""
        return self.fields.get("FIRMWARE_NAME", "").split(" (")[0].strip()

    @property
    def version(self) -> str | None:
        words = self.firmware.split()
        return words[1] if len(words) > 1 and words[0] == "Marlin" else None

    @property
    def axis_count(self) -> int | None:
        count = self.fields.get("AXIS_COUNT", "")
        return int(count) if count.isdigit() else (len(self.letters) if self.letters else None)

    @property
    def emergency_parser(self) -> bool:
        """EMERGENCY_PARSER on; unknown (a lost ``Cap:`` line) counts as off, the slower case."""
        return self.capabilities.get("EMERGENCY_PARSER", False)


def refusal(report: BoardReport) -> str | None:
    """Why this is no Marlin robotd can drive, or None."""
    if not report.firmware.startswith("Marlin"):
        said = report.fields.get("FIRMWARE_NAME") or "nothing"
        return f"the board is not Marlin (M115 says FIRMWARE_NAME:{said}): check [controller] kind and the port"
    return None


def board_axes(axes: dict[str, str], report: BoardReport) -> dict[str, str]:
    """Each face's axis under the board's own name (``I`` configured, ``A`` on a board that names axis 4 so);
    ValueError that says what does not fit: too few axes, or names the board does not have."""
    letters = report.letters or ""
    count = max(report.axis_count or 0, len(letters))
    mapped = {}
    for face, letter in axes.items():
        number = AXIS_NUMBER.get(letter, 0)
        if letter in letters:
            mapped[face] = letter
        elif number > count:
            raise ValueError(
                f"the board has too few axes: face {face} is on {letter}, Marlin's axis {number}, but the board "
                f"has {count} ({' '.join(letters)}); build Marlin with more axes or map the faces to its axes"
            )
        elif letter in "IJKABC" and letters[number - 1 : number] in ("IJKABC"[number - 4], "IJKABC"[number - 1]):
            mapped[face] = letters[number - 1]
        else:
            raise ValueError(
                f"axis names do not match: face {face} is on {letter}, but the board names its axes "
                f"{' '.join(letters)}; map the faces to those names in [controller.marlin] axes"
            )
    return mapped


def identify(report: BoardReport) -> dict:
    """The board's part of the link's ``info``."""
    parser = report.emergency_parser
    return dict(
        firmware=report.firmware,
        version=report.version,
        axis_count=report.axis_count,
        axis_letters=report.letters,
        capabilities=dict(report.capabilities),
        emergency_parser=parser,
        stop_method=STOP_METHOD[parser],
        stop_latency_ms=STOP_LATENCY_MS[parser],
    )
