"""Checks every request to the dashboard passes before the app sees it: its Host, its origin, its size.

- Host: only a name robotd answers to (loopback, the configured host, ``[web] allowed_hosts``) or an
  IP address gets through, so a DNS-rebinding page, whose own name now points at robotd, gets 400 (a
  rebinding page always comes by name: an address in Host is the user typing it).
- Origin: a state-changing request (POST, PUT, PATCH, DELETE) needs the header ``X-Robotd``, which a
  cross-origin form cannot send and a cross-origin script can only send after a CORS preflight that
  robotd refuses; its Origin (or Referer, when there is no Origin) must, when given, be the dashboard's
  own or one of ``[web] cors_origins``. A WebSocket handshake from another origin is refused too.
- Size: a body over ``max_body_bytes`` gets 413 before it is read: by its Content-Length, or counted
  as it arrives when it has none (chunked).
- Framing: every response says that no page of another origin may show it in a frame
  (``Content-Security-Policy: frame-ancestors 'self'``, and ``X-Frame-Options: DENY`` for browsers too old
  for the former), so a page elsewhere cannot lay the dashboard under its own clicks.
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

INTENT_HEADER = "X-Robotd"
FRAMING_HEADERS = ((b"content-security-policy", b"frame-ancestors 'self'"), (b"x-frame-options", b"DENY"))
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
_HOST = re.compile(r"(?:\[(?P<ipv6>[^\]]+)\]|(?P<name>[A-Za-z0-9._-]+))(?::(?P<port>\d{1,5}))?")


class Refused(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def parse_host(value: str) -> tuple[str, str | None] | None:
    """A Host header's host (lower case, addresses in their short form, no brackets) and port; None if malformed."""
    match = _HOST.fullmatch(value)
    if match is None:
        return None
    host = match["ipv6"] or match["name"]
    try:
        host = str(ipaddress.ip_address(host))
    except ValueError:
        if match["ipv6"]:
            return None
        host = host.lower()
    return host, match["port"]


def host_entry(entry: object) -> str:
    """An ``allowed_hosts`` entry in the form ``parse_host`` gives; ValueError says what is wrong with it."""
    if isinstance(entry, str):
        with contextlib.suppress(ValueError):
            return str(ipaddress.ip_address(entry.strip("[]")))  # "::1" as well as "[::1]"
        parsed = parse_host(entry)
        if parsed is not None and parsed[1] is None:
            return parsed[0]
    raise ValueError(
        f'{entry!r} is not a host name or address (give e.g. "robot.local" or "192.168.1.20", without scheme or port)'
    )


def origin_entry(entry: object) -> str:
    """A ``cors_origins`` entry as browsers send it in Origin; ValueError says what is wrong with it."""
    if isinstance(entry, str):
        parts = urlsplit(entry.rstrip("/"))
        if parts.scheme in ("http", "https") and parts.netloc and not (parts.path or parts.query):
            return f"{parts.scheme}://{parts.netloc}".lower()
    raise ValueError(f'{entry!r} is not an origin (give e.g. "http://laptop.local:3000": scheme, host and port only)')


class RequestGuard:
    """ASGI middleware refusing, with a JSON ``detail``, what the module docstring lists."""

    def __init__(self, app: ASGIApp, *, hosts: Iterable[str], origins: Iterable[str], max_body_bytes: int):
        self.app, self.max_body_bytes = app, max_body_bytes
        self.hosts, self.origins = frozenset(hosts), frozenset(origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if scope["type"] == "http":
            send = _not_framed(send)
        try:
            self.check_host(headers)
            if scope["type"] == "websocket" or scope["method"] in STATE_CHANGING:
                self.check_origin(headers, scope["type"] == "http")
            if scope["type"] == "http":
                receive = await self.bounded_body(headers, receive)
        except Refused as refusal:
            await _refuse(scope, receive, send, refusal)
            return
        await self.app(scope, receive, send)

    def check_host(self, headers: Headers) -> None:
        value = headers.get("host", "")
        parsed = parse_host(value)
        if parsed is None or (parsed[0] not in self.hosts and not _is_address(parsed[0])):
            raise Refused(
                400,
                f"Host {value!r} is not a name robotd answers to (it answers to "
                f"{', '.join(sorted(self.hosts))} and any IP address; "
                "add other names to [web] allowed_hosts)",
            )

    def check_origin(self, headers: Headers, needs_intent: bool) -> None:
        source, origin = ("Origin", headers["origin"]) if "origin" in headers else ("Referer", headers.get("referer"))
        if origin is not None:
            parts = urlsplit(origin)
            own = parts.scheme in ("http", "https") and parts.netloc.lower() == headers.get("host", "").lower()
            if not own and f"{parts.scheme}://{parts.netloc}".lower() not in self.origins:
                raise Refused(
                    403,
                    f"refused: the request comes from another site ({source} {origin!r}), neither "
                    "this dashboard nor one of [web] cors_origins",
                )
        if needs_intent and INTENT_HEADER not in headers:
            raise Refused(
                403,
                f"refused: a request that changes something needs the header '{INTENT_HEADER}: 1' "
                "(the dashboard sends it; with curl add -H 'X-Robotd: 1'), so that no other "
                "web page can post a form to robotd",
            )

    async def bounded_body(self, headers: Headers, receive: Receive) -> Receive:
        """Read the body (at most ``max_body_bytes``) and hand back a ``receive`` that replays it."""
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            raise self.too_large(f"request body of {int(declared):,} bytes refused")
        messages: list[Message] = []
        size = 0
        while not messages or (messages[-1]["type"] == "http.request" and messages[-1].get("more_body")):
            messages.append(await receive())
            size += len(messages[-1].get("body", b""))
            if size > self.max_body_bytes:
                raise self.too_large(f"request body refused after {size:,} bytes")

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        return replay

    def too_large(self, what: str) -> Refused:
        return Refused(413, f"{what}: the limit is {self.max_body_bytes:,} bytes ([web] max_body_bytes)")


def _not_framed(send: Send) -> Send:
    """``send`` adding ``FRAMING_HEADERS`` to the response's headers (those it does not set itself)."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            present = {name.lower() for name, _ in message.get("headers", [])}
            added = [(name, value) for name, value in FRAMING_HEADERS if name not in present]
            message = {**message, "headers": [*message.get("headers", []), *added]}
        await send(message)

    return sending


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


async def _refuse(scope: Scope, receive: Receive, send: Send, refusal: Refused) -> None:
    if scope["type"] == "websocket":  # closing before the handshake is accepted answers 403
        await send({"type": "websocket.close", "code": 1008, "reason": str(refusal)[:120]})
        return
    await JSONResponse({"detail": str(refusal)}, status_code=refusal.status)(scope, receive, send)
