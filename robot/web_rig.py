"""The dashboard's controls of the rig: start a run, jog, stop, home, motors on or off, reconnect."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Depends

from .web_models import (
    BAD_BODY,
    BUSY,
    CHANGE_REFUSED,
    INVALID,
    KEY_REFUSED,
    JogReply,
    JogRequest,
    MotorsRequest,
    RigReply,
    RunRequest,
    RunStarted,
    StopReply,
    refusals,
    rig_refusals,
)


def rig_routes(daemon: Any, require_key: Callable[..., None]) -> APIRouter:
    """The rig's controls, with the app's API-key check on all but Stop (anyone may stop the robot)."""
    router = APIRouter()

    @router.post(
        "/api/runs",
        status_code=201,
        dependencies=[Depends(require_key)],
        responses=refusals(
            {
                **CHANGE_REFUSED,
                **KEY_REFUSED,
                409: BUSY,
                422: INVALID,
                400: f"{BAD_BODY}, or options this daemon cannot take (simulation options on a real rig, or both "
                "scramble and moves)",
            }
        ),
    )
    def start_run(request: RunRequest | None = None) -> RunStarted:
        options = request.model_dump(exclude_none=True) if request else {}
        return RunStarted(run_id=daemon.start_run(**options))

    @router.post(
        "/api/jog",
        dependencies=[Depends(require_key)],
        responses=refusals(
            {
                **CHANGE_REFUSED,
                **KEY_REFUSED,
                409: BUSY,
                422: INVALID,
                400: f"{BAD_BODY}, a command this rig cannot do (/api/status lists them under jog), or the move failed",
            }
        ),
    )
    def jog(request: JogRequest) -> JogReply:
        return daemon.jog(request.command)

    @router.post("/api/stop", responses=refusals(CHANGE_REFUSED))
    def stop() -> StopReply:
        jogging = daemon.runner.jogging
        daemon.stop("stop from the dashboard")
        return StopReply(stopped=True, phase=daemon.runner.phase, jogging=jogging)

    @router.post(
        "/api/rig/home",
        dependencies=[Depends(require_key)],
        responses=rig_refusals("a rig without home switches (Marlin, grblHAL)"),
    )
    def home() -> RigReply:
        """Home the motors (robotd's firmware) or bring the servos home (flip/spin rig), between runs."""
        return RigReply(**daemon.home())

    @router.post(
        "/api/rig/motors",
        dependencies=[Depends(require_key)],
        responses=rig_refusals("a controller that cannot switch its drivers (grblHAL)"),
    )
    def motors(request: MotorsRequest) -> RigReply:
        """Switch the motors (servos) on, or off so that the rig turns by hand; a run or jog switches them on."""
        return RigReply(**daemon.set_motors(request.enabled))

    @router.post(
        "/api/rig/reconnect", dependencies=[Depends(require_key)], responses=rig_refusals("a rig without a serial link")
    )
    def reconnect() -> RigReply:
        """A new session on the serial link (the port opened again if it was lost), then the motors on."""
        return RigReply(**daemon.reconnect())

    @router.post(
        "/api/rig/square",
        dependencies=[Depends(require_key)],
        responses=rig_refusals("a controller that reports no positions (robotd's firmware, a servo rig)"),
    )
    def square() -> RigReply:
        """Turn each face an emergency stop left between two quarter turns to the nearest one (Marlin, grbl)."""
        return RigReply(**daemon.square())

    return router
