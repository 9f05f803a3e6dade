"""The simulated rig: a virtual cube in the simulated firmware, seen by rendered cameras.

Under ``robotd --rig-only`` the cube is not in a simulated firmware but
follows the real controller (``robot.rig_only``); the rest is the same.

Before each dry run ``prepare`` loads a scrambled cube into the firmware on
the pseudo-terminal; the run then scans it through ``vision.render`` images,
solves it and turns it through the real serial link, exactly as on a rig.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

import solver
from solver.puzzles.cube.geometry import FACES
from vision import PRESETS, ViewConfig, default_views, render_views

from .config import Section
from .errors import RobotError
from .rig_plan import Rig
from .run import is_solved
from .six_axis import SixAxisRig


@dataclass(frozen=True)
class SimSettings:
    """``[sim]``: the virtual cube, camera and lighting of dry runs, and the faults to inject."""

    puzzle: int
    light: str
    cameras: str
    scramble_moves: int | None
    blur: float
    jpeg: int | None
    motors: dict
    faults: dict
    reset_on_open: bool
    firmware: str  # python: the reference firmware; avr: the firmware binary under simavr
    board: str  # avr: the pin map it is built for
    emergency_parser: bool = False  # avr, marlin: the stock build with EMERGENCY_PARSER


def dry_run_rig(section: Section, rig: Rig) -> Rig:
    """The six-axis rig a dry run plans, estimates and sets its motors' speed with: the times ``[sim.motors]``
    gives (``quarter_ms``, ``half_ms``, ``settle_ms``) instead of ``[rig]``'s, so that the simulated motors
    really take them (the host's SPEED, a G-code feed rate, the run's time-out all follow). A half turn not
    given keeps ``[rig]``'s ratio to the quarter turn."""
    motors = section.model.motors
    if motors is None or not isinstance(rig, SixAxisRig):
        return rig
    given = motors.given()
    quarter_s = given.get("quarter_ms", rig.quarter_turn_s * 1000) / 1000
    half_s = given["half_ms"] / 1000 if "half_ms" in given else rig.half_turn_s * quarter_s / rig.quarter_turn_s
    settle_s = given.get("settle_ms", rig.settle_s * 1000) / 1000
    return replace(rig, quarter_turn_s=quarter_s, half_turn_s=half_s, settle_s=settle_s)


def sim_settings(section: Section, rig: Rig, controller: str = "robotd") -> SimSettings:
    """``[sim]`` (``robot.schema.sim.SimTable``) and what it must agree with: the rig and the controller.

    The simulated motors take the rig's times (in a dry run ``dry_run_rig``'s: ``[sim.motors]``)."""
    table = section.model
    motors = {}
    if isinstance(rig, SixAxisRig):
        motors = {
            "quarter_ms": rig.quarter_turn_s * 1000,
            "half_ms": rig.half_turn_s * 1000,
            "settle_ms": rig.settle_s * 1000,
            **(table.motors.given() if table.motors is not None else {}),
        }
    elif table.motors is not None:
        section.report(
            "motors",
            f"a flip/spin rig's simulated servos move as [controller.{controller}] servo_us_per_ms says: "
            "leave this out",
        )
    if rig.kind == "flip-spin" and section.given("cameras"):
        section.report("cameras", "a flip/spin rig has one camera above the cube: leave this out")
    if table.firmware != "python" and controller not in AVR_CONTROLLERS:
        section.report(
            "firmware", f"picks robotd's own firmware; a {controller} controller is simulated as that firmware speaks"
        )
    if table.emergency_parser and (table.firmware != "avr" or controller != "marlin"):
        section.report("emergency_parser", 'picks the stock Marlin build: with kind = "marlin" and firmware = "avr"')
    _check_faults(section, table, controller)
    return SimSettings(
        puzzle=table.puzzle,
        light=table.light,
        cameras="top" if rig.kind == "flip-spin" else table.cameras,
        scramble_moves=table.scramble_moves or None,
        blur=table.blur,
        jpeg=table.jpeg or None,
        motors=motors,
        faults=table.faults.given(),
        reset_on_open=table.reset_on_open,
        firmware=table.firmware,
        board=table.board,
        emergency_parser=table.emergency_parser,
    )


AVR_CONTROLLERS = ("robotd", "marlin", "grblhal")  # firmware = "avr": robotd's binary, or the stock Marlin / grbl build
PWM_CONTROLLERS = ("gpio", "pca9685")  # the host pulses the servos itself: nothing between to fail
DEVICE_FAULTS = ("stall", "limit", "reset_after", "silent_after", "close_after")


