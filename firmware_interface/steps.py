"""The command set of protocols v1 to v3: rigs, queued steps (motions) and their arguments.

A step is what the device queues and runs in order: a face turn, a turn of
two opposite faces at once, homing, enabling or disabling motors, a speed
change. Every step carries a motion id chosen by the host; the device
reports its completion by that id. ``parse_step`` is the device's check of
a command's arguments; it returns an error code and reason instead of
raising, so a C port can follow it line by line.

Version 2 adds MOTOR (set a motor up), PLAN (several turns in one frame,
each its own step with its own motion id) and JOG (raw steps); in a
version-1 session they are unknown verbs (BADCMD). Version 3 adds MOTOR's
optional ``overlap=`` and lets turns overlap (docs/protocol.md section 17).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from solver.puzzles.cube.geometry import FACES, OPPOSITE

CLEAR = "CLEAR"  # not queued: clears a latched fault
QUEUED = ("TURN", "PAIR", "HOME", "ENABLE", "DISABLE", "SPEED")  # version 1
QUEUED_V2 = (*QUEUED, "MOTOR", "PLAN", "JOG")
QUARTER_TURNS = (-2, -1, 1, 2)  # signed: + is clockwise looking at the face
SPEED_MS = (20, 10000)  # allowed duration of one quarter turn, ms
MOTOR_STEPS = (1, 20000)  # MOTOR steps= : steps per quarter turn
MOTOR_ACCEL = (1, 65535)  # MOTOR accel= : units of 100 steps/s²
MOTOR_KEYS = ("steps", "rate", "accel", "dir", "overlap")  # overlap: version 3, optional
JOG_STEPS = 32767  # JOG: -32767..32767 steps, not 0
DEFAULT_RATE = 40000  # the reference device's highest step rate, steps/s
DEFAULT_PLAN = 48  # the reference device's most turns per PLAN frame


@dataclass(frozen=True)
class Rig:
    """A kind of rig: its motor names and which pairs may turn together."""

    name: str
    motors: tuple[str, ...]
    pairs: frozenset = field(default_factory=frozenset)  # frozensets of two motor names

    def opposite(self, a: str, b: str) -> bool:
        return frozenset((a, b)) in self.pairs


# One motor per face, named by the face it turns (solver notation U R F D L B).
SIX_AXIS = Rig("six-axis", tuple(FACES), frozenset(frozenset((f, OPPOSITE[f])) for f in FACES))
RIGS = {SIX_AXIS.name: SIX_AXIS}


@dataclass(frozen=True)
class Step:
    """One queued step. ``turns`` for TURN/PAIR (and JOG: motor and raw steps), ``motors`` for
    HOME/ENABLE/DISABLE (empty: all) and MOTOR (its one motor), ``quarter_ms`` for SPEED, ``setup``
    for MOTOR: (steps per quarter turn, rate steps/s, accel in 100 steps/s², dir[, overlap steps]).

    A PLAN frame is not one step: the device queues each of its turns as a TURN or PAIR step
    with its own motion id (``parse_plan``)."""

    verb: str
    mid: int
    turns: tuple[tuple[str, int], ...] = ()
    motors: tuple[str, ...] = ()
    quarter_ms: int | None = None
    setup: tuple[int, ...] | None = None

    def args(self) -> tuple[str, ...]:
        """Arguments after the verb, as sent on the wire."""
        if self.verb in ("TURN", "PAIR", "JOG"):
            return (str(self.mid), *(f"{x}" for m, q in self.turns for x in (m, q)))
        if self.verb == "SPEED":
            return (str(self.mid), str(self.quarter_ms))
        if self.verb == "MOTOR":
            return (str(self.mid), *self.motors, *(f"{k}={v}" for k, v in zip(MOTOR_KEYS, self.setup or ())))
        return (str(self.mid), *self.motors)

    def plan_token(self) -> str:
        """This TURN or PAIR as one turn of a PLAN frame: ``R1``, ``U-1``, ``U1D-1``."""
        return "".join(f"{m}{q}" for m, q in self.turns)

    def describe(self) -> str:
        """Human form, e.g. ``TURN U -1`` or ``PAIR U 1 D -1``."""
        return " ".join((self.verb, *self.args()[1:]))
