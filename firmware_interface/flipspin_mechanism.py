"""The physics of a two-servo flip/spin rig, for the simulated Maestro: what each servo move does to the cube.

World frame: a fixed camera looks down at world U; world D sits on the spinner base; world F faces the
user. The cube state is the facelet string of the cube as it sits in the world (DESIGN.md order).

* The "spin" servo turns the base; its end-points ccw / home / cw are spinner positions -1, 0, +1
  (quarter turns, positive clockwise seen from below, as a D turn goes).
* The "cover" servo moves the holder and flipper lever; its end-points are open / hold / flip.

Effects, applied when a servo reaches an end-point (``new = old[perm]``, solver/puzzles/cube/geometry.py):

* spinner from end-point p to p+q: with the cover at open the whole cube turns with the base
  (``cube_rotation_permutation("D")`` q mod 4 times); at hold the upper layers are held and the bottom
  layer turns (``face_turn_permutation("D")`` q mod 4 times). Passing through an end-point on the way
  counts as reaching it, so -1 to +1 is two steps of +1, the same as one of +2.
* cover from open to flip: the lever tips the cube over, the rotation x
  (``cube_rotation_permutation("R")``: world F goes to world U). Back from flip to open does nothing.

Jams (recorded in ``jammed`` with the reason; the cube keeps its state from then on): the spinner moving
while the cover is not at open or hold (moving, or at flip); the cover closing (towards hold or flip)
while the spinner is between end-points; a servo switched off between end-points (e-stop, reset). A
switched-off servo stays where it is. A powered servo that comes to rest between end-points and goes on
to one later (a damaged target the host corrects) jams nothing by itself: the base simply turns on.

The simulator calls ``servo_moved`` under its own lock; this class is not thread-safe by itself.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from solver.puzzles.cube.geometry import cube_rotation_permutation, face_turn_permutation

from .errors import ConfigError
from .virtual_cube import VirtualCube

SPIN_POINTS = (-1, 0, 1)
COVER_POINTS = ("open", "hold", "flip")
_HELD_COVER = ("open", "hold")
_SUFFIX = {1: "", 2: "2", 3: "'"}


class FlipSpinMechanism:
    """A flip/spin rig driven by two servo channels. End-points are pulse widths in µs."""

    def __init__(
        self,
        state: str | None = None,
        *,
        size: int = 3,
        spin_channel: int = 0,
        cover_channel: int = 1,
        spin_ccw_us: float = 1000,
        spin_home_us: float = 1500,
        spin_cw_us: float = 2000,
        cover_open_us: float = 1500,
        cover_hold_us: float = 1200,
        cover_flip_us: float = 1900,
        tolerance_us: float = 4.0,
    ):
        if spin_channel == cover_channel:
            raise ConfigError(f"the spin and cover servos need their own channels, both are {spin_channel}")
        self.channels = {"spin": spin_channel, "cover": cover_channel}
        self.end_points: dict[str, dict[int | str, float]] = {
            "spin": dict(zip(SPIN_POINTS, (spin_ccw_us, spin_home_us, spin_cw_us))),
            "cover": dict(zip(COVER_POINTS, (cover_open_us, cover_hold_us, cover_flip_us))),
        }
        for name, points in self.end_points.items():
            values = sorted(points.values())
            if any(b - a <= 2 * tolerance_us for a, b in zip(values, values[1:])):
                raise ConfigError(f"{name} end-points {points} must be more than {2 * tolerance_us} µs apart")
        self.tolerance = tolerance_us
        self._cube = VirtualCube(state, size)
        self._stickers = np.frombuffer(self._cube.facelets.encode(), dtype=np.uint8).copy()
        self.jammed: str | None = None
        self.counts = {"flips": 0, "spins": 0, "layer_turns": 0}  # spins, layer turns: in quarter turns
        self.events: list[str] = []
        self._horn: dict[str, float | None] = {"spin": None, "cover": None}  # None: not heard of yet
        self._powered = {"spin": False, "cover": False}
        self._last: dict[str, object] = {"spin": None, "cover": None}  # the last end-point reached

    # ------------------------------------------------------------ state

    @property
    def cube(self) -> str:
        return self._stickers.tobytes().decode()

    def set_state(self, state: str) -> None:
        """Put a cube (in this state, in the world frame) on the rig; clears a jam."""
        self._cube.set_state(state)
        self._stickers = np.frombuffer(state.encode(), dtype=np.uint8).copy()
        self.jammed = None

    @property
    def size(self) -> int:
        return self._cube.size

    @property
    def horns(self) -> dict[str, float | None]:
        """Where each servo's horn stands, in µs of pulse (None: not reported yet)."""
        return dict(self._horn)

    @property
    def spinner(self) -> int | None:
        return self._point("spin", self._horn["spin"])

    @property
    def cover(self) -> str | None:
        return self._point("cover", self._horn["cover"])

    def pulse(self, servo: str, point) -> int:
        """The Maestro target (quarter-µs) of an end-point, e.g. ``pulse("spin", 1)``, ``pulse("cover", "hold")``."""
        return round(self.end_points[servo][point] * 4)

    def home_targets(self) -> dict[int, int]:
        """Maestro home targets that start the rig at spinner home and cover open."""
        return {self.channels["spin"]: self.pulse("spin", 0), self.channels["cover"]: self.pulse("cover", "open")}

    def _point(self, servo: str, horn: float | None):
        if horn is None:
            return None
        for point, us in self.end_points[servo].items():
            if abs(horn - us) <= self.tolerance:
                return point
        return None

    # ------------------------------------------------------------ the simulator's hook

    def servo_moved(self, horns: dict[int, float | None], now: float) -> None:
        """The horns of the channels that changed, in µs of pulse (None: that channel sends no pulses)."""
        moved = {}
        for servo, channel in self.channels.items():
            if channel not in horns:
                continue
            horn, old = horns[channel], self._horn[servo]
            if horn is None:
                self._switched_off(servo)
            elif old is None:
                self._horn[servo], self._last[servo] = horn, self._point(servo, horn)
            elif horn != old:
                moved[servo] = (old, horn)
            self._powered[servo] = horn is not None
        if not moved:
            return
        self._check_jams(moved)
        for servo, (_, new) in moved.items():
            self._horn[servo] = new
        if self.jammed is None:
            for servo, (old, new) in moved.items():
                for point in self._crossed(servo, old, new):
                    self._reach(servo, point)

    def _switched_off(self, servo: str) -> None:
        if self._powered[servo] and self._horn[servo] is not None and self._point(servo, self._horn[servo]) is None:
            self._jam(f"the {servo} servo was switched off between end-points, at {self._horn[servo]:.0f} µs")

    def _check_jams(self, moved: dict[str, tuple[float, float]]) -> None:
        cover_now = self._point("cover", self._horn["cover"])
        cover_after = self._point("cover", moved["cover"][1]) if "cover" in moved else cover_now
        if "spin" in moved and (cover_now not in _HELD_COVER or cover_after != cover_now):
            where = "moving" if cover_after != cover_now else "at flip" if cover_now == "flip" else "between end-points"
            self._jam(f"the spinner turned while the cover was {where}")
        if "cover" in moved:
            old, new = moved["cover"]
            opened = self.end_points["cover"]["open"]
            closing = abs(new - opened) > abs(old - opened)
            spin_now = self._point("spin", self._horn["spin"])
            spin_after = self._point("spin", moved["spin"][1]) if "spin" in moved else spin_now
            if closing and (spin_now is None or spin_after is None):
                self._jam("the cover closed on the cube while the spinner was between end-points")

    def _jam(self, why: str) -> None:
        if self.jammed is None:
            self.jammed = why
            self.events.append(f"jam: {why}")

    def _crossed(self, servo: str, old: float, new: float) -> list:
        """End-points within reach of the stretch old..new, in the order the horn meets them."""
        low, high = min(old, new) - self.tolerance, max(old, new) + self.tolerance
        points = [(abs(us - old), point) for point, us in self.end_points[servo].items() if low <= us <= high]
        return [point for _, point in sorted(points)]

    def _reach(self, servo: str, point) -> None:
        last, self._last[servo] = self._last[servo], point
        if last is None or last == point:
            return
        if servo == "spin":
            self._spin(point - last)
        elif last == "open" and point == "flip":
            self._apply(cube_rotation_permutation("R", self.size), 1)
            self.counts["flips"] += 1
            self.events.append("flip x")

    def _spin(self, q: int) -> None:
        held = self._point("cover", self._horn["cover"]) == "hold"
        perm = face_turn_permutation("D", self.size) if held else cube_rotation_permutation("D", self.size)
        self._apply(perm, q)
        self.counts["layer_turns" if held else "spins"] += abs(q)
        self.events.append(f"{'turn' if held else 'rotate'} D{_SUFFIX[q % 4]}")

    def _apply(self, perm: np.ndarray, times: int) -> None:
        for _ in range(times % 4):
            self._stickers = self._stickers[perm]


class MechanismBoard:
    """What a simulated servo controller (Maestro, host-pulsed servos) shows of the mechanism its servos move:
    the virtual cube, under the board's ``_lock``. The board's ``_advance(now)`` moves the horns up to ``now``
    (under the lock)."""

    mechanism: FlipSpinMechanism | None
    _lock: Any

    def _advance(self, now: float) -> None:
        raise NotImplementedError

    @property
    def cube(self) -> str | None:
        with self._lock:
            # Real horns keep turning while the simulator's thread waits for a busy machine's CPU: the cube
            # is looked at as it stands now, not as the thread last left it.
            self._advance(time.monotonic())
            return self.mechanism.cube if self.mechanism is not None else None

    def set_state(self, state: str) -> None:
        with self._lock:
            if self.mechanism is None:
                raise ConfigError("this simulated board drives no mechanism: there is no cube to set")
            self.mechanism.set_state(state)
