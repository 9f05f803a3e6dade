"""The device's check of a command's arguments: the text of a frame to a queued ``Step``.

``parse_step`` returns an error code and reason instead of raising, so a C port can follow it line by line.
"""

from __future__ import annotations

import re
from typing import cast

from ..steps import (
    DEFAULT_PLAN,
    DEFAULT_RATE,
    JOG_STEPS,
    MOTOR_ACCEL,
    MOTOR_KEYS,
    MOTOR_STEPS,
    QUARTER_TURNS,
    QUEUED,
    QUEUED_V2,
    SPEED_MS,
    Rig,
    Step,
)
from .framing import next_mid

_INT = re.compile(r"[+-]?[0-9]{1,5}\Z")
_PLAN_TURN = re.compile(r"([A-Za-z]+)([+-]?[0-9]{1,5})(?:([A-Za-z]+)([+-]?[0-9]{1,5}))?\Z")


def _number(text: str) -> int | None:
    return int(text) if _INT.match(text) else None


def _turn(rig: Rig, motor: str, turns: str) -> tuple[str, int] | str:
    if motor not in rig.motors:
        return f"unknown motor {motor!r} (this rig has {','.join(rig.motors)})"
    q = _number(turns)
    if q not in QUARTER_TURNS:
        return f"quarter turns {turns!r} for {motor}: use one of -2 -1 1 2"
    return motor, q


def _parse_motor(mid: int, rest: tuple[str, ...], rig: Rig, max_rate: int, proto: int) -> Step | str:
    keys = MOTOR_KEYS if proto >= 3 else MOTOR_KEYS[:4]
    usage = "MOTOR takes: motion id, motor, steps=S rate=R accel=A dir=D" + (" [overlap=O]" if proto >= 3 else "")
    if not 5 <= len(rest) <= len(keys) + 1:
        return usage
    if rest[0] not in rig.motors:
        return f"unknown motor {rest[0]!r} (this rig has {','.join(rig.motors)})"
    values: dict[str, int | None] = {}
    for token in rest[1:]:
        key, eq, text = token.partition("=")
        if not eq or key not in keys or key in values:
            return f"{token!r}: {usage}" if key not in values else f"{key} given twice"
        values[key] = _number(text)
    values.setdefault("overlap", 0)
    if len(values) != 5:
        return usage
    limits = {"steps": MOTOR_STEPS, "rate": (1, max_rate), "accel": MOTOR_ACCEL}
    for key, (low, high) in limits.items():
        value = values[key]
        if value is None or not low <= value <= high:
            return f"{key} must be {low}..{high}"
    if values["dir"] not in (1, -1):
        return "dir must be 1 or -1"
    overlap = values["overlap"]
    if overlap is None or not 0 <= overlap <= cast(int, values["steps"]):
        return "overlap must be 0..steps"
    setup = tuple(cast(int, values[k]) for k in keys)  # each checked above
    return Step("MOTOR", mid, motors=(rest[0],), setup=setup)


def _parse_jog(mid: int, rest: tuple[str, ...], rig: Rig) -> Step | str:
    if not rest or len(rest) % 2:
        return "JOG takes: motion id, then motor and steps for each motor"
    moves = []
    for motor, text in zip(rest[::2], rest[1::2]):
        if motor not in rig.motors:
            return f"unknown motor {motor!r} (this rig has {','.join(rig.motors)})"
        n = _number(text)
        if n is None or n == 0 or abs(n) > JOG_STEPS:
            return f"steps {text!r} for {motor}: use -{JOG_STEPS}..{JOG_STEPS}, not 0"
        moves.append((motor, n))
    if len({m for m, _ in moves}) != len(moves):
        return "JOG names a motor more than once"
    return Step("JOG", mid, tuple(moves))


