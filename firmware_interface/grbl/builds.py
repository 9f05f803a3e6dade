"""The two grbl builds the simulator can be, in what they print and how long their resets take.

``GRBLHAL``: grblHAL 1.1f as its documentation words it (robotd's dry runs).
``MEGA_5X``: grbl-Mega-5X 1.1q as the stock build of
shared/stock-firmware/ behaves under simavr (its README.md and
tests/test_grbl.py's checks against the binary): banner ``Grbl 1.1q``, a
blank EEPROM's boot text, ``$I`` without a FIRMWARE line, and resets that
keep it deaf for a while: its banner comes 0.25 s after a soft reset from
idle; in motion, ``ALARM:3`` comes after the ``$1`` idle delay and the
banner 1.0 s after the reset. Bytes sent before the banner are lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# the settings a blank EEPROM gets, as the stock grbl-Mega-5X build lists them ($$)
MEGA_5X_SETTINGS = {
    0: "10",
    1: "254",
    2: "0",
    3: "0",
    4: "0",
    5: "0",
    6: "0",
    10: "1",
    11: "0.020",
    12: "0.002",
    13: "0",
    20: "0",
    21: "0",
    22: "0",
    23: "0",
    24: "100.000",
    25: "500.000",
    26: "250",
    27: "5.000",
    30: "12000",
    31: "550",
    32: "0",
    **{100 + i: "4.444444" for i in range(6)},  # the build's value; $$ lists it as 4.444
    **{110 + i: "30000.000" for i in range(6)},
    **{120 + i: "5000.000" for i in range(6)},
    **{130 + i: travel for i, travel in enumerate(("400.000", "200.000", "200.000", "360.000", "180.000", "180.000"))},
}


# a grblHAL rig set up for quick turns: drivers always on, limits that cost a quarter turn no time at robotd's
# paces (grblHAL's own defaults, 500 units/min and 10 units/s², suit a milling machine, not a cube)
GRBLHAL_SETTINGS = {
    1: "255",
    10: "511",
    **{110 + i: "1000000.000" for i in range(6)},
    **{120 + i: "1000000000.000" for i in range(6)},
}


@dataclass(frozen=True)
class Delays:
    """How long a build takes over its resets and alarms, in seconds (grblHAL's: none)."""

    reset_idle_s: float = 0.0  # a soft reset from idle: deaf this long, then the banner
    reset_moving_s: float = 0.0  # a soft reset in motion: the banner this long after it
    alarm3_s: float = 0.0  # ... and ALARM:3 this long after it
    reset_message_s: float = 0.0  # a limit alarm's [MSG:Reset to continue] comes this long after the ALARM line
    feed_hold_s: float = 0.01  # a feed hold (!) in motion: Hold:1 this long after rest (or $1 ms), then Hold:0
    hold_lead_s: float = 0.0  # ... and the motion runs on as planned this long before it brakes


@dataclass(frozen=True)
class Build:
    """One build; the defaults are grblHAL's."""

    banner: str = "GrblHAL 1.1f ['$' or '$HELP' for help]"
    version: str = "1.1f.20240101"  # as [VER:...] has it
    firmware: str | None = "grblHAL"  # grblHAL's [FIRMWARE:...] line
    blank_eeprom: bool = False  # the first power-on prints error:7 and the settings (the defaults restored)
    delays: Delays = Delays()
    buffers: tuple[int, int] = (16, 1024)  # planner blocks, receive buffer bytes
    settings: dict[int, str] = field(default_factory=lambda: {**MEGA_5X_SETTINGS, **GRBLHAL_SETTINGS})

    @property
    def rx_buffer(self) -> int:
        return self.buffers[1]

    def build_info(self, letters: str, planner: int) -> list[str]:
        """``$I``'s lines, before its ok."""
        axes = f"[AXS:{len(letters)}:{letters}]"
        if self.firmware is None:  # grbl-Mega-5X: VER, AXS, OPT
            return [f"[VER:{self.version}:]", axes, f"[OPT:VNMGH,{planner},{self.rx_buffer},0]"]
        return [f"[VER:{self.version}:]", f"[OPT:VN,{planner},{self.rx_buffer}]", axes, f"[FIRMWARE:{self.firmware}]"]


GRBLHAL = Build()
MEGA_5X = Build(
    banner="Grbl 1.1q ['$' for help]",
    version="1.1q.20210103",
    firmware=None,  # its $I: VER, AXS, OPT
    blank_eeprom=True,
    # feed hold: the motion runs on as planned 0.09 s, brakes at $120, and says Hold:0 $1 ms after (segments.py)
    delays=Delays(reset_idle_s=0.25, reset_moving_s=1.0, alarm3_s=0.255, reset_message_s=0.5, hold_lead_s=0.09),
    buffers=(35, 255),
    settings=MEGA_5X_SETTINGS,
)
