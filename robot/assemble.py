"""Build the daemon from its config: every section read and validated, then the parts wired up.

``build`` is the one place that knows which parts exist: the rig, the
cameras and scanner, the serial link (to the rig or to the simulated
firmware), the run history and the dashboard. A motors-only run
(``robotd --rig-only``) is the real rig's link with the simulation's
virtual cube and cameras, the cube following the controller
(``robot.rig_only``).
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from firmware_interface import ConfigError as LinkConfigError
from vision import ScanError, ViewConfig, load_calibration, load_view_config, top_face_corners
from vision.assignment import warm_up as warm_up_vision
from vision.views import ViewsMissing

from . import log_file, rig_only
from .calibration_start import TOP_FACE_TASK, not_calibrated_message, uncalibrated
from .calibration_store import CalibrationStore, calibration_at_start
from .camera import CaptureCamera, RenderedCamera, capture_settings
from .config import Config
from .controllers import controller_from_config
from .daemon import Daemon
from .errors import ConfigError, RobotError
from .events import EventBus
from .history import History
from .instance_lock import DataDirLock
from .paths import find_config
from .rig import rig_from_config
from .run import Runner
from .run_log import log_event
from .scan_archive import RefusedScans, scan_report
from .scanner import ViewScanner, camera_retake
from .settings import DaemonSettings, daemon_settings, run_settings
from .sim import Simulation, dry_run_rig, sim_settings
from .solving import warm_up_solvers
from .summary import nonzero
from .top_face import FILE_NAME as TOP_FACE_FILE
from .top_face import TopFace
from .turning_scan import TurningScan
from .web import WebSettings, create_app, web_settings
from .web_server import dashboard_server

log = logging.getLogger("robotd")


@dataclass
class Parts:
    """Everything read from config, before anything is opened."""

    config: Config
    daemon: DaemonSettings
    web: WebSettings
    sections: dict = field(default_factory=dict)


def load_parts(
    path,
    sim: bool,
    host: str | None = None,
    port: int | None = None,
    firmware: str | None = None,
    controller: str | None = None,
    rig: str | None = None,
    *,
    rig_only: bool = False,
    rig_needs: bool = True,
) -> Parts:
    """Read and validate every section of the config (nothing is opened yet); every problem found is in the
    one ``ConfigError`` raised at the end. Unless ``sim``, what the rig needs besides (``rig_part_problems``:
    a port; cameras and views unless ``rig_only``) is among them, unless ``rig_needs`` is False.

    ``firmware``, ``controller``, ``rig``, ``host`` and ``port`` override ``[sim] firmware``,
    ``[controller] kind``, ``[rig] kind`` and ``[web] host`` / ``port`` (the command line's choices).
    """
    config = Config.load(find_config(path), collect=True)
    for key, value in (
        ("sim.firmware", firmware),
        ("controller.kind", controller),
        ("rig.kind", rig),
        ("web.host", host),
        ("web.port", port),
    ):
        if value is not None:
            config.override(key, value)
    parts = Parts(config, config.attempt(daemon_settings, config), config.attempt(web_settings, config.section("web")))
    parts.sections["run"] = config.attempt(run_settings, config)
    parts.sections["rig"] = rig = config.attempt(rig_from_config, config.section("rig"))
    if sim and rig is not None:  # the simulated motors' times ([sim.motors]) are the rig's in a dry run
        parts.sections["rig"] = rig = config.attempt(dry_run_rig, config.section("sim"), rig) or rig
    if rig is not None:
        parts.sections["controller"] = kind = config.attempt(controller_from_config, config, rig)
        if kind is not None:
            parts.sections["sim"] = config.attempt(sim_settings, config.section("sim"), rig, kind.kind)
    serial = config.attempt(config.table, "serial")
    port, controller = (serial.port if serial is not None else None), parts.sections.get("controller")
    parts.sections["port"] = controller.port(port) if controller is not None else port  # GPIO, I²C: no serial port
    config.attempt(_vision, config, parts.sections, rig)
    cameras = config.attempt(config.table, "camera") or {}
    parts.sections["cameras"] = {
        name: config.attempt(capture_settings, config.section(f"camera.{name}"), name) for name in cameras
    }
    config.check_unused()
    if rig_needs and not sim and rig is not None and serial is not None:
        for problem in rig_part_problems(config, parts.sections, rig_only):
            config.add(ConfigError(problem))
    config.raise_problems()
    return parts


def _vision(config: Config, sections: dict, rig) -> None:
    """``[vision]``: the view config and colour calibration files; a flip/spin rig's face under its camera."""
    vision = config.section("vision")
    table = vision.model
    sections["views"], sections["calibration"] = table.views, table.calibration
    if rig is not None and rig.kind == "flip-spin":
        sections["top_face"], sections["size"] = table.top_face, table.size
    elif rig is not None:
        for key in ("top_face", "size"):
            if vision.given(key):
                vision.report(key, 'only for a one-camera rig ([rig] kind = "flip-spin")')


def rig_part_problems(config: Config, sections: dict, rig_only: bool = False) -> list[str]:
    """What a real rig (or, ``rig_only``, its controller) needs that the config does not give."""
    where = config.source
    if rig_only:
        if sections["port"]:
            return []
        return [f"{where}: [serial] port: required for robotd --rig-only: the port of the board that turns the faces"]
    if not sections["port"]:
        return [f"{where}: [serial] port: required for a real rig (or run robotd --sim)"]
    problems = []
    if not sections["cameras"]:
        problems.append(
            f"{where}: no [camera.NAME] section: a real rig needs at least one camera "
            "(robotd --rig-only runs the motors with a virtual camera)"
        )
    if sections["rig"].kind == "flip-spin":  # its top_face may come from the Calibration tab (robot.top_face)
        if len(sections["cameras"]) != 1:
            problems.append(
                f"{where}: a flip/spin rig has one camera; found {len(sections['cameras'])} [camera.NAME] sections"
            )
    elif not sections.get("views"):
        problems.append(
            f"{where}: [vision] views: required for a real rig: the file that says where each "
            "face is in which camera image (see docs/vision.md)"
        )
    return problems


def open_history(path) -> History:
    """The run history for reading; runs left ``running`` by a dead daemon are marked when none is alive."""
    data_dir = daemon_settings(Config.load(find_config(path))).data_dir
    lock = DataDirLock(data_dir)
    try:
        alone = data_dir.is_dir() and lock.try_acquire()
    except OSError:
        alone = False
    try:
        return History(data_dir / "history.sqlite", recover=alone)
    finally:
        lock.release()


class Built:
    """A daemon ready for runs, with what is needed to serve it or do one run."""

    def __init__(self, parts: Parts, daemon: Daemon, simulation: Simulation | None, closers: list[Callable]):
        self.parts, self.daemon, self.simulation = parts, daemon, simulation
        self._closers = closers

    def once(self, puzzle=None, seed=None, light=None, moves=None) -> dict:
        """One complete run; the summary says whether the (virtual) cube ended solved."""
        started = time.perf_counter()
        if self.simulation is not None:
            self.simulation.check_light(light)
            run_id = self.daemon.start_run(puzzle=puzzle, seed=seed, light=light, moves=moves)
        else:
            run_id = self.daemon.start_run()
        self.daemon.runner.wait()
        wall = time.perf_counter() - started
        summary = self.daemon.history.get_run(run_id) or {}
        events = summary.pop("events", [])
        prepared: dict = next((e["data"] for e in events if e["kind"] == "prepared"), {})
        summary.update(prepared)
        summary.update(scan_report(events, self.daemon.scans, self.parts.daemon.data_dir))
        summary["wall_s"] = round(wall, 3)
        motor = summary.get("actual_s") if summary["outcome"] == "done" else None  # measured, not the estimate
        summary["host_overhead_s"] = round(wall - motor, 3) if motor is not None else None
        summary["link"] = nonzero(self.daemon.link_status().get("counters", {}))
        if self.simulation is not None:
            summary["solved"] = self.simulation.solved() and summary["outcome"] == "done"
            summary["final_state"] = self.simulation.firmware.cube
            if self.daemon.mode == "rig-only":
                summary["read_back"] = self.simulation.read_back()
        else:
            summary["solved"] = summary["outcome"] == "done"
        return summary

    def serve(
        self, stop: threading.Event, puzzle=None, light=None, moves=None, on_signal: Callable[[int], None] | None = None
    ) -> None:
        """Serve the dashboard (when enabled) until ``stop`` is set or uvicorn is told to exit (SIGINT,
        SIGTERM: ``on_signal`` hears them first); in simulation, set the runs' defaults."""
        if self.simulation is not None:
            self.simulation.check_light(light)
            self.simulation.settings = replace(
                self.simulation.settings,
                **{k: v for k, v in (("puzzle", puzzle), ("light", light), ("scramble_moves", moves)) if v is not None},
            )
            self.simulation.light = self.simulation.settings.light
        web = self.parts.web
        if not web.enabled:
            print(f"robotd ready ({self.daemon.mode}); dashboard disabled in config", flush=True)
            stop.wait()
            return
        import uvicorn

        app = create_app(self.daemon, web)
        config = uvicorn.Config(
            app, host=web.host, port=web.port, root_path=web.root_path, log_level="warning", timeout_graceful_shutdown=2
        )
        server = dashboard_server(config, app, on_signal)
        listener = listen(web.host, web.port)
        print(f"robotd ready ({self.daemon.mode} mode): dashboard at {dashboard_url(web)}", flush=True)
        server.run(sockets=[listener])

    def close(self) -> None:
        self.daemon.close()
        _close_all(self._closers)


def dashboard_url(web: WebSettings) -> str:
    """Where the dashboard is served, as its own host sees it (any address: the machine's own)."""
    host = "<this machine's address>" if web.host in ("0.0.0.0", "::") else web.host
    return f"http://{host}:{web.port}{web.root_path}/"


def _close_all(closers: list[Callable]) -> None:
    """Last opened, first closed: the link before the simulated firmware it talks to, the lock last."""
    for close in reversed(closers):
        try:
            close()
        except Exception:  # closing is best effort; the process is ending
            log.exception("closing %r failed", close)


SEND_BUFFER_BYTES = 64 * 1024


def listen(host: str, port: int) -> socket.socket:
    """The dashboard's listening socket, with a bounded kernel send buffer per connection.

    Connections inherit it: a browser that stops reading then blocks its own
    sender within a few hundred events, its event queue fills and it is
    dropped, instead of the kernel buffering megabytes for it.

    Made with the protocol named, asyncio turns Nagle's algorithm off on each
    connection (it only does for sockets that say they are TCP): a reply goes
    out in two writes, headers and body, and on a kept-alive connection the
    body otherwise waited for the client's delayed ACK, 40 ms per request.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)
    try:
        listener.bind((host, port))
    except OSError as error:
        listener.close()
        raise ConfigError(f"[web] cannot listen on {host}:{port}: {error.strerror}") from None
    listener.listen(64)
    return listener


def build(
    path=None,
    *,
    sim: bool,
    rig_only: bool = False,
    web: bool = True,
    host: str | None = None,
    port: int | None = None,
    firmware: str | None = None,
    controller: str | None = None,
    rig: str | None = None,
) -> Built:
    """Read and validate the config, then open history, link and cameras and wire the daemon.

    ``sim``: a simulated controller and cube; ``rig_only``: the real controller, a virtual cube that follows
    it (``robot.rig_only``); neither: the real rig."""
    parts = load_parts(path, sim, host, port, firmware, controller, rig, rig_only=rig_only)
    try:
        parts.daemon.data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(f"[robotd] data_dir: cannot create {parts.daemon.data_dir}: {error.strerror}") from None
    lock = DataDirLock(parts.daemon.data_dir)
    lock.acquire()
    closers: list[Callable] = [lock.release]
    try:
        closers.append(log_file.start(parts.daemon.log_file, parts.daemon.log_level))
        return _wire(parts, "sim" if sim else "rig-only" if rig_only else "rig", closers)
    except BaseException:
        _close_all(closers)
        raise


def _wire(parts: Parts, mode: str, closers: list[Callable]) -> Built:
    """History, link, cameras, scanner, runner and daemon, each closer added to ``closers`` as it opens."""
    sections = parts.sections
    history = History(parts.daemon.data_dir / "history.sqlite", recover=True, limits=parts.daemon.history)
    closers.append(history.close)
    bus = EventBus()
    bus.subscribe(log_event)
    simulation, board, link, cameras, scanner_for = _parts_for(mode, parts, closers)
    motion = sections["controller"].motion(link, sections["rig"])
    if board is not None:
        rig_only.attach(motion, board, sections["controller"].kind)
    scanner = scanner_for(motion)
    try:
        motion.connect()
    except RobotError as error:
        if mode != "rig":
            raise
        log.warning("%s (robotd retries before each run)", error)
    warm_up_solvers(sections["run"])
    warm_up_vision()
    refused = RefusedScans(parts.daemon.data_dir / "refused-scans", parts.daemon.keep_refused_scans, scanner.memory)
    runner = Runner(
        scanner,
        motion,
        sections["rig"],
        history,
        bus,
        sections["run"],
        keep_refused=refused.keep,
        why_unsolved=None if board is None else lambda: rig_only.why_unsolved(board),
    )
    runner.solving.prepare()
    calibration = _calibration_store(parts, scanner, cameras, simulation is not None, runner)
    daemon = Daemon(
        runner=runner,
        history=history,
        bus=bus,
        rig=sections["rig"],
        cameras=cameras,
        link_status=link.status,
        simulation=simulation,
        calibration=calibration.page,
        set_calibration=calibration.update,
        check_calibration=calibration.check,
        check_solved=calibration.check_solved,
        save_top_face=calibration.save_top_face,
        scans=scanner.memory,
        mode=mode,
    )
    return Built(parts, daemon, simulation, closers)


def _parts_for(mode: str, parts: Parts, closers: list):
    """The virtual cube (if any), what follows the real controller (``--rig-only``), the link, the cameras and
    the scanner of this mode."""
    sections = parts.sections
    if mode == "rig":
        return (None, None, *_rig_parts(parts, closers))
    board = None
    if mode == "sim":
        simulation, link = _simulated_board(parts, closers)
    else:
        link = _link(parts, sections["port"], closers)
        board = rig_only.follower(sections["controller"], link, sections["rig"], sections["sim"].puzzle)
        simulation = Simulation(sections["sim"], board)
    return (simulation, board, link, *_virtual_cameras(parts, simulation))


def _calibration_store(parts: Parts, scanner, cameras: dict, virtual: bool, runner: Runner) -> CalibrationStore:
    """Where the dashboard saves the calibration: the files the config names (a real rig), else the data dir."""
    sections, data_dir = parts.sections, parts.daemon.data_dir
    files = {
        "views": Path(sections["views"]) if sections["views"] and not virtual else data_dir / "views.json",
        "calibration": Path(sections["calibration"])
        if sections["calibration"] and not virtual
        else data_dir / "calibration.json",
    }
    fixed = (
        "a flip/spin rig's six scan views follow from the face under its camera (top_face)"
        if sections["rig"].kind == "flip-spin"
        else None
    )
    top = None if virtual else sections.get("top")
    return CalibrationStore(scanner, cameras, files, views_fixed=fixed, busy=lambda: runner.busy, top_face=top)


def _simulated_board(parts: Parts, closers: list) -> tuple[Simulation, object]:
    """The controller simulated on a pty, with the virtual cube in it, and the link to it."""
    settings = parts.sections["sim"]
    try:
        firmware = parts.sections["controller"].simulator(settings, parts.sections["rig"])
        device = firmware.start()
    except LinkConfigError as error:
        raise ConfigError(f"{parts.config.source}: [sim] {error}") from None
    closers.append(firmware.stop)
    return Simulation(settings, firmware), _link(parts, device, closers)


def _virtual_cameras(parts: Parts, simulation: Simulation) -> tuple[dict, Callable]:
    """Rendered cameras of the virtual cube, and the scanner (given the motion) that reads them."""
    if parts.sections["rig"].kind == "flip-spin":
        cameras = {"top": RenderedCamera("top", _one_frame(simulation, "top"))}
        return cameras, lambda motion: ViewScanner(
            *_turning_scan(
                parts,
                motion,
                lambda: simulation.frames()["top"],
                lambda: top_face_corners(simulation.size),
                lambda: simulation.size,
            )
        )
    cameras = {name: RenderedCamera(name, _one_frame(simulation, name)) for name in simulation.views().images}
    return cameras, lambda motion: ViewScanner(simulation.frames, simulation.views)


def _turning_scan(
    parts: Parts, motion, frame: Callable, quad: Callable, size: Callable
) -> tuple[Callable[[], dict], Callable[[], ViewConfig]]:
    """A one-camera rig's scan by flips and spins, as ``ViewScanner``'s frames and views."""
    scan = TurningScan(parts.sections["rig"], motion, frame, quad, size)
    return scan.frames, scan.views


def _one_frame(simulation: Simulation, name: str) -> Callable:
    return lambda: simulation.preview(name)


def _rig_parts(parts: Parts, closers: list):
    sections = parts.sections
    calibration_file = calibration_at_start(sections["calibration"], parts.daemon.data_dir)
    try:
        calibration = load_calibration(calibration_file) if calibration_file else None
        views = None if sections["rig"].kind == "flip-spin" else load_view_config(sections["views"])
    except ViewsMissing:  # the first start: the Calibration tab writes the file
        views = None
    except ScanError as error:
        raise ConfigError(f"[vision] {error}") from None
    cameras = {name: CaptureCamera(settings) for name, settings in sections["cameras"].items()}
    link = _link(parts, sections["port"], closers)
    where = dashboard_url(parts.web)
    if sections["rig"].kind == "flip-spin":
        return link, cameras, _flip_spin_scanner(parts, cameras, calibration, where)
    frames = lambda: {name: cam.frame() for name, cam in cameras.items()}  # noqa: E731
    if views is None:
        log.warning("%s", message := not_calibrated_message(sections["views"], where))
        return link, cameras, lambda motion: ViewScanner(frames, uncalibrated(message), calibration)
    missing = [name for name in views.images if name not in cameras]
    if missing:
        raise ConfigError(f"[vision] views names camera image(s) {', '.join(missing)} with no [camera.NAME] section")
    fixed_views = views
    retake = camera_retake(cameras)  # exposure bracketing: a view whose stickers clip is taken again
    return link, cameras, lambda motion: ViewScanner(frames, lambda: fixed_views, calibration, retake=retake)


def _flip_spin_scanner(parts: Parts, cameras: dict, calibration, where: str) -> Callable:
    """A real flip/spin rig's scanner (given the motion), its face under the camera from the config or the
    Calibration tab (``robot.top_face``); it is kept in the sections for the calibration store."""
    sections, file = parts.sections, parts.daemon.data_dir / TOP_FACE_FILE
    name, camera = next(iter(cameras.items()))
    message = not_calibrated_message(file, where, TOP_FACE_TASK)
    sections["top"] = top = TopFace(sections["top_face"], file, name, message)
    if top.corners is None:
        log.warning("%s", message)
    size = sections["size"]
    return lambda motion: ViewScanner(*_turning_scan(parts, motion, camera.frame, top.quad, lambda: size), calibration)


def _link(parts: Parts, port: str, closers: list):
    link = parts.sections["controller"].open_link(port, parts.config, parts.daemon.data_dir)
    closers.append(link.close)
    return link
