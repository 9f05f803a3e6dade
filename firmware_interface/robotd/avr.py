"""robotd's AVR firmware binary, run cycle-accurately under simavr as the host sees a real board.

``AvrFirmware(...).start()`` builds the firmware (``make -C firmware``) and
the harness if needed and runs the real ``.elf`` on one of its boards'
pin maps (``ramps``, ``header``): an ``AvrBoard`` (``firmware_interface/avr_board.py``),
which turns the motors' STEP/DIR/EN pins into turns of a virtual cube and
puts frame faults on the line. It has the same methods as
``SimulatedFirmware`` where a board can do the same (no stalls or missing
switches: the firmware has no sensors).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ..avr_board import FIRMWARE_DIR, PACKAGES, AvrBoard, FirmwareUnavailable, build_harness, run_make
from ..avr_board import missing_tools as harness_missing
from ..errors import ConfigError
from ..virtual_cube import CORNER_CUTTING_DEG

__all__ = ["BOARDS", "FIRMWARE_DIR", "AvrFirmware", "FirmwareUnavailable", "build", "missing_tools"]

BOARDS = ("ramps", "header")


def missing_tools() -> str | None:
    """Why the simulated AVR board cannot run here, or None when it can."""
    if not (FIRMWARE_DIR / "Makefile").is_file():
        return (
            f"the firmware sources are not at {FIRMWARE_DIR} (run from a robotd checkout, or set ROBOTD_FIRMWARE_DIR)"
        )
    if shutil.which("avr-gcc") is None:
        return f"avr-gcc is not installed (Debian: apt-get install gcc-avr avr-libc; all of it: {PACKAGES})"
    return harness_missing()


def build(board: str = "ramps") -> tuple[Path, Path]:
    """Build (incrementally) the firmware for ``board`` and the harness; returns (elf, harness)."""
    if board not in BOARDS:
        raise ConfigError(f"unknown board {board!r} (boards: {', '.join(BOARDS)})")
    why = missing_tools()
    if why:
        raise FirmwareUnavailable(f"cannot run the AVR firmware simulation: {why}")
    run_make(["make", "-s", "-C", str(FIRMWARE_DIR), f"BOARD={board}"])
    return FIRMWARE_DIR / "build" / f"robotd-{board}.elf", build_harness()


class AvrFirmware(AvrBoard):
    """The firmware binary on a simulated ATmega2560 with six stepper drivers and a virtual cube.

    ``board``: the pin map it is built for (``BOARDS``); ``options``: ``AvrBoard``'s (steps_per_quarter,
    reversed_motors, state, size, faults, reset_on_open, speed, trace, seed, jam_deg: by default the
    cube jams as an ordinary one would, ``CORNER_CUTTING_DEG``).
    """

    def __init__(self, *, board: str = "ramps", **options):
        if board not in BOARDS:
            raise ConfigError(f"unknown board {board!r} (boards: {', '.join(BOARDS)})")
        options.setdefault("jam_deg", CORNER_CUTTING_DEG)  # an ordinary cube, as the Python simulator's
        super().__init__(None, pins=board, **options)

    def binaries(self) -> tuple[Path, Path]:
        return build(self.board)
