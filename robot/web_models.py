"""The dashboard API's request and reply bodies, and the refusals each operation declares.

Request bodies are strict (no ``"5"`` for 5, no ``true`` for 1) and refuse unknown fields, so a typo
is a 422 naming the field instead of an option silently ignored. Fields that the config has too (the
simulation's puzzle, light and scramble length) are its schema's own types (``robot.schema``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from solver import InvalidState
from solver.puzzles.cube.notation import parse_moves

from .schema import Light, Puzzle, ScrambleMoves

SQLITE_INT_MAX = 2**63 - 1  # ids and offsets past this make sqlite3 raise OverflowError


class RunRequest(BaseModel):
    """``POST /api/runs``: in simulation, how to scramble the virtual cube first."""

    model_config = ConfigDict(extra="forbid", strict=True)  # no "5" for 5, no true for 1
    puzzle: Puzzle | None = None  # these three as [sim] puzzle, light, scramble_moves
    seed: int | None = Field(default=None, ge=0, le=SQLITE_INT_MAX)
    scramble: str | None = Field(default=None, max_length=400, description='moves, e.g. "R U F\'"')
    light: Light | None = None
    moves: ScrambleMoves | None = None

    @field_validator("scramble")
    @classmethod
    def _notation(cls, scramble: str | None) -> str | None:
        if scramble is not None:
            try:
                parse_moves(scramble)
            except InvalidState as error:
                raise ValueError(str(error)) from None
        return scramble


class JogRequest(BaseModel):
    """``POST /api/jog``: one move between runs, as ``/api/status`` lists them under ``jog``."""

    model_config = ConfigDict(extra="forbid", strict=True)
    command: str = Field(
        min_length=1,
        max_length=40,
        examples=["R", "U'", "F2"],
        description='a face turn ("R\'") or a flip/spin op ("spin+1")',
    )


class MotorsRequest(BaseModel):
    """``POST /api/rig/motors``: switch the motors (servos) on or off between runs."""

    model_config = ConfigDict(extra="forbid", strict=True)
    enabled: bool = Field(description="true: energise the drivers; false: let the faces turn freely by hand")


class CalibrationUpdate(BaseModel):
    """``PUT /api/calibration`` and ``POST /api/calibration/check``: new views, a new colour calibration, or
    both; each is validated whole."""

    model_config = ConfigDict(extra="forbid", strict=True)
    views: dict[str, Any] | None = Field(
        default=None, description="a view config as in [vision] views (size, view, inner)"
    )
    calibration: dict[str, Any] | None = Field(
        default=None, description="a colour calibration (size, palette, position_gains)"
    )


class Problem(BaseModel):
    """Every refusal's body: what is wrong, in words."""

    detail: str


class RunStarted(BaseModel):
    run_id: int


class StopReply(BaseModel):
    stopped: bool
    phase: str = Field(description="the run's phase once the stop was asked for")
    jogging: str | None = Field(description="the jog or rig action that was stopped, if one was under way")


class JogReply(BaseModel):
    command: str
    outcome: Literal["done"]
    seconds: float


class RigReply(BaseModel):
    action: Literal["home", "motors on", "motors off", "reconnect", "square faces"]
    outcome: Literal["done"]
    seconds: float
    message: str = Field(
        description="what the rig did, in words (e.g. that a board without home switches only confirms a home)"
    )


class RunsPage(BaseModel):
    runs: list[dict[str, Any]] = Field(description="newest first")
    limit: int
    offset: int


class CameraList(BaseModel):
    cameras: list[dict[str, Any]]


class FieldProblem(BaseModel):
    field: str = Field(description='where: "views", "views.inner", "views.view.2.corners", "calibration.palette", ...')
    message: str


class CalibrationCheck(BaseModel):
    """What ``PUT /api/calibration`` would do with the same body, without doing it."""

    valid: bool
    problems: list[FieldProblem] = Field(description="empty when valid")
    preview: dict[str, Any] | None = Field(
        description="the calibration page as it would read after the save (views drawn per camera, colour references)"
    )
    files: dict[str, str] = Field(description="the file each part would be written to")


HOST_REFUSED = "the Host header names no host robotd answers to (see [web] allowed_hosts)"
CHANGE_REFUSED = {
    403: "refused: no 'X-Robotd: 1' header, or sent from another site's page",
    413: "the body is larger than [web] max_body_bytes",
}
KEY_REFUSED = {401: "the API key is missing or wrong (needed when robotd is reachable from the network)"}
INVALID = "a parameter or the body is invalid; the detail names which and why"
BAD_BODY = "a body that is not UTF-8"
BUSY = "a run or a jog is in progress"
NO_CAMERA = "no camera by that name (/api/cameras lists them)"


def refusals(reasons: dict[int, str]) -> dict[int | str, dict[str, Any]]:
    """The ``responses`` of an operation for the refusals it answers with, each a ``Problem``.

    Every request can be refused for its Host (400), so a 400 reason given here adds to that one.
    """
    reasons = {**reasons, 400: "; or ".join(why for why in (HOST_REFUSED, reasons.get(400)) if why)}
    return {code: {"model": Problem, "description": why} for code, why in sorted(reasons.items())}


def rig_refusals(cannot: str) -> dict[int | str, dict[str, Any]]:
    """The refusals of a rig action (``POST /api/rig/...``): ``cannot`` says when the rig refuses it."""
    return refusals(
        {
            **CHANGE_REFUSED,
            **KEY_REFUSED,
            409: "a run, a jog or another rig action is in progress",
            422: INVALID,
            400: f"{BAD_BODY}, {cannot}, or the controller failed (the detail says how)",
        }
    )


class LogLine(BaseModel):
    seq: int = Field(description="increases by one per record; ask for the lines after the last one seen")
    t: float = Field(description="unix time")
    level: str
    logger: str
    message: str


class LogPage(BaseModel):
    lines: list[LogLine] = Field(description="oldest first")
    last_seq: int = Field(description="the newest record's number (0: none yet)")
    missed: int = Field(description="lines between `after` and the first one here that are no longer kept")
