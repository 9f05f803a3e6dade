"""The stock Marlin and grbl builds for a six-stepper RAMPS 1.4 rig, run on the simulated board.

The binaries are GPL and live outside the repository, in ``shared/stock-firmware/``
beside the checkout (its README.md lists the files, pins, units and how they
behave), or wherever ``ROBOTD_STOCK_FIRMWARE_DIR`` points.

    with stock_board("marlin", axes={"U": "X", "R": "Y", "F": "Z", "D": "A", "L": "B", "B": "C"}) as board:
        port = serial.Serial(board.path, 115200)   # Marlin's boot text, then G-code; board.cube turns

Every build runs on the harness's ``stock`` pin map (axes X Y Z A B C), 400
steps per quarter turn (90 units), and boots when the host first opens the
port, so the host hears its boot text.
"""

from __future__ import annotations

import os
from pathlib import Path

from .avr_board import AvrBoard, FirmwareUnavailable
from .errors import ConfigError

ENV = "ROBOTD_STOCK_FIRMWARE_DIR"
DEFAULT_DIR = Path(__file__).resolve().parents[2] / "shared" / "stock-firmware"  # beside the checkout, as in CI
FILES = {
    ("marlin", ""): "marlin-2.1-6axis.elf",
    ("marlin", "ep"): "marlin-2.1-6axis-ep.elf",  # EMERGENCY_PARSER on
    ("grbl", ""): "grbl-mega-5x-6axis.elf",
}
DIR_POSITIVE = {"marlin": "high", "grbl": "low"}  # the DIR level that steps an axis forward
STEPS_PER_QUARTER = 400
UNITS_PER_QUARTER = 90  # a quarter turn is a 90-unit move on every axis
# bytes each firmware acts on alone, as they arrive (grbl's real-time commands; every byte >= 0x80 is one too)
REALTIME = {"marlin": frozenset(), "grbl": frozenset(b"?!~\x18") | frozenset(range(0x80, 0x100))}
AXES = {"U": "X", "R": "Y", "F": "Z", "D": "A", "L": "B", "B": "C"}  # face → axis, the default wiring


class StockFirmwareMissing(FirmwareUnavailable):
    """A stock firmware binary is not where it is looked for."""


def stock_dir() -> Path:
    """Where the stock binaries are looked for: $ROBOTD_STOCK_FIRMWARE_DIR, else ../shared/stock-firmware."""
    return Path(os.environ.get(ENV) or DEFAULT_DIR)


def stock_elf(firmware: str, variant: str = "") -> Path:
    """The binary of ``firmware`` (marlin, grbl) and ``variant`` ("", or "ep" for Marlin's EMERGENCY_PARSER)."""
    name = FILES.get((firmware, variant))
    if name is None:
        known = ", ".join(f"{f}/{v}" if v else f for f, v in FILES)
        raise ConfigError(f"no stock firmware {firmware!r} variant {variant!r} (known: {known})")
    path = stock_dir() / name
    if not path.is_file():
        why = f"${ENV} is {os.environ[ENV]!r}" if os.environ.get(ENV) else f"the default place; ${ENV} is not set"
        raise StockFirmwareMissing(
            f"the stock {firmware} build {name} is not at {path} ({why}): put the stock-firmware directory "
            f"(README.md and its .elf files) there, or set {ENV} to the directory that holds it"
        )
    return path


def missing_stock(firmware: str, variant: str = "") -> str | None:
    """Why the stock binary cannot be found, or None when it can."""
    try:
        stock_elf(firmware, variant)
    except StockFirmwareMissing as err:
        return str(err)
    return None


def stock_board(firmware: str, variant: str = "", *, axes: dict[str, str] | None = None, **options) -> AvrBoard:
    """A stock build on the simulated board, not started. ``axes``: face → axis letter (default ``AXES``);
    ``options``: the rest of ``AvrBoard``'s (state, faults, speed, trace, reset_on_open, steps_per_quarter...)."""
    options.setdefault("steps_per_quarter", STEPS_PER_QUARTER)
    options.setdefault("boot_on_open", True)
    options.setdefault("realtime", REALTIME.get(firmware, frozenset()))
    return AvrBoard(
        stock_elf(firmware, variant),
        pins="stock",
        axes=axes or AXES,
        dir_positive=DIR_POSITIVE[firmware],
        **options,
    )
