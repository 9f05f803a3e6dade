"""The dashboard's first calibration: scan a solved cube with the saved views (``POST
/api/calibration/solved``), and save a flip/spin rig's face under its camera (``PUT
/api/calibration/top_face``). The other calibration routes (show, check, save) are in ``robot.web``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from .web_models import CHANGE_REFUSED, INVALID, KEY_REFUSED, refusals


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
    """The routes of the first calibration, with the app's API-key check."""
    router = APIRouter()

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
