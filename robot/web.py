"""The dashboard's HTTP side: JSON API, WebSocket events, MJPEG camera streams, static page.

Served by uvicorn inside ``robotd`` from the same process as the run. The run
thread never waits for a browser: events reach each WebSocket client through
its own bounded queue on the server's event loop, and a client whose queue
fills up (a slow phone on weak Wi-Fi) is disconnected, never the run.
A camera stream never ends by itself: the server ends them all when it
shuts down (``end_streams``, ``robot.web_server``), so that Ctrl-C does not
wait for a browser that still shows the camera.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from fastapi import Depends, FastAPI, HTTPException, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool

from .config import Section
from .errors import RobotError
from .health import health
from .web_calibration import calibration_routes
from .web_guard import INTENT_HEADER, LOOPBACK_HOSTS, RequestGuard
from .web_history import history_routes
from .web_logs import LogRing, log_routes
from .web_logs import attach as attach_log
from .web_logs import detach as detach_log
from .web_models import (
    BAD_BODY,
    BUSY,
    CHANGE_REFUSED,
    INVALID,
    KEY_REFUSED,
    NO_CAMERA,
    CalibrationCheck,
    CalibrationUpdate,
    CameraList,
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
from .web_palette import palette_routes

STATIC_DIR = Path(__file__).parent / "static"


@dataclass(frozen=True)
class WebSettings:
    """``[web]``: where the dashboard listens and who may move the robot through it."""

    host: str = "127.0.0.1"
    port: int = 8080
    api_key: str | None = None
    root_path: str = ""
    cors_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    max_body_bytes: int = 64 * 1024
    behind_proxy: bool = False
    api_docs: bool = False
    stream_fps: float = 12.0
    client_queue: int = 256
    enabled: bool = True

    @property
    def requires_key(self) -> bool:
        """A proxy on the same machine makes every visitor look local, so behind one the key is needed too."""
        return self.behind_proxy or not is_loopback(self.host)

    @property
    def hosts(self) -> tuple[str, ...]:
        """The names a request's Host header may give (any port)."""
        return (*LOOPBACK_HOSTS, self.host, *self.allowed_hosts)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def web_settings(section: Section) -> WebSettings:
    """``[web]`` as ``robot.schema.daemon.WebTable`` checked it; off loopback (or behind a proxy) a key is
    required."""
    table = section.model
    settings = WebSettings(
        **{
            **table.model_dump(),
            "root_path": table.root_path.rstrip("/"),
            "cors_origins": tuple(table.cors_origins),
            "allowed_hosts": tuple(table.allowed_hosts),
        }
    )
    if settings.requires_key and not settings.api_key:
        why = (
            "behind_proxy is true (the proxy makes everyone look local)"
            if settings.behind_proxy
            else f"host is {settings.host!r} (not a loopback address)"
        )
        raise section.error("api_key", f"is required when {why}: anyone on the network could move the robot")
    return settings


class Client:
    """One WebSocket client: its bounded event queue and whether it fell behind."""

    def __init__(self, queue_size: int):
        self.queue: asyncio.Queue = asyncio.Queue(queue_size)
        self.too_slow = False


class Broadcaster:
    """Fans bus events out to WebSocket clients on the server loop; remembers the current run's events."""

    def __init__(self, loop: asyncio.AbstractEventLoop, queue_size: int):
        self.loop, self.queue_size = loop, queue_size
        self.clients: set[Client] = set()
        self.run_events: list[dict] = []
        self.dropped = 0

    def on_event(self, event: dict) -> None:  # called on the run thread: hand over, never wait
        self.loop.call_soon_threadsafe(self._fan_out, event)

    def _fan_out(self, event: dict) -> None:
        if event["kind"] == "phase" and event["data"].get("phase") == "scanning":
            self.run_events = []
        if event.get("run_id") is not None:  # a jog between runs is no part of the run's backlog
            self.run_events.append(event)
        for client in list(self.clients):
            try:
                client.queue.put_nowait(event)
            except asyncio.QueueFull:
                client.too_slow = True
                self.clients.discard(client)
                self.dropped += 1

    def attach(self) -> tuple[Client, list[dict]]:
        """A new client and the current run's events so far (no gap, no repeat: both happen on the loop)."""
        client = Client(self.queue_size)
        self.clients.add(client)
        return client, list(self.run_events)


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


