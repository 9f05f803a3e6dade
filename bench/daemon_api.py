"""A ``robotd --sim`` process driven through its API, as the benches that start one use it."""

from __future__ import annotations

import json
import socket
import urllib.request

from robot.summary import STEP_ORDER


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(url: str, body: dict | None = None) -> dict:
    """GET ``url``, or POST ``body`` as JSON with the intent header every change needs."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", "X-Robotd": "1"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.loads(reply.read())


def busy(base: str) -> bool:
    """True while the daemon at ``base`` is in a run (scanning to verifying)."""
    return http(f"{base}/api/status")["phase"] in STEP_ORDER
