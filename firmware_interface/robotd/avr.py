"""robotd's AVR firmware binary, run cycle-accurately under simavr as the host sees a real board.

``AvrFirmware(...).start()`` builds the firmware (``make -C firmware``) and
the harness (``make -C firmware/sim``) if needed, runs the real ``.elf`` in
the harness and returns the path of the pseudo-terminal its UART0 is
bridged to. The harness keeps simulated time at wall-clock pace and turns
the STEP/DIR/EN pins of each axis into turns of a virtual cube, so a test
checks what the motors did, not what the firmware said. Frame faults go
through a ``FaultyLine`` in front of it. It has the same methods as
``SimulatedFirmware`` where a board can do the same (no stalls or missing
switches: the firmware has no sensors).
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import threading
from pathlib import Path

from ..errors import ConfigError
from ..faults import FaultConfig
from ..faulty_line import FaultyLine
from ..virtual_cube import VirtualCube

FIRMWARE_DIR = Path(os.environ.get("ROBOTD_FIRMWARE_DIR", Path(__file__).resolve().parents[2] / "firmware"))
BOARDS = ("ramps", "header")
_TOOLS = {"avr-gcc": "gcc-avr avr-libc", "make": "make", "cc": "gcc"}
_PACKAGES = "gcc-avr avr-libc simavr libsimavr-dev libsimavrparts1 libelf-dev make gcc"


class FirmwareUnavailable(ConfigError):
    """The AVR toolchain, simavr or the firmware sources are missing on this machine."""


def missing_tools() -> str | None:
    """Why the simulated AVR board cannot run here, or None when it can."""
    if not (FIRMWARE_DIR / "Makefile").is_file():
        return (
            f"the firmware sources are not at {FIRMWARE_DIR} (run from a robotd checkout, or set ROBOTD_FIRMWARE_DIR)"
        )
    for tool, package in _TOOLS.items():
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: apt-get install {package}; all of it: {_PACKAGES})"
    if not Path("/usr/include/simavr/sim_avr.h").is_file():
        return f"libsimavr-dev is not installed (Debian: apt-get install {_PACKAGES})"
    return None


def build(board: str = "ramps") -> tuple[Path, Path]:
    """Build (incrementally) the firmware for ``board`` and the harness; returns (elf, harness)."""
    if board not in BOARDS:
        raise ConfigError(f"unknown board {board!r} (boards: {', '.join(BOARDS)})")
    why = missing_tools()
    if why:
        raise FirmwareUnavailable(f"cannot run the AVR firmware simulation: {why}")
    for args in (
        ["make", "-s", "-C", str(FIRMWARE_DIR), f"BOARD={board}"],
        ["make", "-s", "-C", str(FIRMWARE_DIR / "sim")],
    ):
        done = subprocess.run(args, capture_output=True, text=True)
        if done.returncode != 0:
            raise FirmwareUnavailable(f"`{' '.join(args)}` failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return FIRMWARE_DIR / "build" / f"robotd-{board}.elf", FIRMWARE_DIR / "build" / "avrsim"


def _steps_option(steps: int | dict) -> str:
    if isinstance(steps, dict):
        return ",".join(f"{face}={int(n)}" for face, n in steps.items())
    return str(int(steps))


class AvrFirmware:
    """The firmware binary on a simulated ATmega2560 with six stepper drivers and a virtual cube."""

    def __init__(
        self,
        *,
        board: str = "ramps",
        steps_per_quarter: int | dict = 200,
        reversed_motors: str = "",
        state: str | None = None,
        size: int = 3,
        faults: FaultConfig | dict | None = None,
        reset_on_open: bool = False,
        speed: float = 1.0,
        trace: str | os.PathLike | None = None,
        seed: int | None = None,
    ):
        self.board, self.steps_per_quarter, self.reversed_motors = board, steps_per_quarter, reversed_motors
        self.faults = FaultConfig.from_config(faults)
        if (
            self.faults.stall
            or self.faults.limit
            or self.faults.reset_after is not None
            or self.faults.silent_after is not None
            or self.faults.close_after is not None
        ):
            raise ConfigError(
                "the AVR board simulation takes frame faults only (drop, corrupt, duplicate, delay, "
                "noise); use reset(), go_silent() or close_port() for the others"
            )
        self._rng = random.Random(seed if seed is not None else self.faults.seed)
        self.reset_on_open, self.speed, self.trace = reset_on_open, speed, trace
        self._cube = VirtualCube(state, size)
        self._lock = threading.Lock()
        self._synced = threading.Condition(self._lock)
        self._quarters: dict[str, int] = {}
        self._enabled: set[str] = set()
        self._turns: list[tuple[str, int]] = []
        self._resets = 0
        self._sync: dict | None = None
        self._stats: str | None = None
        self._proc: subprocess.Popen | None = None
        self._line: FaultyLine | None = None
        self.device_path: str | None = None
        self.path: str | None = None

    # ------------------------------------------------------------ life cycle

    def start(self) -> str:
        elf, harness = build(self.board)
        args = [
            str(harness),
            "--board",
            self.board,
            "--steps",
            _steps_option(self.steps_per_quarter),
            "--speed",
            str(self.speed),
        ]
        if self.reversed_motors:
            args += ["--reversed", self.reversed_motors]
        if self.trace is not None:
            args += ["--trace", str(self.trace)]
        framed = self.faults.to_device.any() or self.faults.to_host.any()
        if self.reset_on_open and not framed:
            args.append("--reset-on-open")
        self._proc = subprocess.Popen(
            [*args, str(elf)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )
        first = (self._proc.stdout.readline() if self._proc.stdout else "").split()
        if first[:1] != ["PTY"]:
            self.stop()
            raise FirmwareUnavailable(f"the simavr harness did not start (said {' '.join(first)!r})")
        self.device_path = self.path = first[1]
        threading.Thread(target=self._read_events, name=f"avrsim {self.path}", daemon=True).start()
        if framed:
            on_open = self.reset if self.reset_on_open else None
            self._line = FaultyLine(self.device_path, self.faults, self._rng, on_open)
            self.path = self._line.start()
        return self.path

    def stop(self) -> None:
        if self._line is not None:
            self._line.stop()
        if self._proc is not None and self._proc.poll() is None:
            self._command("QUIT")
            try:
                self._proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self._proc.kill()

    def __enter__(self) -> AvrFirmware:
        if self._proc is None:
            self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _command(self, text: str) -> None:
        if self._proc is None or self._proc.stdin is None:  # not started, or stopped
            return
        try:
            self._proc.stdin.write(text + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass

    # ------------------------------------------------------------ what the harness reports

    def _read_events(self) -> None:
        if self._proc is None or self._proc.stdout is None:
            return
        for line in self._proc.stdout:
            kind, *fields = line.split()
            with self._lock:
                self._event(kind, fields)
                self._synced.notify_all()

    def _event(self, kind: str, fields: list[str]) -> None:
        if kind == "TURN":
            face, quarter = fields[1], int(fields[2])
            delta = quarter - self._quarters.get(face, 0)
            self._quarters[face] = quarter
            self._cube.turn(face, delta)
            self._turns.append((face, delta))
        elif kind == "EN":
            (self._enabled.add if fields[2] == "1" else self._enabled.discard)(fields[1])
        elif kind == "RESET":
            self._resets += 1
        elif kind == "SYNC":
            self._sync = {
                "cycle": int(fields[0]),
                "wall_s": float(fields[1]),
                **{k: int(v) for k, v in (f.split("=") for f in fields[2:])},
            }
        elif kind == "STATS":
            self._stats = " ".join(fields)

    def sync(self, timeout: float = 2.0) -> dict:
        """Every event up to now, read: the motors' step positions, enable mask and simulated cycle."""
        with self._lock:
            self._sync = None
        self._command("SYNC")
        with self._lock:
            if not self._synced.wait_for(lambda: self._sync is not None, timeout) or self._sync is None:
                raise ConfigError("the simavr harness did not answer SYNC")
            return dict(self._sync)

    @property
    def cube(self) -> str:
        """The virtual cube as the motors left it (whole quarter turns of each face)."""
        self.sync()
        with self._lock:
            return self._cube.facelets

    def set_state(self, facelets: str) -> None:
        """Load a cube state (e.g. a scramble); refused with ConfigError if impossible."""
        with self._lock:
            self._cube.set_state(facelets)

    def turns(self) -> list[tuple[str, int]]:
        """Every quarter turn a motor made, as (face, +1 or -1), in order."""
        self.sync()
        with self._lock:
            return list(self._turns)

    def enabled(self) -> set[str]:
        """Faces whose driver is energised (EN pin low) now."""
        self.sync()
        with self._lock:
            return set(self._enabled)

    # ------------------------------------------------------------ faults of the board itself

    def reset(self) -> None:
        """Reset the MCU now (as its reset pin, a brown-out or a watchdog would): RAM and session lost."""
        self._command("RESET")

    def go_silent(self) -> None:
        """Hang the MCU: nothing runs any more, nothing is answered."""
        self._command("HANG")

    def close_port(self) -> None:
        """Vanish like an unplugged USB cable."""
        if self._line is not None:
            self._line.stop()
        self._command("UNPLUG")

    def info(self) -> dict:
        positions = self.sync()
        with self._lock:
            counts = self._line.counts() if self._line is not None else {}
            return {
                "path": self.path,
                "board": self.board,
                "rig": "six-axis",
                "cube": self._cube.facelets,
                "turns": len(self._turns),
                "resets": self._resets,
                "enabled": sorted(self._enabled),
                "positions": {f: positions[f] for f in "URFDLB"},
                "cycle": positions["cycle"],
                "sim_wall_s": positions["wall_s"],
                **counts,
            }