def create_app(daemon, settings: WebSettings) -> FastAPI:
    """The dashboard app for a running daemon (see ``robot.daemon.Daemon``)."""
    state: dict = {}
    log_ring = LogRing()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        broadcaster = Broadcaster(asyncio.get_running_loop(), settings.client_queue)
        state["broadcaster"] = broadcaster
        unsubscribe = daemon.bus.subscribe(broadcaster.on_event)
        attach_log(log_ring)
        try:
            yield
        finally:
            detach_log(log_ring)
            unsubscribe()

    app = FastAPI(
        title="robotd",
        version="1",
        lifespan=lifespan,
        responses=refusals({}),
        description="Control and watch a Rubik's-cube robot.",
        docs_url="/docs" if settings.api_docs else None,
        redoc_url="/redoc" if settings.api_docs else None,
    )
    app.state.robotd = state
    app.state.streams = Streams()
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST", "PUT"],
            allow_headers=["X-Api-Key", "Authorization", INTENT_HEADER],
        )
    app.add_middleware(
        RequestGuard,
        hosts=settings.hosts,
        origins=settings.cors_origins,  # added last: runs first
        max_body_bytes=settings.max_body_bytes,
    )

    def require_key(request: Request) -> None:
        if not settings.requires_key:
            return
        given = request.headers.get("x-api-key") or _bearer(request.headers.get("authorization", ""))
        if not given or not secrets.compare_digest(given, settings.api_key or ""):
            raise HTTPException(
                401,
                "this action needs the API key from robotd's config (header X-Api-Key or 'Authorization: Bearer KEY')",
            )

    @app.exception_handler(RobotError)
    async def robot_error(request: Request, error: RobotError) -> JSONResponse:
        return JSONResponse({"detail": str(error)}, status_code=409 if "in progress" in str(error) else 400)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, error: RequestValidationError) -> JSONResponse:
        problems = [
            "{}: {}".format(
                ".".join(str(p) for p in e["loc"] if p not in ("body", "query", "path")) or "body",
                e["msg"].removeprefix("Value error, "),
            )
            for e in error.errors()
        ]
        return JSONResponse({"detail": "; ".join(problems)}, status_code=422)

    @app.get("/api/status")
    def status() -> dict:
        broadcaster: Broadcaster | None = state.get("broadcaster")
        web = (
            None
            if broadcaster is None
            else {"clients": len(broadcaster.clients), "dropped_clients": broadcaster.dropped}
        )
        return {**daemon.status(), "auth_required": settings.requires_key, "web": web}

    @app.post(
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

    @app.post(
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

    @app.post("/api/stop", responses=refusals(CHANGE_REFUSED))
    def stop() -> StopReply:
        jogging = daemon.runner.jogging
        daemon.stop("stop from the dashboard")
        return StopReply(stopped=True, phase=daemon.runner.phase, jogging=jogging)

    app.include_router(history_routes(daemon))
    app.include_router(log_routes(log_ring))

    @app.get("/api/health")
    async def pi_health() -> dict:
        """The computer robotd runs on: CPU temperature, throttling (vcgencmd), disk free in the data directory,
        memory and load; a part that cannot be read here says "not available here" and why."""
        return await run_in_threadpool(health, daemon.history.path.parent)

    @app.get("/api/calibration", responses=refusals({400: "this rig has no calibration to show"}))
    def calibration() -> dict:
        return daemon.calibration()

    @app.put(
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

    @app.post(
        "/api/calibration/check",
        responses=refusals(
            {**CHANGE_REFUSED, 422: INVALID, 400: f"{BAD_BODY}, or this rig's calibration cannot be changed"}
        ),
    )
    def check_calibration(update: CalibrationUpdate) -> CalibrationCheck:
        """What PUT /api/calibration would do with the same body, without saving or applying anything."""
        return CalibrationCheck(**daemon.check_calibration(update.model_dump(exclude_none=True)))

    @app.post(
        "/api/rig/home",
        dependencies=[Depends(require_key)],
        responses=rig_refusals("a rig without home switches (Marlin, grblHAL)"),
    )
    def home() -> RigReply:
        """Home the motors (robotd's firmware) or bring the servos home (flip/spin rig), between runs."""
        return RigReply(**daemon.home())

    @app.post(
        "/api/rig/motors",
        dependencies=[Depends(require_key)],
        responses=rig_refusals("a controller that cannot switch its drivers (grblHAL)"),
    )
    def motors(request: MotorsRequest) -> RigReply:
        """Switch the motors (servos) on, or off so that the rig turns by hand; a run or jog switches them on."""
        return RigReply(**daemon.set_motors(request.enabled))

    @app.post(
        "/api/rig/reconnect", dependencies=[Depends(require_key)], responses=rig_refusals("a rig without a serial link")
    )
    def reconnect() -> RigReply:
        """A new session on the serial link (the port opened again if it was lost), then the motors on."""
        return RigReply(**daemon.reconnect())

    @app.get(
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

    @app.get("/api/cameras")
    def cameras() -> CameraList:
        return CameraList(cameras=[camera.status() for camera in daemon.cameras.values()])

    @app.get(
        "/api/cameras/{name}/frame.jpg",
        response_class=Response,
        responses={
            200: {"content": {"image/jpeg": {}}, "description": "the camera's latest frame"},
            **refusals({404: NO_CAMERA, 422: INVALID, 400: "the camera gives no frame now"}),
        },
    )
    async def frame(name: str) -> Response:
        return Response(await run_in_threadpool(_jpeg, _camera(daemon, name)), media_type="image/jpeg")

    @app.get(
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
            _mjpeg(camera, settings.stream_fps, app.state.streams),
            media_type="multipart/x-mixed-replace; boundary=frame",
        )

    @app.websocket("/ws")
    async def events(socket: WebSocket) -> None:
        await socket.accept()
        broadcaster: Broadcaster = state["broadcaster"]
        client, backlog = broadcaster.attach()
        gone = asyncio.ensure_future(_until_disconnect(socket))
        try:
            await socket.send_json({"kind": "snapshot", "t": time.time(), "status": daemon.status(), "events": backlog})
            while True:
                getter = asyncio.ensure_future(client.queue.get())
                await asyncio.wait({getter, gone}, return_when=asyncio.FIRST_COMPLETED)
                if gone.done():
                    getter.cancel()
                    return
                if client.too_slow:
                    await socket.close(code=1013, reason="client too slow for the event stream")
                    return
                await socket.send_json(getter.result())
        except (WebSocketDisconnect, RuntimeError):  # the browser went away mid-send
            pass
        finally:
            gone.cancel()
            broadcaster.clients.discard(client)

    app.include_router(calibration_routes(daemon, require_key))
    app.include_router(palette_routes(daemon, require_key))
    refuse_other_methods(app)
    if STATIC_DIR.is_dir():
        app.mount("/", StaticFiles(directory=STATIC_DIR, html=True), name="page")
    return app


METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def refuse_other_methods(app: FastAPI) -> None:
    """Answer a method that an API path does not take with 405 and ``Allow``.

    Without this the request falls through to the static page mounted at ``/``, whose 404 says that
    the path does not exist (``GET /api/stop``) although it does.
    """
    taken: dict[str, set[str]] = {}
    for route in _api_routes(app.routes):
        taken.setdefault(route.path, set()).update(route.methods or ())
    for path, methods in taken.items():
        app.add_api_route(
            path,
            _method_not_allowed(path, sorted(methods)),
            include_in_schema=False,
            methods=[method for method in METHODS if method not in methods],
        )


def _api_routes(routes) -> list[APIRoute]:
    """The API routes, those of included routers too (FastAPI keeps an included router as one entry that
    refers to it: ``original_router``); the routers here are included without a prefix."""
    found: list[APIRoute] = []
    for route in routes:
        if isinstance(route, APIRoute):
            found.append(route)
        elif getattr(route, "original_router", None) is not None:
            found += _api_routes(route.original_router.routes)
    return found


def _method_not_allowed(path: str, allow: list[str]) -> Callable[[], None]:
    def refuse() -> None:
        raise HTTPException(405, f"{path} takes {' or '.join(allow)}", headers={"Allow": ", ".join(allow)})

    return refuse


async def _until_disconnect(socket: WebSocket) -> None:
    while (await socket.receive())["type"] != "websocket.disconnect":
        pass


def _bearer(header: str) -> str | None:
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


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
