"""The dashboard's calibration: show it, check an edit, save it (``/api/calibration``); scan a solved cube with
the saved views (``POST /api/calibration/solved``), and save a flip/spin rig's face under its camera (``PUT
/api/calibration/top_face``). The colour calibration's routes are in ``robot.web_palette``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from .web_models import BAD_BODY, CHANGE_REFUSED, INVALID, KEY_REFUSED, CalibrationCheck, CalibrationUpdate, refusals


class FaceOff(BaseModel):
    face: str = Field(description="the face (U R F D L B) whose view reads wrong")
    camera: str | None = Field(description="the camera that face is placed on")
    stickers: int = Field(description="how many of its stickers read another colour, or are in doubt")
    of: int | None = Field(None, description="the face's stickers (when the scan was read)")


class SolvedCheck(BaseModel):
    """A solved cube scanned with the saved views."""

    solved: bool = Field(description="true when it reads as solved: the views are right")
    message: str = Field(description="the verdict in words, with what to move when it is not solved")
    faces_off: list[FaceOff] = Field(description="the faces that read wrong, empty when solved")
    scan_id: int | None = Field(description="the scan, for GET /api/scan/overlay.png?scan=ID")
    state: str | None = Field(None, description="the facelet string read (none when the scan was refused)")


class TopFaceUpdate(BaseModel):
    """``PUT /api/calibration/top_face``: a flip/spin rig's face under its camera."""

    model_config = ConfigDict(extra="forbid", strict=True)
    corners: list[list[float]] = Field(
        description="four [x, y] image points: back-left, back-right, front-right, front-left (docs/hardware.md)"
    )


def calibration_routes(daemon: Any, require_key: Callable[..., None]) -> APIRouter:
    """The calibration's routes, with the app's API-key check."""
    router = APIRouter()

    @router.get("/api/calibration", responses=refusals({400: "this rig has no calibration to show"}))
    def calibration() -> dict:
        return daemon.calibration()

    @router.put(
        "/api/calibration",
        dependencies=[Depends(require_key)],
        responses=refusals(
            {
                **CHANGE_REFUSED,
                **KEY_REFUSED,
                422: INVALID,
                409: "a run is in progress",
                400: f"{BAD_BODY}, views or a colour calibration that are not valid (the detail says where), or the "
                "file could not be written",
            }
        ),
    )
    def set_calibration(update: CalibrationUpdate) -> dict:
        """Validate, save (atomically, the previous file kept as a backup) and apply at once: no restart."""
        return daemon.set_calibration(update.model_dump(exclude_none=True))

    @router.post(
        "/api/calibration/check",
        responses=refusals(
            {**CHANGE_REFUSED, 422: INVALID, 400: f"{BAD_BODY}, or this rig's calibration cannot be changed"}
        ),
    )
    def check_calibration(update: CalibrationUpdate) -> CalibrationCheck:
        """What PUT /api/calibration would do with the same body, without saving or applying anything."""
        return CalibrationCheck(**daemon.check_calibration(update.model_dump(exclude_none=True)))

    @router.post(
        "/api/calibration/solved",
        dependencies=[Depends(require_key)],
        responses=refusals(
            {
                **CHANGE_REFUSED,
                **KEY_REFUSED,
                409: "a run is in progress",
                400: "no views are saved yet, this rig's calibration cannot be checked here, or a camera gave no frame",
            }
        ),
    )
    def check_solved() -> SolvedCheck:
        """Put a solved cube in the rig: it is scanned with the saved views, and the reply says whether it reads
        as solved or which face (in which camera) reads wrong."""
        return SolvedCheck(**daemon.check_solved())

    @router.put(
        "/api/calibration/top_face",
        dependencies=[Depends(require_key)],
        responses=refusals(
            {
                **CHANGE_REFUSED,
                **KEY_REFUSED,
                409: "a run is in progress",
                422: INVALID,
                400: "not a real flip/spin rig, top_face set in the config, points that are no proper face inside "
                "the frame (the detail says which), or the file could not be written",
            }
        ),
    )
    def save_top_face(update: TopFaceUpdate) -> dict:
        """Save (atomically, the previous file kept as a backup) and apply at once: the next scan reads each
        face there. Only where the config sets no [vision] top_face."""
        return daemon.save_top_face(update.corners)

    return router
