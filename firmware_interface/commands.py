"""The rig's command set as methods: each queues one step and returns its ``Motion`` at once.

Mixed into ``RigLink``, which provides ``_submit`` (queue a step under its
lock, with the next motion id), ``_motors`` and ``_rig`` (from the
handshake) and ``port``. Arguments are checked here, before anything is
sent: a bad face or quarter-turn count is a ``ConfigError``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from solver import InvalidState
from solver.geometry import FACES
from solver.notation import parse_moves

from .errors import ConfigError
from .steps import QUARTER_TURNS, SPEED_MS, Step
from .transport import Motion

_SIGNED = {1: 1, 2: 2, 3: -1}     # solver move turns (clockwise quarter turns) → signed quarter turns


class RigCommands:
    """TURN, PAIR, HOME, ENABLE, DISABLE and SPEED for a connected link."""

    def _motor(self, name: str) -> str:
        if name not in self._motors:
            raise ConfigError(f"{name!r} is no motor of this rig ({','.join(self._motors)})", port=self.port)
        return name

    def _turn(self, face: str, quarter_turns: int) -> tuple[str, int]:
        if isinstance(quarter_turns, bool) or quarter_turns not in QUARTER_TURNS:
            raise ConfigError(f"quarter turns for {face}: use one of -2 -1 1 2, got {quarter_turns!r}", port=self.port)
        return self._motor(face), int(quarter_turns)

    def turn(self, face: str, quarter_turns: int) -> Motion:
        """Turn one face by signed quarter turns (+1 clockwise looking at the face, -1, +2 or -2)."""
        return self._submit(lambda mid: Step("TURN", mid, (self._turn(face, quarter_turns),)))

    def turn_pair(self, face: str, quarter_turns: int, other_face: str, other_quarter_turns: int) -> Motion:
        """Turn two opposite faces at once (e.g. U and D)."""
        def make(mid: int) -> Step:
            a, b = self._turn(face, quarter_turns), self._turn(other_face, other_quarter_turns)
            if self._rig is not None and not self._rig.opposite(a[0], b[0]):
                raise ConfigError(f"{a[0]} and {b[0]} are not opposite faces: they cannot turn together",
                                  port=self.port)
            return Step("PAIR", mid, (a, b))
        return self._submit(make)

    def moves(self, moves: str | Sequence[int]) -> list[Motion]:
        """Queue a move sequence in solver notation (``"R U2 F'"`` or move indices), one turn per move."""
        if isinstance(moves, str):
            try:
                moves = parse_moves(moves)
            except InvalidState as err:
                raise ConfigError(str(err), port=self.port) from None
        return [self.turn(FACES[m // 3], _SIGNED[m % 3 + 1]) for m in moves]

    def _motors_step(self, verb: str, motors: Iterable[str]) -> Motion:
        names = tuple(motors)
        if len(set(names)) != len(names):
            raise ConfigError(f"{verb}: motors {' '.join(names)} named more than once", port=self.port)
        return self._submit(lambda mid: Step(verb, mid, motors=tuple(self._motor(m) for m in names)))

    def home(self, motors: Iterable[str] = ()) -> Motion:
        """Home the given motors (all when none given)."""
        return self._motors_step("HOME", motors)

    def enable(self, motors: Iterable[str] = ()) -> Motion:
        """Energise the drivers of the given motors (all when none given); they are off after a reset."""
        return self._motors_step("ENABLE", motors)

    def disable(self, motors: Iterable[str] = ()) -> Motion:
        """De-energise the drivers of the given motors (all when none given)."""
        return self._motors_step("DISABLE", motors)

    def set_speed(self, quarter_ms: int) -> Motion:
        """Time for one quarter turn from then on, in ms (queued: applies after the steps before it)."""
        low, high = SPEED_MS
        if isinstance(quarter_ms, bool) or not isinstance(quarter_ms, int) or not low <= quarter_ms <= high:
            raise ConfigError(f"quarter-turn time must be {SPEED_MS[0]}..{SPEED_MS[1]} ms, got {quarter_ms!r}",
                              port=self.port)
        return self._submit(lambda mid: Step("SPEED", mid, quarter_ms=quarter_ms))
