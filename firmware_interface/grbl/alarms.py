"""grbl's alarms in robotd's words: what each means on a cube rig, what to check, and which need a reset.

grbl locks itself in the Alarm state on an ``ALARM:N`` and then refuses
G-code (``error:9``) until ``$X``. A hard or soft limit alarm (and, in
grblHAL, an emergency-stop input) is worse: the board prints ``[MSG:Reset to
continue]`` and answers no line at all, ``$X`` included, until a soft reset
(0x18); after that reset it is still in Alarm and ``$X`` unlocks it
(checked on grbl-Mega-5X 1.1q, shared/stock-firmware/README.md).
"""

from __future__ import annotations

ALARMS = {
    1: "hard limit triggered",
    2: "soft limit: target beyond machine travel",
    3: "reset while in motion",
    4: "probe not in its expected initial state",
    5: "probe did not make contact",
    6: "homing cycle was reset",
    7: "safety door opened while homing",
    8: "homing pull-off did not clear the switch",
    9: "homing could not find the limit switch",
    10: "emergency stop asserted",
    11: "homing required",
    12: "limit switch engaged",
    13: "probe protection triggered",
    14: "spindle at-speed timeout",
    15: "homing could not find the second switch of a squared axis",
    16: "power-on self test failed",
    17: "motor fault",
    18: "homing failed (bad configuration)",
}

# alarms after which grbl answers nothing but a soft reset (grbl 1.1: limits; grblHAL: also its e-stop input)
RESET_ALARMS = frozenset({1, 2, 10})
RESET_MESSAGE = "reset to continue"  # in [MSG:Reset to continue] and grblHAL's e-stop message
UNLOCKED_MESSAGE = "Caution: Unlocked"  # $X's answer when the board was locked

_HOMING = "robotd never homes (a cube rig has no home switches): set $22=0"
ADVICE = {
    1: "a limit switch input triggered, and a cube rig has none: set $21=0 (hard limits off) and check the "
    "limit pins for noise or a wrong invert mask ($5)",
    2: "a move went past a soft limit: check $130-$135 max travel / $20, or disable soft limits ($20=0), "
    "since a cube rig's axes turn endlessly",
    3: "grbl was reset while a face was turning (robotd's emergency stop, or a reset of the board): that face "
    "stopped where it was, part-way; robotd turns it to the nearest quarter turn before anything moves again",
    4: "a probe cycle failed, and robotd never probes: check for stray G38 lines",
    5: "a probe cycle failed, and robotd never probes: check for stray G38 lines",
    10: "the board's emergency-stop input is active: release it or check its wiring",
    11: f"grbl asks for homing before it moves; {_HOMING}",
    12: "a limit switch input reads as engaged: set $21=0 and check the limit pins and their invert mask ($5)",
    17: "a stepper driver reported a fault: check the driver, its supply and the motor wiring",
}


def describe_alarm(code: int | None) -> str:
    return f"ALARM:{code} {ALARMS.get(code, 'unknown alarm')}" if code is not None else "alarm (code not received)"


def alarm_advice(code: int | None) -> str:
    """A sentence on what the alarm means on a cube rig and what to check."""
    if code in ADVICE:
        return ADVICE[code]
    if code is not None and 6 <= code <= 18:
        return f"homing or a safety input failed; {_HOMING}"
    return "see the board's alarm list; check its settings ($$) against docs/hardware.md"


def needs_reset(code: int | None) -> bool:
    """Does grbl refuse every line after this alarm until a soft reset?"""
    return code in RESET_ALARMS


def alarm_message(code: int | None, reset: bool) -> str:
    """The fault of an alarm: what happened, what to check, what ``clear()`` does about it."""
    recovery = "soft-resets grbl (0x18), then unlocks it ($X)" if reset else "unlocks it ($X)"
    meaning = ALARMS.get(code, "unknown alarm") if code is not None else "its code was not received"
    return f"grbl raised ALARM:{'' if code is None else code} ({meaning}): {alarm_advice(code)}; clear() {recovery}"


def settings_warnings(settings: dict[int, str]) -> list[str]:
    """What the board's ``$$`` settings will do to a cube rig, worded as what to change."""
    on = {number for number in (13, 20, 21, 22) if flag_on(settings.get(number))}
    warnings = []
    if 20 in on:
        warnings.append(
            "soft limits are on ($20=1): any move past $130-$135 max travel stops the rig with ALARM:2, and a cube "
            "rig's axes turn endlessly; set $20=0"
        )
    if 21 in on:
        warnings.append("hard limits are on ($21=1) but a cube rig has no limit switches; set $21=0")
    if 22 in on:
        warnings.append(
            "homing is on ($22=1): grbl locks itself at every power-up and asks for $H, which a cube rig cannot "
            "do; robotd unlocks it with $X instead (the faces count as square where they are); set $22=0"
        )
    if 13 in on:
        warnings.append("positions are reported in inches ($13=1), robotd reads millimetres; set $13=0")
    lock = settings.get(1)
    if lock is not None and lock.strip() not in ("255", "255.0"):
        warnings.append(
            f"step idle delay $1={lock}: after every move grbl waits that many ms before it reports Idle (each "
            "turn takes that much longer) and then switches the drivers off, so the faces can slip; set $1=255 "
            "(drivers always on)"
        )
    return warnings


def flag_on(value: str | None) -> bool:
    """A ``$$`` switch (``$20=1``) that is on."""
    try:
        return value is not None and float(value) != 0
    except ValueError:
        return False
