"""The devices the link tests run against, chosen with ``pytest --firmware``.

``sim`` is the Python reference firmware on a pty, ``avr`` the firmware
binary on a simulated ATmega2560 (simavr), anything else the serial port of
a real board. One suite runs unchanged against each, as pyserial's runs
against ``loop://`` or a real port. ``make(...)`` starts a device; options a
device cannot honour (frame faults on a real board) skip the test.
"""

from __future__ import annotations

import os
import time

import pytest

from firmware_interface import SimulatedFirmware
from firmware_interface.robotd.avr import AvrFirmware, missing_tools

SIM_TIMING = {"quarter_ms": 2, "half_ms": 3, "home_ms": 5}
AVR_STEPS = 50  # steps per quarter turn of the simulated rig's motors
AVR_MOTOR = {"steps": AVR_STEPS, "rate": 20000, "accel": 1_000_000}  # a 14 ms quarter turn


_STARTED: dict[str, object] = {}  # device path → device, for prepare()


class RealBoard:
    """A board on a serial port: no virtual cube, no fault injection."""

    kind = "port"

    def __init__(self, path: str):
        self.path = path

    def stop(self) -> None:
        pass


def require_avr(missing=missing_tools) -> None:
    """Skip, naming the missing package, where the AVR toolchain or simavr is not installed; fail instead
    when ROBOTD_REQUIRE_AVR is set (CI installs them and must run these tests). ``missing``: what is
    needed (default: robotd's firmware and the harness; ``avr_board.missing_tools``: the harness only)."""
    why = missing()
    if why:
        if os.environ.get("ROBOTD_REQUIRE_AVR"):
            pytest.fail(f"ROBOTD_REQUIRE_AVR is set but {why}")
        pytest.skip(f"firmware binary under simavr not available: {why}")


def choices(config) -> list[str]:
    return [name.strip() for name in config.getoption("--firmware").split(",") if name.strip()]


def start(kind: str, *, faults: dict | None = None, state: str | None = None, reset_on_open: bool = False):
    """A started device of ``kind``; skips the test where that device cannot exist or do what is asked."""
    if kind == "sim":
        device = SimulatedFirmware(timing=SIM_TIMING, faults=faults, state=state, reset_on_open=reset_on_open)
    elif kind == "avr":
        require_avr()
        device = AvrFirmware(steps_per_quarter=AVR_STEPS, faults=faults, state=state, reset_on_open=reset_on_open)
    else:
        if faults or state:
            pytest.skip("a real board takes no fault injection or cube state")
        return RealBoard(kind)
    device.kind = kind
    _STARTED[device.start()] = device
    return device


def stop(device) -> None:
    _STARTED.pop(device.path, None)
    device.stop()


def prepare(link) -> None:
    """Make a connected link ready for fast turns: a simulated AVR rig's motors are set up as it is built."""
    device = _STARTED.get(link.port)
    if getattr(device, "kind", None) == "avr" and link.info["protocol"] >= 2:
        link.wait([link.setup_motor(face, direction=1, **AVR_MOTOR) for face in "URFDLB"], timeout=5)


def quarter_turns(device) -> int:
    """How many quarter turns the motors have made so far (a half turn is two)."""
    if device.kind == "avr":
        return len(device.turns())
    return sum(abs(q) for step in device.executed() if step.verb in ("TURN", "PAIR") for _, q in step.turns)


def needs_cube(device) -> None:
    if device.kind == "port":
        pytest.skip("needs a virtual cube: a real board has none")


def enabled(device, link) -> set[str]:
    """Energised drivers: from the pins on the simulated AVR, else as the firmware reports them."""
    if device.kind == "avr":
        return device.enabled()
    return set(link.query()["enabled"])


def read_line(raw, wait: float = 1.0) -> bytes:
    """One whole line from a raw serial port, or b"" when none begins within the port's timeout.

    A read that times out in the middle of a line is continued (for up to
    ``wait`` seconds), so a loaded machine never shows a line in two pieces.
    """
    line = raw.read_until(b"\n")
    deadline = time.monotonic() + wait
    while line and not line.endswith(b"\n") and time.monotonic() < deadline:
        line += raw.read_until(b"\n")
    return line