def _check_faults(section: Section, table, controller: str) -> None:
    """Faults the simulated controller cannot inject, each named with its key."""
    faults = section.config.section(f"{section.name}.faults")
    given = [key for key in DEVICE_FAULTS if getattr(table.faults, key) not in (None, [])]
    if table.firmware == "avr":
        for key in given:
            faults.report(
                key, "the AVR board simulation takes frame faults only (drop, corrupt, duplicate, delay, noise)"
            )
    elif controller in PWM_CONTROLLERS:
        for key in table.faults.given():
            faults.report(key, f"a {controller} controller has no line or device to inject faults in")
    elif controller == "maestro":
        for key in (k for k in given if k in ("stall", "limit")):
            faults.report(key, "a Maestro has no stall or limit switches")
    elif controller == "robotd":
        for key in ("stall", "limit"):
            unknown = [motor for motor in getattr(table.faults, key) if motor not in FACES]
            if unknown:
                faults.report(key, f"{unknown[0]!r} is no motor of the simulated six-axis rig ({', '.join(FACES)})")


class VirtualBoard(Protocol):
    """Where the virtual cube lives: a simulated controller (``SimulatedFirmware``, ``SimulatedMarlin``, ...), or
    under ``robotd --rig-only`` the cube that follows the real one (``robot.rig_only``)."""

    @property
    def path(self) -> str | None: ...

    @property
    def cube(self) -> str: ...

    def set_state(self, state: str) -> None: ...


class Simulation:
    """Owns the virtual cube (in the simulated firmware) and renders what the rig's cameras would see."""

    def __init__(self, settings: SimSettings, firmware: VirtualBoard):
        self.settings, self.firmware = settings, firmware
        self.light = settings.light
        self.seed: int | None = None
        self._frame = 0
        self._lock = threading.Lock()
        self._preview: dict[str, np.ndarray] = {}
        self._preview_key: tuple | None = None
        firmware.set_state(solver.scramble(settings.puzzle, seed=0, length=0)["state"])

    def prepare(
        self,
        puzzle: int | None = None,
        seed: int | None = None,
        scramble: str | None = None,
        light: str | None = None,
        moves: int | None = None,
    ) -> dict:
        """Load a scrambled cube: ``scramble`` moves, else a seeded random scramble."""
        size = puzzle or self.settings.puzzle
        self.check_light(light)
        seed = seed if seed is not None else secrets.randbelow(2**31)
        solved = solver.scramble(size, seed=0, length=0)["state"]
        if scramble is not None:
            text, state = scramble, solver.apply(solved, scramble)
        else:
            length = moves if moves is not None else self.settings.scramble_moves
            drawn = solver.scramble(size, seed=seed, length=length)
            text, state = drawn["scramble"], drawn["state"]
        with self._lock:
            self.firmware.set_state(state)
            self.light, self.seed, self._frame = light or self.settings.light, seed, 0
        return {"puzzle": size, "seed": seed, "scramble": text, "light": self.light}

    @staticmethod
    def check_light(light: str | None) -> None:
        if light is not None and light not in PRESETS:
            raise RobotError(f"unknown lighting preset {light!r} (presets: {', '.join(PRESETS)})")

    @property
    def size(self) -> int:
        return 3 if len(self.firmware.cube) == 54 else 2

    def views(self) -> ViewConfig:
        return default_views(self.settings.cameras, self.size)

    def frames(self) -> dict[str, np.ndarray]:
        """One image per camera of the virtual cube as it is now; reproducible for a run's seed."""
        with self._lock:
            self._frame += 1
            rng = np.random.default_rng([self.seed or 0, self._frame])
            light = self.light
        return render_views(
            self.firmware.cube, self.settings.cameras, light, rng, blur=self.settings.blur, jpeg=self.settings.jpeg
        )

    def preview(self, name: str) -> np.ndarray:
        """The dashboard's live view of one camera: re-rendered only when the cube or the light changed."""
        key = (self.firmware.cube, self.light)
        with self._lock:
            cached = self._preview if self._preview_key == key else None
        if cached is None:
            rng = np.random.default_rng(0)
            cached = render_views(
                key[0], self.settings.cameras, key[1], rng, blur=self.settings.blur, jpeg=self.settings.jpeg
            )
            with self._lock:
                self._preview, self._preview_key = cached, key
        return cached[name]

    def solved(self) -> bool:
        return is_solved(self.firmware.cube)

    def status(self) -> dict:
        return {
            "cube": self.firmware.cube,
            "puzzle": self.size,
            "light": self.light,
            "seed": self.seed,
            "cameras": self.settings.cameras,
            "device": self.firmware.path,
            "read_back": self.read_back(),
        }

    def read_back(self) -> dict | None:
        """Under ``robotd --rig-only``: how the cube follows the real controller, and what differed."""
        read_back = getattr(self.firmware, "read_back", None)
        return read_back() if read_back is not None else None
