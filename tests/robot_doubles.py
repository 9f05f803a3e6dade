"""In-process test doubles for a rig: a virtual cube that scanning reads and motion turns."""

import threading
import time

import numpy as np

import solver
from robot.config import Config
from robot.daemon import Daemon
from robot.errors import Stopped
from robot.events import EventBus
from robot.history import History
from robot.rig import rig_from_config
from robot.run import Runner, RunSettings, ScanResult, is_solved

SUFFIX = {1: "", 2: "2", -1: "'"}

# A [solver] key for dry runs that solve no 3x3 (jogs, 2x2 runs: the pocket table): no two-phase worker. A
# daemon built without it starts that process and waits for its tables, about a second of CPU on two cores.
NO_TWO_PHASE = 'fallback = "none"\n'


def solver_keys(two_phase: bool = True) -> str:
    """The [solver] keys of the dry-run configs: a generous budget, and the two-phase worker where asked."""
    return "budget_s = 20\n" + ("" if two_phase else NO_TWO_PHASE)


# dry-run configs: a quick six-motor rig, and a quick flip/spin rig on a Maestro
SIX_AXIS_RIG = "[rig]\nquarter_turn_s = 0.01\nhalf_turn_s = 0.015\nsettle_s = 0.0\n"
# robotd's simulated firmware homes in 5 ms instead of its 300 (its default for the default motors' times)
QUICK_HOME = "[sim.motors]\nhome_ms = 5\n"
FAST_RIG = SIX_AXIS_RIG + QUICK_HOME
FLIP_SPIN = """
[rig]
kind = "flip-spin"
flip_s = 0.04
spin_quarter_s = 0.02
spin_half_s = 0.03
turn_quarter_s = 0.02
turn_half_s = 0.03
hold_s = 0.01
release_s = 0.01
settle_s = 0.0
[controller]
kind = "maestro"
[controller.maestro]
servo_us_per_ms = 40.0
"""


class VirtualRig:
    """Holds a cube; ``scan`` reads it, ``run_plan`` turns it, ``estop`` halts within one poll and refuses every
    move until ``arm`` (a new operation), as ``LinkMotion`` does."""

    def __init__(self, state, turn_s=0.0, scan_failures=0, rescan_failures=0):
        self.state, self.turn_s, self.scan_failures = state, turn_s, scan_failures
        self.rescan_failures = rescan_failures  # scans refused once the cube has been turned
        self.halted = threading.Event()
        self.estop_at = None

    def scan(self):
        if self.scan_failures:
            self.scan_failures -= 1
            raise ValueError("stickers F3, R1 in doubt: red or orange")
        if self.rescan_failures and is_solved(self.state):
            self.rescan_failures -= 1
            raise ValueError("the colours read form no real cube")
        return ScanResult(self.state, [1.0] * len(self.state))

    def arm(self):
        self.halted.clear()

    def run_plan(self, plan, on_done):
        if self.halted.is_set():
            raise Stopped("emergency stop")
        for index, command in enumerate(plan):
            if self.halted.wait(self.turn_s):
                raise Stopped("emergency stop")
            for turn in command.turns:
                self.state = solver.apply(self.state, turn.face + SUFFIX[turn.quarter_turns])
            on_done(index)

    def estop(self):
        self.estop_at = time.perf_counter()
        self.halted.set()


class ActingRig(VirtualRig):
    """A ``VirtualRig`` with the rig actions between runs (home, motors, reconnect, square), as ``LinkMotion`` has
    them; an action in ``cannot`` is refused with its reason, and ``home`` takes ``turn_s`` (stoppable)."""

    def __init__(self, state, turn_s=0.0, cannot=None):
        super().__init__(state, turn_s)
        self.cannot, self.motors_on, self.done = dict(cannot or {}), True, []

    def rig_actions(self):
        return [action for action in ("home", "motors", "reconnect", "square") if action not in self.cannot]

    def home(self):
        if self.halted.wait(self.turn_s):
            raise Stopped("emergency stop")
        self.done.append("home")
        return "every motor was sent HOME"

    def set_motors(self, enabled):
        self.motors_on = enabled
        self.done.append(f"motors {'on' if enabled else 'off'}")
        return "the drivers hold the faces" if enabled else "the faces turn freely by hand"

    def reconnect(self):
        self.motors_on = True
        self.done.append("reconnect")
        return "a new session with robotd-sim/1.0 on /dev/pts/9; motors on"

    def square_faces(self):
        self.done.append("square faces")
        return "every face was square: nothing to turn"


class ScramblingSimulation:
    """Loads a scrambled cube into a ``VirtualRig`` before each run."""

    def __init__(self, rig: VirtualRig):
        self.rig = rig

    def prepare(self, puzzle, seed, scramble, light, moves=None):
        solved = solver.scramble(puzzle or 2, seed=0, length=0)["state"]
        moves = scramble if scramble is not None else solver.scramble(puzzle or 2, seed=seed, length=moves)["scramble"]
        self.rig.state = solver.apply(solved, moves)
        return {"scramble": moves}

    def status(self):
        return {"state": self.rig.state}


class StillCamera:
    name = "still"

    def frame(self):
        return np.full((48, 64, 3), 128, np.uint8)

    def status(self):
        return {"name": self.name, "kind": "test", "open": True, "error": None}

    def close(self):
        pass


