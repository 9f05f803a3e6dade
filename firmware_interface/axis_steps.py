"""Each face's steps per quarter turn on a stock G-code board, checked before any move.

robotd turns every face by the same number of axis units per quarter turn
(``units_per_quarter``); the board multiplies units by its own steps per
unit per axis (Marlin's ``M92``, grbl's ``$100``-``$105``). An axis whose
steps per unit differ turns its face by the wrong amount: 800 steps per
unit where 4.444 was meant makes a 90-unit quarter turn 72,000 steps, 90
quarter turns. So at connect the link reads the board's values and:

- with ``steps_per_quarter`` given (the rig's motors: full steps x
  microsteps x gearing / 4, one number or one per face), sets every axis
  that differs to ``steps_per_quarter / units_per_quarter`` and checks the
  board's answer (``wanted`` / ``refusal``);
- without it, refuses a board whose faces would not all turn by the same
  number of steps, or by more than ``MOST_STEPS`` a quarter turn.

Pure: no I/O. Both links (marlin/, grbl/) use it.
"""

from __future__ import annotations

from collections.abc import Callable

TOLERANCE = 0.005  # Marlin reports steps per unit with 2 decimals: 4.44 for 4.444444 is 0.1% off
# a 0.9-degree (400-step) motor at 1/32 microstepping: 3,200 steps a quarter turn, more than any cube rig needs
MOST_STEPS = 3200


def per_face(value: float | dict[str, float] | None, faces: list[str]) -> dict[str, float] | None:
    """``steps_per_quarter`` as one number per face (None stays None)."""
    if value is None:
        return None
    if isinstance(value, dict):
        return {face: float(value[face]) for face in faces}
    return {face: float(value) for face in faces}


def _off(have: float, want: float) -> bool:
    return abs(have - want) > TOLERANCE * want


def wanted(
    board: dict[str, float], axes: dict[str, str], units_per_quarter: float, steps: dict[str, float] | None
) -> dict[str, float]:
    """Axis -> the steps per unit robotd must set: the axes whose value differs from the rig's (none when the rig
    states no ``steps_per_quarter``, or the board did not report that axis)."""
    if steps is None:
        return {}
    want = {axis: steps[face] / units_per_quarter for face, axis in axes.items()}
    return {axis: value for axis, value in want.items() if axis in board and _off(board[axis], value)}


def refusal(
    board: dict[str, float],
    axes: dict[str, str],
    units_per_quarter: float,
    steps: dict[str, float] | None,
    how_to_set: Callable[[dict[str, float]], str],
    section: str,
) -> str | None:
    """Why the board's steps per unit may turn a face wrongly, with what to do; None when every face turns
    right. ``how_to_set(axis -> steps per unit)`` words the board's own command for it (``M92 A4.444``);
    ``section`` is the config table that takes ``steps_per_quarter``."""
    missing = [f"{axis} (face {face})" for face, axis in axes.items() if axis not in board]
    if missing:
        return f"the board did not report its steps per unit for axis {', '.join(missing)}"
    on_board = {face: board[axis] * units_per_quarter for face, axis in axes.items()}
    if steps is not None:
        return _stated(on_board, axes, units_per_quarter, steps, how_to_set)
    return _alike(on_board, axes, board, units_per_quarter, how_to_set, section)


def _stated(on_board, axes, units_per_quarter, steps, how_to_set) -> str | None:
    off = {face: n for face, n in on_board.items() if _off(n, steps[face])}
    if not off:
        return None
    said = ", ".join(f"face {face} {n:g} steps (wanted {steps[face]:g})" for face, n in off.items())
    fix = how_to_set({axes[face]: steps[face] / units_per_quarter for face in off})
    return f"the board kept steps per unit that turn a quarter turn wrongly: {said}; set them on the board: {fix}"


def _alike(on_board, axes, board, units_per_quarter, how_to_set, section) -> str | None:
    median = sorted(on_board.values())[len(on_board) // 2]
    odd = {face: n for face, n in on_board.items() if _off(n, median)}
    common = round(median)  # a whole number of steps: the board's report may be rounded (Marlin: 4.44)
    listing = ", ".join(f"{face} {n:.0f} ({axes[face]} {board[axes[face]]:g}/unit)" for face, n in on_board.items())
    state = (
        "state the rig's steps per quarter turn (full steps x microsteps x gearing / 4) as steps_per_quarter in "
        f"[{section}] and robotd sets the board to it"
    )
    if odd:
        fix = how_to_set({axes[face]: common / units_per_quarter for face in odd})
        return (
            f"the faces would not turn alike: a quarter turn ({units_per_quarter:g} units) is, in steps, {listing}; "
            f"{state}, or if {common} is right for every motor: {fix}"
        )
    if common > MOST_STEPS:
        return (
            f"a quarter turn ({units_per_quarter:g} units) would be {common} steps on every face, more than any "
            f"cube rig's motors take ({MOST_STEPS}); {state}"
        )
    return None


def quarter_steps(board: dict[str, float], axes: dict[str, str], units_per_quarter: float) -> dict[str, float]:
    """Face -> the steps of a quarter turn on the board (for the link's info and ``robotd check``)."""
    return {face: round(board[axis] * units_per_quarter, 1) for face, axis in axes.items() if axis in board}


def motor_steps(steps_per_quarter: float | dict[str, float], face_of: dict[str, str]) -> dict[str, float]:
    """A simulated board's motors: axis -> steps per quarter turn, from one number or one per face
    (``face_of``: axis -> face)."""
    if isinstance(steps_per_quarter, dict):
        return {axis: float(steps_per_quarter[face]) for axis, face in face_of.items()}
    return {axis: float(steps_per_quarter) for axis in face_of}
