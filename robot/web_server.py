"""uvicorn serving the dashboard: robotd's signal handling first, and a shutdown that ends the camera streams.

uvicorn's shutdown lets open responses finish for ``timeout_graceful_shutdown``
before it cancels them, and an MJPEG stream never finishes by itself: a browser
showing the camera would hold every Ctrl-C for that long. The server here ends
the streams (``robot.web_cameras.end_streams``) as its shutdown begins, so they close
cleanly at once; other requests still get their time to finish.
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI

from .web_cameras import end_streams


def dashboard_server(config, app: FastAPI, on_signal: Callable[[int], None] | None = None):
    """A ``uvicorn.Server`` for ``config``, which serves ``app`` (from ``robot.web.create_app``, maybe behind
    middleware): SIGINT and SIGTERM go to ``on_signal`` first (it stops the motors at once)."""
    import uvicorn  # only a daemon that serves the dashboard needs it (not robotd --once)

    class DashboardServer(uvicorn.Server):
        def handle_exit(self, sig, frame) -> None:
            if on_signal is not None:
                on_signal(sig)
            super().handle_exit(sig, frame)

        async def shutdown(self, sockets=None) -> None:
            end_streams(app)
            await super().shutdown(sockets)

    return DashboardServer(config)