KEY = "a-long-enough-key"


def make_daemon(tmp_path, turn_s=0.0, rig_class=VirtualRig, link_status=None, mode=None, two_phase=True, **rig_options):
    """The test daemon on a virtual rig; ``two_phase=False``: a 3x3 is solved by neural A* alone, with no worker
    process to start (enough for a short scramble)."""
    virtual = rig_class(solver.scramble(2, seed=0, length=0)["state"], turn_s=turn_s, **rig_options)
    bus = EventBus()
    history = History(tmp_path / "history.sqlite")
    rig = rig_from_config(Config({}).section("rig"))
    settings = RunSettings() if two_phase else RunSettings(solve_fallback=None)
    runner = Runner(virtual, virtual, rig, history, bus, settings)
    return Daemon(
        runner=runner,
        history=history,
        bus=bus,
        rig=rig,
        cameras={"still": StillCamera()},
        link_status=link_status or (lambda: {"connected": True}),
        simulation=ScramblingSimulation(virtual),
        mode=mode,
    )


def acting_daemon(tmp_path, turn_s=0.0, cannot=None):
    """The test daemon on an ``ActingRig``: home, motors on/off and reconnect between runs."""
    return make_daemon(tmp_path, turn_s, ActingRig, cannot=cannot)


class FrameCamera(StillCamera):
    """A camera of a given name giving 640x480 grey frames (the rendered corner rig's size)."""

    def __init__(self, name):
        self.name = name

    def frame(self):
        return np.full((480, 640, 3), 128, np.uint8)


def calibrating_daemon(tmp_path, turn_s=0.0, views_file="views.toml", two_phase=True, **store_options):
    """The test daemon with a real ``CalibrationStore``: the corner rig's two cameras and its view config,
    saved to ``tmp_path / views_file`` (written first, as a config's file would be) and ``calibration.json``."""
    from robot.calibration_store import CalibrationStore, views_text
    from robot.scanner import ViewScanner
    from vision import default_views

    plain = make_daemon(tmp_path, turn_s=turn_s, two_phase=two_phase)
    views = default_views("corners", 3)
    files = {"views": tmp_path / views_file, "calibration": tmp_path / "calibration.json"}
    files["views"].write_text(views_text(views, files["views"]))
    cameras = {name: FrameCamera(name) for name in views.images}
    scanner = ViewScanner(lambda: {name: camera.frame() for name, camera in cameras.items()}, lambda: views)
    store = CalibrationStore(scanner, cameras, files, busy=lambda: plain.runner.busy, **store_options)
    return store_daemon(plain.runner, plain.history, plain.bus, plain.rig, store, plain.simulation)


def store_daemon(runner, history, bus, rig, store, simulation=None):
    """A daemon whose calibration is ``store`` (a ``CalibrationStore``, kept as ``daemon.store``) on its cameras."""
    daemon = Daemon(
        runner=runner,
        history=history,
        bus=bus,
        rig=rig,
        cameras=store.cameras,
        link_status=lambda: {"connected": True},
        simulation=simulation,
        calibration=store.page,
        set_calibration=store.update,
        check_calibration=store.check,
        check_solved=store.check_solved,
        save_top_face=store.save_top_face,
        scans=store.scanner.memory,
    )
    daemon.store = store
    return daemon


def wait_for(condition, timeout_s: float = 20.0) -> None:
    """Until ``condition()`` holds; failing after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.002)


def wait_done(daemon, timeout=20):
    deadline = time.time() + timeout
    while daemon.runner.busy and time.time() < deadline:
        time.sleep(0.01)
    daemon.runner.wait(timeout)


def scanning_daemon(tmp_path, refuse=False, keep=20, retries=0, turn_s=0.0):
    """A daemon whose virtual 3x3 is scanned by the real vision from rendered corner-camera frames.

    With ``refuse`` two edges are painted grey in every frame, so every scan is
    refused; refused scans are kept in ``tmp_path / "refused-scans"`` (``keep``).
    """
    from doubtful_scans import grey_edges
    from robot.scan_archive import RefusedScans
    from robot.scanner import ViewScanner
    from vision import default_views, render_views

    virtual = VirtualRig(solver.scramble(3, seed=0, length=0)["state"], turn_s=turn_s)
    views = default_views("corners", 3)

    def frames():
        images = render_views(virtual.state, "corners", "daylight", np.random.default_rng(0))
        return grey_edges(images, views) if refuse else images

    scanner = ViewScanner(frames, lambda: views)
    bus, history = EventBus(), History(tmp_path / "history.sqlite")
    rig = rig_from_config(Config({}).section("rig"))
    refused = RefusedScans(tmp_path / "refused-scans", keep, scanner.memory)
    runner = Runner(
        scanner,
        virtual,
        rig,
        history,
        bus,
        RunSettings(scan_retries=retries, solve_budget_s=20),
        keep_refused=refused.keep,
    )
    return Daemon(
        runner=runner,
        history=history,
        bus=bus,
        rig=rig,
        cameras={"still": StillCamera()},
        link_status=lambda: {"connected": True},
        simulation=ScramblingSimulation(virtual),
        scans=scanner.memory,
    )
