"""The rig's command set as methods: each queues one step and returns its ``Motion`` at once.

Mixed into ``RigLink``, which provides ``_submit`` (queue a step under its
lock, with the next motion id), ``_submit_many`` (several, all or none),
``_protocol`` (the session's version), ``_info``, ``_motors`` and ``_rig``
(from the handshake) and ``port``. Arguments are checked here, before
anything is sent: a bad face or quarter-turn count is a ``ConfigError``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

from solver import InvalidState
from solver.puzzles.cube.geometry import FACES
from solver.puzzles.cube.notation import parse_moves

from ..errors import ConfigError
from ..motion import Motion
from ..steps import JOG_STEPS, MOTOR_ACCEL, MOTOR_STEPS, QUARTER_TURNS, SPEED_MS, Rig, Step

_SIGNED = {1: 1, 2: 2, 3: -1}  # solver move turns (clockwise quarter turns) → signed quarter turns


def _integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class RigCommands:
    """TURN, PAIR, HOME, ENABLE, DISABLE, SPEED, and (version 2) PLAN, MOTOR, JOG for a connected link."""

    # What the link this is mixed into provides (see the module docstring).
    port: str
    _info: dict | None
    _motors: tuple[str, ...]
    _rig: Rig | None

    def _submit(self, make: Callable[[int], Step]) -> Motion:
        raise NotImplementedError

    def _submit_many(self, makers: list[Callable[[int], Step]], plannable: bool = False) -> list[Motion]:
        raise NotImplementedError

    def _protocol(self) -> int:
        raise NotImplementedError

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
                raise ConfigError(
                    f"{a[0]} and {b[0]} are not opposite faces: they cannot turn together", port=self.port
                )
            return Step("PAIR", mid, (a, b))

        return self._submit(make)

    def _turn_step(self, item) -> Callable[[int], Step]:
        """A plan entry, ``(motor, q)`` or ``((motor, q), (motor, q))``, checked now → its step maker."""

        def bad() -> ConfigError:
            return ConfigError(f"plan entry {item!r}: give (motor, quarter turns) or a pair of them", port=self.port)

        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise bad()
        if isinstance(item[0], str):
            turn = self._turn(*item)
            return lambda mid: Step("TURN", mid, (turn,))
        if not all(isinstance(t, (tuple, list)) and len(t) == 2 and isinstance(t[0], str) for t in item):
            raise bad()
        a, b = self._turn(*item[0]), self._turn(*item[1])
        if self._rig is not None and not self._rig.opposite(a[0], b[0]):
            raise ConfigError(f"{a[0]} and {b[0]} are not opposite faces: they cannot turn together", port=self.port)
        return lambda mid: Step("PAIR", mid, (a, b))

    def plan(self, turns: Sequence) -> list[Motion]:
        """Queue a whole sequence of turns; one ``Motion`` per entry, in order.

        An entry is one turn ``(motor, q)`` or two opposite motors at once ``((m1, q1), (m2, q2))``.
        Every entry is checked before anything is sent (ConfigError). On a version-2 session the
        turns go out in as few PLAN frames as the frame size, the device's ``plan`` and its free
        queue allow; on a version-1 session as TURN/PAIR frames.
        """
        turns = list(turns)
        if not turns:
            return []

        # checked under the link's lock, every entry before anything is queued
        def maker(item) -> Callable[[int], Step]:
            return lambda mid: self._turn_step(item)(mid)

        makers = [maker(item) for item in turns]
        plannable = all(m.isalpha() for m in self._motors)  # PLAN spells motors with letters only
        return self._submit_many(makers, plannable=plannable)

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
            raise ConfigError(
                f"quarter-turn time must be {SPEED_MS[0]}..{SPEED_MS[1]} ms, got {quarter_ms!r}", port=self.port
            )
        return self._submit(lambda mid: Step("SPEED", mid, quarter_ms=quarter_ms))

    def _need_v2(self, what: str) -> None:
        version = self._protocol()
        if version and version < 2:
            firmware = (self._info or {}).get("firmware")
            raise ConfigError(
                f"{what} needs protocol version 2, but the device (firmware {firmware}) runs a "
                f"version-{version} session: update its firmware",
                port=self.port,
            )

    def setup_motor(
        self, motor: str, steps: int, rate: int, accel: float, direction: int = 1, overlap: int = 0
    ) -> Motion:
        """MOTOR (version 2): ``steps`` per quarter turn, top ``rate`` steps/s, acceleration ``accel``
        steps/s² (sent in hundreds, rounded up), ``direction`` 1 or -1 (a motor mounted the other way).
        ``overlap`` (version 3, 0..steps): a turn of an adjacent face may start once this motor has that
        many steps left; a version-2 session does not send it and its turns never overlap."""

        def make(mid: int) -> Step:
            self._need_v2("MOTOR (setup_motor)")
            name = self._motor(motor)
            low, high = MOTOR_STEPS
            if not _integer(steps) or not low <= steps <= high:
                raise ConfigError(
                    f"MOTOR {name}: steps per quarter turn must be a whole number {low}..{high}, got {steps!r}",
                    port=self.port,
                )
            top = (self._info or {}).get("rate") or 65535
            if not _integer(rate) or not 1 <= rate <= top:
                raise ConfigError(
                    f"MOTOR {name}: rate must be a whole number of steps/s 1..{top} (the device's "
                    f"highest), got {rate!r}",
                    port=self.port,
                )
            lo_a, hi_a = MOTOR_ACCEL
            if isinstance(accel, bool) or not isinstance(accel, (int, float)) or not 0 < accel <= hi_a * 100:
                raise ConfigError(
                    f"MOTOR {name}: accel must be a number of steps/s² above 0 and at most {hi_a * 100}, got {accel!r}",
                    port=self.port,
                )
            if not _integer(direction) or direction not in (1, -1):
                raise ConfigError(f"MOTOR {name}: direction must be 1 or -1, got {direction!r}", port=self.port)
            if not _integer(overlap) or not 0 <= overlap <= steps:
                raise ConfigError(
                    f"MOTOR {name}: overlap must be a whole number of steps 0..{steps}, got {overlap!r}",
                    port=self.port,
                )
            hundreds = max(lo_a, math.ceil(accel / 100))
            setup = (steps, rate, hundreds, direction) + ((overlap,) if self._protocol() >= 3 else ())
            return Step("MOTOR", mid, motors=(name,), setup=setup)

        return self._submit(make)

    def jog(self, steps: Mapping[str, int]) -> Motion:
        """JOG (version 2): move raw steps on one or more motors at once, e.g. ``jog({"U": 25})``;
        the virtual cube of the simulator does not change (no whole face turn)."""

        def make(mid: int) -> Step:
            self._need_v2("JOG")
            if not isinstance(steps, Mapping) or not steps:
                raise ConfigError(f"JOG takes a mapping of motor to steps, got {steps!r}", port=self.port)
            moves = []
            for motor, n in steps.items():
                name = self._motor(motor)
                if not _integer(n) or n == 0 or abs(n) > JOG_STEPS:
                    raise ConfigError(
                        f"JOG {name}: steps must be a whole number -{JOG_STEPS}..{JOG_STEPS}, not 0, got {n!r}",
                        port=self.port,
                    )
                moves.append((name, n))
            return Step("JOG", mid, tuple(moves))

        return self._submit(make)
