"""The command set of protocol v1: rigs, queued steps (motions) and their arguments.

A step is what the device queues and runs in order: a face turn, a turn of
two opposite faces at once, homing, enabling or disabling motors, a speed
change. Every step carries a motion id chosen by the host; the device
reports its completion by that id. ``parse_step`` is the device's check of
a command's arguments; it returns an error code and reason instead of
raising, so a C port can follow it line by line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from solver.geometry import FACES, OPPOSITE

CLEAR = "CLEAR"                                   # not queued: clears a latched fault
QUEUED = ("TURN", "PAIR", "HOME", "ENABLE", "DISABLE", "SPEED")
QUARTER_TURNS = (-2, -1, 1, 2)                    # signed: + is clockwise looking at the face
SPEED_MS = (20, 10000)                            # allowed duration of one quarter turn, ms
_INT = re.compile(r"[+-]?[0-9]{1,5}\Z")


@dataclass(frozen=True)
class Rig:
    """A kind of rig: its motor names and which pairs may turn together."""
    name: str
    motors: tuple[str, ...]
    pairs: frozenset = field(default_factory=frozenset)   # frozensets of two motor names

    def opposite(self, a: str, b: str) -> bool:
        return frozenset((a, b)) in self.pairs


# One motor per face, named by the face it turns (solver notation U R F D L B).
SIX_AXIS = Rig("six-axis", tuple(FACES), frozenset(frozenset((f, OPPOSITE[f])) for f in FACES))
RIGS = {SIX_AXIS.name: SIX_AXIS}


@dataclass(frozen=True)
class Step:
    """One queued step. ``turns`` for TURN/PAIR, ``motors`` for HOME/ENABLE/DISABLE (empty: all),
    ``quarter_ms`` for SPEED."""
    verb: str
    mid: int
    turns: tuple[tuple[str, int], ...] = ()
    motors: tuple[str, ...] = ()
    quarter_ms: int | None = None

    def args(self) -> tuple[str, ...]:
        """Arguments after the verb, as sent on the wire."""
        if self.verb in ("TURN", "PAIR"):
            return (str(self.mid), *(f"{x}" for m, q in self.turns for x in (m, q)))
        if self.verb == "SPEED":
            return (str(self.mid), str(self.quarter_ms))
        return (str(self.mid), *self.motors)

    def describe(self) -> str:
        """Human form, e.g. ``TURN U -1`` or ``PAIR U 1 D -1``."""
        return " ".join((self.verb, *self.args()[1:]))


def _number(text: str) -> int | None:
    return int(text) if _INT.match(text) else None


def _turn(rig: Rig, motor: str, turns: str) -> tuple[str, int] | str:
    if motor not in rig.motors:
        return f"unknown motor {motor!r} (this rig has {','.join(rig.motors)})"
    q = _number(turns)
    if q not in QUARTER_TURNS:
        return f"quarter turns {turns!r} for {motor}: use one of -2 -1 1 2"
    return motor, q


def _parse_args(verb: str, args: tuple[str, ...], rig: Rig) -> Step | str:
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
        for t in (a, b):
            if isinstance(t, str):
                return t
        if not rig.opposite(a[0], b[0]):
            return f"motors {a[0]} and {b[0]} are not an opposite pair"
        return Step(verb, mid, (a, b))
    if verb == "SPEED":
        ms = _number(rest[0]) if len(rest) == 1 else None
        if ms is None or not SPEED_MS[0] <= ms <= SPEED_MS[1]:
            return f"SPEED takes one quarter-turn time in ms, {SPEED_MS[0]}..{SPEED_MS[1]}"
        return Step(verb, mid, quarter_ms=ms)
    unknown = [m for m in rest if m not in rig.motors]
    if unknown or len(set(rest)) != len(rest):
        return f"motor list {' '.join(rest)!r}: name each of {','.join(rig.motors)} at most once"
    return Step(verb, mid, motors=tuple(rest))


def parse_step(verb: str, args: tuple[str, ...], rig: Rig) -> Step | tuple[str, str]:
    """A queued command's verb and arguments → ``Step``, or (error code, reason)."""
    if verb not in QUEUED:
        return "BADCMD", f"unknown command {verb[:20]!r}"
    parsed = _parse_args(verb, args, rig)
    return ("BADARG", parsed) if isinstance(parsed, str) else parsed
