"""The dashboard's colour calibration: scan a solved cube once and keep its colours (``POST
/api/calibration/palette``). The palette is saved and applied like any colour calibration
(``robot.calibration_store``): the next scan reads with it, no restart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Depends

from vision import ScanError, calibrate

from .errors import RobotError
from .web_models import CHANGE_REFUSED, KEY_REFUSED, refusals


def palette_routes(daemon: Any, require_key: Callable[..., None]) -> APIRouter:
    """The colour calibration's route, with the app's API-key check."""
    router = APIRouter()

    @router.post(
        "/api/calibration/palette",
        dependencies=[Depends(require_key)],
        responses=refusals(
            {
                **CHANGE_REFUSED,
                **KEY_REFUSED,
                409: "a run is in progress",
                400: "the cube in the rig is not solved, a camera gave no frame, or the file could not be written",
            }
        ),
    )
    def calibrate_palette() -> dict:
        """Put a solved cube in the rig: its colours are scanned once (taking a view again at another exposure
        where its stickers clip) and saved as this rig's colour calibration. The reply is the calibration page,
        with ``retakes`` listing the views taken again."""
        return calibrate_from_rig(daemon)

    return router


def calibrate_from_rig(daemon: Any) -> dict:
    """Scan the solved cube in the rig between runs, and save and apply its palette."""
    scanner = daemon.runner.scanner
    if not hasattr(scanner, "colours"):
        raise RobotError("this rig's scanner cannot scan a cube for a colour calibration")
    found: dict = {}

    def scan() -> str:
        found["colours"], found["retakes"] = scanner.colours()
        return "scanned the solved cube's colours"

    daemon.runner.rig_action("calibrate colours", scan)
    try:
        palette = calibrate(found["colours"])
    except ScanError as error:
        raise RobotError(f"colour calibration: {error}") from None
    return {**daemon.set_calibration({"calibration": palette.to_json()}), "retakes": found["retakes"]}
