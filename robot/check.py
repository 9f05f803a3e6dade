"""``robotd check``: every problem with the config, the cameras and the serial port, and the board that answered."""

from __future__ import annotations

from dataclasses import dataclass, field

from firmware_interface import LinkError
from vision import ScanError, load_calibration, load_view_config

from .assemble import load_parts, rig_part_problems
from .board import board_identity, link_info
from .camera import CaptureCamera
from .errors import ConfigError, RobotError


@dataclass
class CheckResult:
    """The problems found, one line each; the board's identity (``robot.board``) when the port answered."""

    problems: list[str] = field(default_factory=list)
    port: str | None = None
    board: dict | None = None


def check(path) -> CheckResult:
    """Validate the config, grab a frame from each camera, connect to the board on the port and say which it is.

    A config fit for ``robotd --rig-only`` (a port, no camera yet) still gets its board named."""
    try:
        parts = load_parts(path, sim=False, rig_needs=False)  # a missing camera is reported, and the port probed
    except RobotError:
        return CheckResult(_config_problems(path))
    sections = parts.sections
    problems = rig_part_problems(parts.config, sections)
    result = CheckResult(problems + _vision_problems(sections) + _camera_problems(sections), port=sections["port"])
    if not sections["port"]:
        return result
    link = sections["controller"].open_link(sections["port"], parts.config, parts.daemon.data_dir)
    try:
        link.connect()
        result.board = board_identity(link_info(link))
    except LinkError as error:
        result.problems.append(f"serial port {sections['port']}: {error}")
    finally:
        link.close()
    return result


def _config_problems(path) -> list[str]:
    """Every problem of a config that cannot be used, in file order with what a real rig needs."""
    try:
        load_parts(path, sim=False)
    except ConfigError as error:
        return list(error.problems)
    except RobotError as error:
        return [str(error)]
    return []


def _vision_problems(sections: dict) -> list[str]:
    try:
        if sections["views"] and not sections.get("top_face"):  # a flip/spin rig's camera has top_face instead
            load_view_config(sections["views"])
        if sections["calibration"]:
            load_calibration(sections["calibration"])
    except ScanError as error:
        return [f"[vision] {error}"]
    return []


def _camera_problems(sections: dict) -> list[str]:
    problems = []
    for settings in sections["cameras"].values():
        camera = CaptureCamera(settings)
        try:
            camera.frame()
        except RobotError as error:
            problems.append(str(error))
        finally:
            camera.close()
    return problems
