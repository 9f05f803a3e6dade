"""The dashboard's HTTP side: the app (``create_app``) with its settings, guards, status and static page.

Served by uvicorn inside ``robotd`` from the same process as the run. Each
part of the API is a router of its own module: the rig's controls
(``web_rig``), calibration (``web_calibration``, ``web_palette``), cameras
and scan overlays (``web_cameras``), live events (``web_events``), history
(``web_history``) and logs (``web_logs``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool

from .config import Section
from .errors import RobotError
from .health import health
from .web_calibration import calibration_routes
from .web_cameras import Streams, camera_routes
from .web_events import Broadcaster, event_routes
from .web_guard import INTENT_HEADER, LOOPBACK_HOSTS, RequestGuard
from .web_history import history_routes
from .web_logs import LogRing, log_routes
from .web_logs import attach as attach_log
from .web_logs import detach as detach_log
from .web_models import refusals
from .web_palette import palette_routes
from .web_rig import rig_routes

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
    app.state.streams = streams = Streams()
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

    app.include_router(rig_routes(daemon, require_key))
    app.include_router(history_routes(daemon))
    app.include_router(log_routes(log_ring))

    @app.get("/api/health")
    async def pi_health() -> dict:
        """The computer robotd runs on: CPU temperature, throttling (vcgencmd), disk free in the data directory,
        memory and load; a part that cannot be read here says "not available here" and why."""
        return await run_in_threadpool(health, daemon.history.path.parent)

    app.include_router(calibration_routes(daemon, require_key))
    app.include_router(camera_routes(daemon, settings.stream_fps, streams))
    app.include_router(event_routes(daemon, state))
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


def _bearer(header: str) -> str | None:
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None
