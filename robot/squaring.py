"""Faces an emergency stop left between two quarter turns: found before the rig moves again, and squared.

A stop in the middle of a turn leaves that face part-way. A G-code board
(Marlin, grbl) reads back where its motors stopped, and its link says how
far each face stands from its nearest quarter turn (``off_square``, a
signed fraction of a quarter turn) and turns them back (``square``).
``LinkMotion`` does so before anything moves again (a run, before it
scans; a jog; a rig action), since whole quarter turns from part-way
would jam the faces beside it, and on the dashboard's Square faces. A
controller that reports no positions (robotd's own firmware, the servo
rigs) cannot tell: its faces are squared by hand.
"""

from __future__ import annotations

NO_POSITIONS = (
    "this controller does not report where a stop left its motors: switch the motors off, square the faces by "
    "hand and switch them on again"
)


def off_square_degrees(link, motor_faces: dict[str, str]) -> dict[str, float]:
    """Face -> degrees (signed) to turn it back to square, for each face the link knows to be off square; {} for a
    link that reports no positions."""
    off_square = getattr(link, "off_square", None)
    if off_square is None:
        return {}
    return {motor_faces.get(motor, motor): fraction * 90.0 for motor, fraction in off_square().items()}


def _faces(off: dict[str, float]) -> str:
    return ", ".join(f"{face} {abs(degrees):.0f} degrees" for face, degrees in off.items())


def squared(off: dict[str, float]) -> str:
    """What Square faces did."""
    if not off:
        return "every face was square: nothing to turn"
    return f"turned to the nearest quarter turn: {_faces(off)}"
