"""The dashboard's pictures: the cameras (list, latest frame, MJPEG stream) and the overlay of a scan.

A camera stream never ends by itself: the server ends them all when it
shuts down (``end_streams``, ``robot.web_server``), so that Ctrl-C does not
wait for a browser that still shows the camera.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, FastAPI, HTTPException, Query
from fastapi.responses import Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from .errors import RobotError
from .web_models import INVALID, NO_CAMERA, CameraList, refusals


class Streams:
    """The camera streams open on one app. ``end`` sets each one's event, and that of any opened after it: a
    stream never ends by itself, and the server shutting down should not wait for it."""

    def __init__(self) -> None:
        self.ended = False
        self._open: set[asyncio.Event] = set()

    @contextlib.contextmanager
    def opened(self) -> Iterator[asyncio.Event]:
        """A stream's event (made on the loop that serves it), set when the streams end."""
        ended = asyncio.Event()
        if self.ended:
            ended.set()
        self._open.add(ended)
        try:
            yield ended
        finally:
            self._open.discard(ended)

    def end(self) -> None:
        self.ended = True
        for ended in self._open:
            ended.set()


def camera_routes(daemon: Any, fps: float, streams: Streams) -> APIRouter:
    """The cameras' and the scan overlay's routes; streams send ``fps`` frames a second and end with
    ``streams``."""
    router = APIRouter()

    @router.get(
        "/api/scan/overlay.png",
        response_class=Response,
        responses={
            200: {"content": {"image/png": {}}, "description": "the faces as scanned"},
            **refusals(
                {
                    404: "no scan yet, or that scan is no longer in memory",
                    422: INVALID,
                    400: "the overlay could not be drawn",
                }
            ),
        },
    )
    async def scan_overlay(
        scan: int | None = Query(
            None, ge=1, description="a scan id from a scan or scan_failed event; the latest scan when left out"
        ),
    ) -> Response:
        """Each face as scanned, with its grid, the colours read, their confidences and the stickers in doubt."""
        try:
            record = daemon.scan(scan)
        except RobotError as error:
            raise HTTPException(404, str(error)) from None
        png = await run_in_threadpool(_overlay_png, record)
        return Response(png, media_type="image/png", headers={"Cache-Control": "no-store"})

    @router.get("/api/cameras")
    def cameras() -> CameraList:
        return CameraList(cameras=[camera.status() for camera in daemon.cameras.values()])

    @router.get(
        "/api/cameras/{name}/frame.jpg",
        response_class=Response,
        responses={
            200: {"content": {"image/jpeg": {}}, "description": "the camera's latest frame"},
            **refusals({404: NO_CAMERA, 422: INVALID, 400: "the camera gives no frame now"}),
        },
    )
    async def frame(name: str) -> Response:
        return Response(await run_in_threadpool(_jpeg, _camera(daemon, name)), media_type="image/jpeg")

    @router.get(
        "/stream/{name}",
        response_class=StreamingResponse,
        responses={
            200: {
                "content": {"multipart/x-mixed-replace": {}},
                "description": "the camera's frames as MJPEG, one part per frame, until the client goes away",
            },
            **refusals({404: NO_CAMERA, 422: INVALID}),
        },
    )
    async def stream(name: str) -> StreamingResponse:
        camera = _camera(daemon, name)
        return StreamingResponse(
            _mjpeg(camera, fps, streams),
            media_type="multipart/x-mixed-replace; boundary=frame",
        )

    return router


def _camera(daemon, name: str):
    if name not in daemon.cameras:
        known = ", ".join(daemon.cameras) or "none configured"
        raise HTTPException(404, f"no camera named {name!r} (cameras: {known})")
    return daemon.cameras[name]


def _overlay_png(record) -> bytes:
    import cv2

    try:
        return record.overlay_png()
    except (ValueError, cv2.error) as error:  # vision.ScanError is a ValueError
        raise RobotError(f"the overlay of scan {record.id} could not be drawn: {error}") from None


def _jpeg(camera, quality: int = 80) -> bytes:
    import cv2

    ok, data = cv2.imencode(".jpg", camera.frame(), [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise RobotError(f"camera '{camera.name}': the frame could not be encoded as JPEG")
    return data.tobytes()


def end_streams(app: FastAPI) -> None:
    """End the camera streams of ``app`` (an app of ``create_app``), those open and any asked for later: the
    server is shutting down. Called on the server's event loop."""
    app.state.streams.end()


async def _mjpeg(camera, fps: float, streams: Streams):
    """The camera's frames as MJPEG parts until the client goes away or the streams end."""
    loop = asyncio.get_running_loop()
    period = 1.0 / fps
    with streams.opened() as ended:
        while not ended.is_set():
            started = loop.time()
            try:
                jpeg = await run_in_threadpool(_jpeg, camera)
            except RobotError:
                await _pause(ended, 1.0)  # camera away: keep the stream open and retry
                continue
            yield b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: " + str(len(jpeg)).encode() + b"\r\n\r\n"
            yield jpeg + b"\r\n"
            await _pause(ended, max(0.0, period - (loop.time() - started)))


async def _pause(ended: asyncio.Event, seconds: float) -> None:
    """Wait ``seconds``, or less if ``ended`` is set meanwhile."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(ended.wait(), seconds)