def parse_plan(args: tuple[str, ...], rig: Rig, max_turns: int = DEFAULT_PLAN) -> list[Step] | str:
    """PLAN arguments (first motion id, turns) → one TURN or PAIR step per turn, or why not (all or nothing)."""
    mid = _number(args[0]) if args else None
    if mid is None or not 1 <= mid <= 65535:
        return f"motion id {args[0] if args else '(missing)'!r}: use 1..65535"
    turns = args[1:]
    if not turns:
        return "PLAN takes: motion id, then one or more turns such as R1 U-1 U1D-1"
    if len(turns) > max_turns:
        return f"plan of {len(turns)} turns: at most {max_turns} in one frame"
    steps = []
    for index, token in enumerate(turns, 1):
        match = _PLAN_TURN.match(token)
        if match is None:
            return f"turn {index} {token[:12]!r}: write <motor><q> or <motor><q><motor><q>"
        a, b, c, d = match.groups()
        verb, parsed = (
            ("TURN", _parse_args("TURN", (str(mid), a, b), rig))
            if c is None
            else ("PAIR", _parse_args("PAIR", (str(mid), a, b, c, d), rig))
        )
        if isinstance(parsed, str):
            return f"turn {index} {token!r}: {parsed}"
        steps.append(parsed)
        mid = next_mid(mid)
    return steps


def _parse_args(verb: str, args: tuple[str, ...], rig: Rig, max_rate: int = DEFAULT_RATE, proto: int = 1) -> Step | str:
    mid = _number(args[0]) if args else None
    if mid is None or not 1 <= mid <= 65535:
        return f"motion id {args[0] if args else '(missing)'!r}: use 1..65535"
    rest = args[1:]
    if verb == "TURN":
        if len(rest) != 2:
            return "TURN takes: motion id, motor, quarter turns"
        turn = _turn(rig, *rest)
        return turn if isinstance(turn, str) else Step(verb, mid, (turn,))
    if verb == "PAIR":
        if len(rest) != 4:
            return "PAIR takes: motion id, motor, quarter turns, motor, quarter turns"
        a, b = _turn(rig, *rest[:2]), _turn(rig, *rest[2:])
        if isinstance(a, str):
            return a
        if isinstance(b, str):
            return b
        if not rig.opposite(a[0], b[0]):
            return f"motors {a[0]} and {b[0]} are not an opposite pair"
        return Step(verb, mid, (a, b))
    if verb == "SPEED":
        ms = _number(rest[0]) if len(rest) == 1 else None
        if ms is None or not SPEED_MS[0] <= ms <= SPEED_MS[1]:
            return f"SPEED takes one quarter-turn time in ms, {SPEED_MS[0]}..{SPEED_MS[1]}"
        return Step(verb, mid, quarter_ms=ms)
    if verb == "MOTOR":
        return _parse_motor(mid, rest, rig, max_rate, proto)
    if verb == "JOG":
        return _parse_jog(mid, rest, rig)
    unknown = [m for m in rest if m not in rig.motors]
    if unknown or len(set(rest)) != len(rest):
        return f"motor list {' '.join(rest)!r}: name each of {','.join(rig.motors)} at most once"
    return Step(verb, mid, motors=tuple(rest))


def parse_step(
    verb: str,
    args: tuple[str, ...],
    rig: Rig,
    proto: int = 1,
    *,
    max_rate: int = DEFAULT_RATE,
    max_plan: int = DEFAULT_PLAN,
) -> Step | list[Step] | tuple[str, str]:
    """A queued command's verb and arguments in a session of version ``proto`` → ``Step`` (a list of
    TURN/PAIR steps for PLAN), or (error code, reason). MOTOR, PLAN and JOG are BADCMD before version 2."""
    if verb not in (QUEUED_V2 if proto >= 2 else QUEUED):
        return "BADCMD", f"unknown command {verb[:20]!r}" + (" in a version-1 session" if verb in QUEUED_V2 else "")
    parsed = parse_plan(args, rig, max_plan) if verb == "PLAN" else _parse_args(verb, args, rig, max_rate, proto)
    return ("BADARG", parsed) if isinstance(parsed, str) else parsed
