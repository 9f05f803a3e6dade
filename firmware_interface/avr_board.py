"""A board's firmware binary run cycle-accurately under simavr, as the host sees a real board.

``AvrBoard(elf, pins=...).start()`` builds the harness (``make -C
firmware/sim``, docs/firmware.md) if needed, runs the ``.elf`` on a
simulated ATmega2560 and returns the path of the pseudo-terminal its UART0
is bridged to. The harness keeps simulated time at wall-clock pace and turns
the STEP/DIR/EN pins of each axis of the pin map into turns of a virtual
cube, so a test checks what the motors did, not what the firmware said.
Frame faults go through a ``FaultyLine`` in front of it.

Any binary, any of the harness's pin maps: robotd's own firmware
(``robotd.avr.AvrFirmware``) and the stock Marlin and grbl builds
(``stock_firmware.stock_board``). ``axes`` says which axis of the pin map
turns which face; everything this class reports is by face.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Self

from .errors import ConfigError
from .faults import FaultConfig
from .faulty_line import FaultyLine
from .virtual_cube import VirtualCube

FIRMWARE_DIR = Path(os.environ.get("ROBOTD_FIRMWARE_DIR", Path(__file__).resolve().parents[1] / "firmware"))
PIN_MAPS = {"ramps": "URFDLB", "header": "URFDLB", "stock": "XYZABC"}  # the harness's --board: its axes
FACES = "URFDLB"
_TOOLS = {"make": "make", "cc": "gcc"}
PACKAGES = "gcc-avr avr-libc simavr libsimavr-dev libsimavrparts1 libelf-dev make gcc"


class FirmwareUnavailable(ConfigError):
    """The AVR toolchain, simavr, the harness's sources or a firmware binary are missing on this machine."""


def missing_tools() -> str | None:
    """Why the simavr harness cannot be built here, or None when it can."""
    if not (FIRMWARE_DIR / "sim" / "Makefile").is_file():
        return (
            f"the simavr harness's sources are not at {FIRMWARE_DIR / 'sim'} "
            "(run from a robotd checkout, or set ROBOTD_FIRMWARE_DIR)"
        )
    for tool, package in _TOOLS.items():
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: apt-get install {package}; all of it: {PACKAGES})"
    if not Path("/usr/include/simavr/sim_avr.h").is_file():
        return f"libsimavr-dev is not installed (Debian: apt-get install {PACKAGES})"
    return None


