"""The dashboard's live events: ``/ws``, a WebSocket per browser fed from the daemon's event bus.

The run thread never waits for a browser: events reach each WebSocket client
through its own bounded queue on the server's event loop, and a client whose
queue fills up (a slow phone on weak Wi-Fi) is disconnected, never the run.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect


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


def event_routes(daemon: Any, state: dict) -> APIRouter:
    """``/ws``: a snapshot of the status and the current run's events so far, then each event as it comes;
    ``state["broadcaster"]`` is the app's ``Broadcaster`` (made once the server's loop runs)."""
    router = APIRouter()

    @router.websocket("/ws")
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

    return router


async def _until_disconnect(socket: WebSocket) -> None:
    while (await socket.receive())["type"] != "websocket.disconnect":
        pass
