"""The daemon object: one owner of the rig, its cameras, its runs and its history.

``Daemon`` holds the parts built from config (``robot.assemble``) and is
what the CLI and the dashboard talk to: ``status()`` as a plain dict,
``start_run()``, ``stop()``, ``jog()`` and the rig actions between runs
(``home()``, ``set_motors()``, ``reconnect()``), the calibration and the
last scans.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from .board import board_identity
from .camera import Camera
from .errors import RobotError
from .events import EventBus
from .history import History
from .rig_plan import Rig
from .run import Runner
from .scan_archive import ScanMemory, ScanRecord


class Simulation(Protocol):
    """The simulated side of a dry run: it loads a scrambled virtual cube before each run."""

    def prepare(
        self, puzzle: int | None, seed: int | None, scramble: str | None, light: str | None, moves: int | None
    ) -> dict: ...

    def status(self) -> dict: ...


class Daemon:
    def __init__(
        self,
        *,
        runner: Runner,
        history: History,
        bus: EventBus,
        rig: Rig,
        cameras: dict[str, Camera],
        link_status: Callable[[], dict],
        simulation: Simulation | None = None,
        calibration: Callable[[], dict] | None = None,
        set_calibration: Callable[[dict], dict] | None = None,
        check_calibration: Callable[[dict], dict] | None = None,
        check_solved: Callable[[], dict] | None = None,
        save_top_face: Callable[[list], dict] | None = None,
        closers: tuple[Callable[[], None], ...] = (),
        scans: ScanMemory | None = None,
        mode: str | None = None,
    ):
        self.runner, self.history, self.bus, self.rig = runner, history, bus, rig
        self._mode = mode
        self.cameras, self.link_status, self.simulation = cameras, link_status, simulation
        self._calibration, self._set_calibration = calibration, set_calibration
        self._check_calibration, self._check_solved = check_calibration, check_solved
        self._save_top_face = save_top_face
        self._closers = closers
        self.scans = scans

    @property
    def mode(self) -> str:
        """``sim``, ``rig``, or ``rig-only`` (the real controller turns a virtual cube: ``robotd --rig-only``)."""
        return self._mode or ("sim" if self.simulation is not None else "rig")

    def status(self) -> dict:
        cameras = [camera.status() for camera in self.cameras.values()]
        link = self.link_status()
        return {
            **self.runner.status(),
            "mode": self.mode,
            "rig": self.rig.status(),
            "link": link,
            "board": board_identity(link.get("handshake")),
            "cameras": cameras,
            "camera_ok": all(c.get("error") is None for c in cameras),
            "simulation": self.simulation.status() if self.simulation else None,
            "jog": self.runner.jog_commands(),
            "rig_actions": self.runner.rig_actions(),
            "motors_on": self.runner.motors_on,
        }

    def start_run(
        self,
        puzzle: int | None = None,
        seed: int | None = None,
        scramble: str | None = None,
        light: str | None = None,
        moves: int | None = None,
    ) -> int:
        """Start a run; with a virtual cube (``--sim``, ``--rig-only``) it is scrambled first (random, or by
        ``seed``/``scramble``)."""
        if self.simulation is None:
            given = [
                name
                for name, value in (
                    ("puzzle", puzzle),
                    ("seed", seed),
                    ("scramble", scramble),
                    ("light", light),
                    ("moves", moves),
                )
                if value is not None
            ]
            if given:
                raise RobotError(
                    f"{', '.join(given)} only apply in simulation (robotd --sim); "
                    "a real rig scans whatever cube it holds"
                )
            return self.runner.start(mode=self.mode)
        if scramble is not None and moves is not None:
            raise RobotError("give either a scramble or a number of random moves, not both")
        simulation = self.simulation  # not None here (see above); bound for the lambda
        return self.runner.start(lambda: simulation.prepare(puzzle, seed, scramble, light, moves), mode=self.mode)

    def stop(self, reason: str = "stop requested") -> None:
        self.runner.stop(reason)

    def jog(self, command: str) -> dict:
        """One move between runs (a face turn, or a flip/spin op): ``status()["jog"]`` lists them."""
        return self.runner.jog(command)

    def home(self) -> dict:
        """Home the motors (servos) between runs; a controller without home switches refuses, saying so."""
        return self._rig_action("home", "home", "home")

    def set_motors(self, enabled: bool) -> dict:
        """Switch the motors (servos) on, or off so that the rig can be moved by hand."""
        return self._rig_action("motors", "motors on" if enabled else "motors off", "set_motors", enabled)

    def reconnect(self) -> dict:
        """A new session on the serial link (the port reopened if it was lost), then motors on."""
        return self._rig_action("reconnect", "reconnect", "reconnect")

    def square(self) -> dict:
        """Turn each face a stop left between two quarter turns to the nearest one (a G-code board)."""
        return self._rig_action("square", "square faces", "square_faces")

    def _rig_action(self, name: str, action: str, method: str, *args) -> dict:
        motion = self.runner.motion
        if name not in self.runner.rig_actions():
            why = getattr(motion, "cannot", {}).get(name, "this rig's motion cannot do that")
            raise RobotError(f"{action}: {why}")
        call = getattr(motion, method)
        return self.runner.rig_action(action, lambda: call(*args))

    def calibration(self) -> dict:
        return _offered(self._calibration, "this rig has no calibration to show")()

    def set_calibration(self, body: dict) -> dict:
        """Validate, save (with a backup) and apply new views and/or a colour calibration."""
        return _offered(self._set_calibration, "this rig's calibration cannot be changed")(body)

    def check_calibration(self, body: dict) -> dict:
        """What ``set_calibration`` would do with ``body``: its problems per field, or the page after it."""
        return _offered(self._check_calibration, "this rig's calibration cannot be changed")(body)

    def check_solved(self) -> dict:
        """Scan a solved cube with the saved views: does it read as solved, and if not, which face is off."""
        return _offered(self._check_solved, "this rig's calibration cannot be checked from here")()

    def save_top_face(self, corners: list) -> dict:
        """Save and apply a flip/spin rig's face under its camera (where the config does not set it)."""
        refusal = "top_face: only a real flip/spin rig's face under its camera is set here"
        return _offered(self._save_top_face, refusal)(corners)

    def scan(self, scan_id: int | None = None) -> ScanRecord:
        """A remembered scan (the latest for None), for its overlay; RobotError says why there is none."""
        if self.scans is None:
            raise RobotError("this rig's scanner keeps no scans to show")
        record = self.scans.get(scan_id)
        if record is not None:
            return record
        if scan_id is None:
            raise RobotError("no scan yet: the overlay shows a scan once a run has scanned the cube")
        raise RobotError(
            f"scan {scan_id} is no longer in memory (robotd keeps the last {self.scans.keep}); "
            "a refused scan is kept on disk in the data directory's refused-scans folder"
        )

    def close(self) -> None:
        self.runner.close()
        for close in self._closers:
            close()
        for camera in self.cameras.values():
            camera.close()
        self.history.close()


def _offered(handler: Callable | None, refusal: str) -> Callable:
    """``handler``, or, where this daemon was given none, a call that raises RobotError(``refusal``)."""
    if handler is not None:
        return handler

    def refused(*args):
        raise RobotError(refusal)

    return refused