def run_make(args: list[str]) -> None:
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise FirmwareUnavailable(f"`{' '.join(args)}` failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


def build_harness() -> Path:
    """Build (incrementally) the simavr harness; returns its path."""
    why = missing_tools()
    if why:
        raise FirmwareUnavailable(f"cannot run the AVR firmware simulation: {why}")
    run_make(["make", "-s", "-C", str(FIRMWARE_DIR / "sim")])
    return FIRMWARE_DIR / "build" / "avrsim"


class AvrBoard:
    """A firmware binary on a simulated ATmega2560 with six stepper drivers and a virtual cube.

    ``pins`` is the harness's pin map (``PIN_MAPS``); ``axes`` maps each face
    to the axis of that map that turns it (default: the same letter, for
    robotd's maps). ``steps_per_quarter`` (a number, or one per face) and
    ``reversed_motors`` (faces whose motor is mounted the other way round)
    are by face. ``dir_positive`` is the DIR level of the positive direction:
    ``"high"`` (robotd, Marlin) or ``"low"`` (grbl). ``boot_on_open`` holds
    the MCU in reset until a host first opens the port, so the host hears
    the boot text; with frame faults the line in front opens it at start.
    ``jam_deg``: the cube's corner-cutting tolerance; a face that starts
    turning while an adjacent one is further than that from aligned jams
    the cube, which then turns no more (``jams()``); None: it never jams.
    """

    def __init__(
        self,
        elf: str | os.PathLike | None,
        *,
        pins: str = "ramps",
        axes: dict[str, str] | None = None,
        steps_per_quarter: int | dict = 200,
        reversed_motors: str = "",
        dir_positive: str = "high",
        boot_on_open: bool = False,
        state: str | None = None,
        size: int = 3,
        faults: FaultConfig | dict | None = None,
        reset_on_open: bool = False,
        speed: float = 1.0,
        trace: str | os.PathLike | None = None,
        seed: int | None = None,
        realtime: frozenset[int] = frozenset(),
        jam_deg: float | None = None,
    ):
        if pins not in PIN_MAPS:
            raise ConfigError(f"unknown pin map {pins!r} (pin maps: {', '.join(PIN_MAPS)})")
        if dir_positive not in ("high", "low"):
            raise ConfigError(f"dir_positive must be 'high' or 'low', not {dir_positive!r}")
        self.elf, self.board, self.dir_positive, self.boot_on_open = elf, pins, dir_positive, boot_on_open
        self.axes = _face_axes(pins, axes)
        self._face = {axis: face for face, axis in self.axes.items()}
        self.steps_per_quarter, self.reversed_motors = steps_per_quarter, reversed_motors
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
        self.reset_on_open, self.speed, self.trace, self.jam_deg = reset_on_open, speed, trace, jam_deg
        self._jams: list[tuple[str, str, float]] = []
        self.realtime = realtime  # bytes the firmware acts on alone, not in a line (FaultyLine passes them at once)
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

    def binaries(self) -> tuple[Path, Path]:
        """The firmware binary and the harness, built where needed: (elf, harness)."""
        if self.elf is None or not Path(self.elf).is_file():
            raise FirmwareUnavailable(f"no firmware binary at {self.elf}")
        return Path(self.elf), build_harness()

    def _harness_args(self) -> list[str]:
        """The harness's options for this board (without the binary)."""
        args = ["--board", self.board, "--steps", self._steps_option(), "--speed", str(self.speed)]
        if self.dir_positive != "high":
            args += ["--dir-positive", self.dir_positive]
        if self.reversed_motors:
            args += ["--reversed", "".join(self.axes.get(face, face) for face in self.reversed_motors)]
        if self.trace is not None:
            args += ["--trace", str(self.trace)]
        if self.boot_on_open:
            args.append("--boot-on-open")
        if self.jam_deg is not None:
            args += ["--jam-deg", str(self.jam_deg)]
        return args

    def _steps_option(self) -> str:
        if isinstance(self.steps_per_quarter, dict):
            return ",".join(f"{self.axes.get(face, face)}={int(n)}" for face, n in self.steps_per_quarter.items())
        return str(int(self.steps_per_quarter))

    def start(self) -> str:
        elf, harness = self.binaries()
        args = [str(harness), *self._harness_args()]
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
            self._line = FaultyLine(self.device_path, self.faults, self._rng, on_open, self.realtime)
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

    def __enter__(self) -> Self:
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
            face, quarter = self._face[fields[1]], int(fields[2])
            delta = quarter - self._quarters.get(face, 0)
            self._quarters[face] = quarter
            self._cube.turn(face, delta)
            self._turns.append((face, delta))
        elif kind == "JAM":
            self._jams.append((self._face[fields[1]], self._face[fields[2]], float(fields[3])))
        elif kind == "EN":
            (self._enabled.add if fields[2] == "1" else self._enabled.discard)(self._face[fields[1]])
        elif kind == "RESET":
            self._resets += 1
        elif kind == "SYNC":
            values = dict(f.split("=") for f in fields[2:])
            self._sync = {
                "cycle": int(fields[0]),
                "wall_s": float(fields[1]),
                **{self._face.get(k, k): int(v) for k, v in values.items()},
            }
        elif kind == "STATS":
            self._stats = " ".join(fields)

    def sync(self, timeout: float = 2.0) -> dict:
        """Every event up to now, read: each face's motor position in steps, the enable mask (bit i: axis i of
        the pin map) and the simulated cycle."""
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

    def jams(self) -> list[tuple[str, str, float]]:
        """Each jam of the cube: (the face that started turning, the adjacent face in its way, how many
        degrees that one was off aligned)."""
        self.sync()
        with self._lock:
            return list(self._jams)

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
                "jams": len(self._jams),
                "resets": self._resets,
                "enabled": sorted(self._enabled),
                "positions": {f: positions[f] for f in FACES},
                "cycle": positions["cycle"],
                "sim_wall_s": positions["wall_s"],
                **counts,
            }


def _face_axes(pins: str, axes: dict[str, str] | None) -> dict[str, str]:
    """Check a face → axis mapping against a pin map: every face on its own axis of that map."""
    names = PIN_MAPS[pins]
    if axes is None:
        if set(names) != set(FACES):
            raise ConfigError(f"the {pins} pin map's axes are {' '.join(names)}: say which turns which face (axes=)")
        return {face: face for face in FACES}
    if sorted(axes) != sorted(FACES) or sorted(axes.values()) != sorted(names):
        raise ConfigError(
            f"axes must give each face {' '.join(FACES)} its own axis of the {pins} pin map "
            f"({' '.join(names)}), not {axes}"
        )
    return dict(axes)
