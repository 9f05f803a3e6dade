"""The board firmware builds for both pin maps with Debian's avr-gcc, and its host-compiled unit tests pass."""

import re
import subprocess

import pytest

import devices
from firmware_interface.robotd.avr import FIRMWARE_DIR


@pytest.fixture(scope="module", autouse=True)
def toolchain():
    devices.require_avr()


def make(*args: str) -> str:
    done = subprocess.run(["make", "-C", str(FIRMWARE_DIR), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout + done.stderr


@pytest.mark.parametrize("board", ["ramps", "header"])
def test_the_firmware_builds_without_warnings_and_fits(board):
    out = make("-B", f"BOARD={board}")  # every file compiled: warnings show
    assert "warning" not in out.lower()
    size = re.search(r"flash (\d+) bytes .*RAM (\d+) bytes", out)
    assert size, out
    flash, ram = map(int, size.groups())
    assert flash < 256 * 1024 - 8 * 1024 and ram < 6 * 1024  # room for the bootloader and the stack
    assert (FIRMWARE_DIR / "build" / f"robotd-{board}.hex").stat().st_size > 0


def test_the_unit_tests_pass():
    assert "all unit tests passed" in make("check")
