"""``robotd check``: every problem with the config, the cameras and the serial port, and the board that answered.

What a rig still lacks (the view config before the first calibration, a camera, the board, the solver's
model files) is a ``Missing`` item: what is missing and which command or dashboard page supplies it. Each
is also one of the problem lines, with its fix.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from firmware_interface import LinkError
from solver.search.heuristic import MODEL_NAME, model_dir
from vision import ScanError, load_calibration, load_view_config
from vision.views import ViewsMissing

from .assemble import Parts, dashboard_url, load_parts, rig_part_problems
from .board import board_identity, link_info
from .camera import CaptureCamera
from .errors import ConfigError, RobotError
from .top_face import FILE_NAME as TOP_FACE_FILE
from .top_face import load_top_face

CAMERA_FIX = (
    "plug the camera in and set [camera.{name}] device (or index) to one of the cameras robotd check found "
    "(its first lines; docs/cameras.md)"
)
BOARD_FIX = (
    "plug the board in and set [serial] port to its name in /dev/serial/by-id/ (`ls /dev/serial/by-id/`), or "
    "install deploy/99-robotd.rules for /dev/robotd-rig; a board that opens but does not answer needs the "
    "firmware of [controller] kind flashed (docs/firmware.md)"
)
SERVO_FIX = (
    "check the servos' wiring and [controller.{kind}] (the pins, or the I2C bus and address: `i2cdetect -y 1` "
    "lists the boards on bus 1; enable I2C with raspi-config), and that the [pi] extra is installed "
    '(docs/hardware.md, "Servos straight from the Pi")'
)
MODEL_FIX = (
    "copy the project's models/ folder beside the installed packages, or point ROBOTD_MODEL_DIR at it "
    "(an Environment= line in robotd.service; docs/install-pi.md)"
)


@dataclass
class Missing:
    """Something the rig needs and does not have: ``item`` (views, camera NAME, board, models), the problem,
    and how to fix it (a command or a dashboard page)."""

    item: str
    problem: str
    fix: str

    def line(self) -> str:
        return f"{self.problem}; to fix: {self.fix}"


@dataclass
class CheckResult:
    """The problems found, one line each; what is missing with its fix; the board's identity (``robot.board``)
    when the port answered."""

    problems: list[str] = field(default_factory=list)
    port: str | None = None
    board: dict | None = None
    missing: list[Missing] = field(default_factory=list)

    def add(self, missing: Missing) -> None:
        self.missing.append(missing)
        self.problems.append(missing.line())

    def missing_json(self) -> list[dict]:
        return [asdict(m) for m in self.missing]


def check(path) -> CheckResult:
    """Validate the config, grab a frame from each camera, connect to the board on the port and say which it is.

    A config fit for ``robotd --rig-only`` (a port, no camera yet) still gets its board named."""
    try:
        parts = load_parts(path, sim=False, rig_needs=False)  # a missing camera is reported, and the port probed
    except RobotError:
        return CheckResult(_config_problems(path))
    sections = parts.sections
    result = CheckResult(rig_part_problems(parts.config, sections), port=sections["port"])
    _vision_problems(parts, result)
    _camera_problems(sections, result)
    _model_problems(result)
    if sections["port"]:
        _board(parts, result)
    return result


def _board(parts: Parts, result: CheckResult) -> None:
    sections = parts.sections
    link = sections["controller"].open_link(sections["port"], parts.config, parts.daemon.data_dir)
    try:
        link.connect()
        result.board = board_identity(link_info(link))
    except LinkError as error:
        controller = sections["controller"]
        if controller.port(None) is None:
            result.add(Missing("board", f"serial port {sections['port']}: {error}", BOARD_FIX))
        else:
            result.add(Missing("board", f"{sections['port']}: {error}", SERVO_FIX.format(kind=controller.kind)))
    finally:
        link.close()


def _config_problems(path) -> list[str]:
    """Every problem of a config that cannot be used, in file order with what a real rig needs."""
    try:
        load_parts(path, sim=False)
    except ConfigError as error:
        return list(error.problems)
    except RobotError as error:
        return [str(error)]
    return []


def _calibrate_fix(parts: Parts) -> str:
    return (
        f"start robotd (`sudo systemctl start robotd`; it starts without it) and calibrate in the dashboard's "
        f'Calibration tab, {dashboard_url(parts.web)}#calibration (docs/hardware.md, "First calibration")'
    )


def _vision_problems(parts: Parts, result: CheckResult) -> None:
    sections = parts.sections
    flip_spin = sections["rig"].kind == "flip-spin"  # its camera has top_face instead of views
    try:
        if flip_spin and not sections["top_face"]:
            _top_face_problems(parts, result)
        elif sections["views"] and not flip_spin:
            load_view_config(sections["views"])
    except ViewsMissing:
        problem = f"[vision] views: {sections['views']} does not exist yet"
        result.add(Missing("views", problem, _calibrate_fix(parts) + "; it writes the file"))
    except ScanError as error:
        result.problems.append(f"[vision] {error}")
    try:
        if sections["calibration"]:
            load_calibration(sections["calibration"])
    except ScanError as error:
        result.problems.append(f"[vision] {error}")


def _top_face_problems(parts: Parts, result: CheckResult) -> None:
    file = parts.daemon.data_dir / TOP_FACE_FILE
    try:
        saved = load_top_face(file)
    except ConfigError as error:
        result.problems.append(str(error))
        return
    if saved is None:
        problem = f"[vision] top_face: not set, and the Calibration tab has not saved {file} yet"
        fix = _calibrate_fix(parts) + ', or set [vision] top_face (docs/hardware.md, "Measuring top_face")'
        result.add(Missing("top_face", problem, fix))


def _camera_problems(sections: dict, result: CheckResult) -> None:
    for name, settings in sections["cameras"].items():
        camera = CaptureCamera(settings)
        try:
            camera.frame()
        except RobotError as error:
            result.add(Missing(f"camera {name}", str(error), CAMERA_FIX.format(name=name)))
        finally:
            camera.close()


def _model_problems(result: CheckResult) -> None:
    folder = model_dir()
    absent = [p for p in (Path(folder) / f"{MODEL_NAME}.onnx", Path(folder) / f"{MODEL_NAME}.json") if not p.is_file()]
    if absent:
        problem = f"the 3x3x3 solver's model is missing: {', '.join(str(p) for p in absent)}"
        result.add(Missing("models", problem, MODEL_FIX))
