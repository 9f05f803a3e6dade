"""How long each op of a flip/spin rig takes, set in ``[rig]``.

Defaults are our own estimates for standard-size hobby servos (the
MG996R class, about 0.15-0.2 s per 60 degrees unloaded at 5 V by the usual
datasheets), not figures measured on a particular robot; measure yours
and set them:

- ``flip_s`` 0.70: the lever from open to flip and back, the cube tipping over;
- ``spin_quarter_s`` 0.30 / ``spin_half_s`` 0.50: the base carrying the whole cube;
- ``turn_quarter_s`` 0.40 / ``turn_half_s`` 0.65: the base turning the bottom
  layer while the cover holds the rest; slower than a free spin because the
  layer drags against the held part;
- ``hold_s`` / ``release_s`` 0.20: the cover closing on / leaving the cube;
- ``settle_s`` 0.05: the pause after each flip, spin or turn before the next op;
- ``half_spins`` true: the base may spin the free cube 180 degrees
  (-1 to +1) in one go; false allows quarter spins only. A held half
  turn (``turn±2``) is always allowed, priced by ``turn_half_s``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, fields

from .pose import Op

_US = 1_000_000
MOVE_BITS = 20  # search costs are time in microseconds above, robot moves below


@dataclass(frozen=True)
class FlipSpinTiming:
    """Seconds per op; ``settle_s`` is added after each robot move (flip, spin, turn)."""

    flip_s: float = 0.70
    spin_quarter_s: float = 0.30
    spin_half_s: float = 0.50
    turn_quarter_s: float = 0.40
    turn_half_s: float = 0.65
    hold_s: float = 0.20
    release_s: float = 0.20
    settle_s: float = 0.05
    half_spins: bool = True

    def seconds(self, op: Op) -> float:
        kind, q = op
        if kind == "flip":
            base = self.flip_s
        elif kind == "spin":
            base = self.spin_half_s if abs(q) == 2 else self.spin_quarter_s
        elif kind == "turn":
            base = self.turn_half_s if abs(q) == 2 else self.turn_quarter_s
        else:
            return self.hold_s if kind == "hold" else self.release_s
        return base + self.settle_s

    def cost(self, op: Op) -> int:
        """Search cost: time first (whole microseconds, so sums tie exactly), then fewer robot moves."""
        return (round(self.seconds(op) * _US) << MOVE_BITS) + op.is_robot_move

    def as_dict(self) -> dict:
        return asdict(self)


def cost_seconds(cost: int) -> float:
    return (cost >> MOVE_BITS) / _US


def cost_moves(cost: int) -> int:
    return cost & ((1 << MOVE_BITS) - 1)


def timing_from_config(table) -> FlipSpinTiming:
    """The timing keys of ``[rig]`` (kind = "flip-spin"), as ``robot.schema.rig.FlipSpinTable`` checked them."""
    return FlipSpinTiming(**{f.name: getattr(table, f.name) for f in fields(FlipSpinTiming)})


def servo_timing(
    spin: dict, cover: dict, travel_s: Callable[[str, float], float], settle_s: float, half_spins: bool = True
) -> FlipSpinTiming:
    """The op times of servos the host times itself (GPIO, PCA9685): ``spin`` and ``cover`` map each end-point
    (-1/0/1, open/hold/flip) to its pulse in µs; ``travel_s(servo, µs)`` is how long that servo takes for a
    travel, settling not included; ``settle_s`` follows every servo move, as the link waits it. A flip is
    two cover moves, so it carries one settle besides the one every robot move gets; a layer turn is
    the same servo move as a spin."""
    quarter = max(travel_s("spin", abs(spin[1] - spin[0])), travel_s("spin", abs(spin[0] - spin[-1])))
    half = travel_s("spin", abs(spin[1] - spin[-1]))
    tip = travel_s("cover", abs(cover["flip"] - cover["open"]))
    hold = travel_s("cover", abs(cover["hold"] - cover["open"])) + settle_s
    return FlipSpinTiming(
        flip_s=2 * tip + settle_s,
        spin_quarter_s=quarter,
        spin_half_s=half,
        turn_quarter_s=quarter,
        turn_half_s=half,
        hold_s=hold,
        release_s=hold,
        settle_s=settle_s,
        half_spins=half_spins,
    )
