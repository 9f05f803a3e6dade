"""The dashboard's server (robot/web_server.py): a shutdown does not wait for the camera streams left open."""

import http.client
import threading

import pytest
import uvicorn
from fastapi.testclient import TestClient

from robot.web import WebSettings, create_app
from robot.web_cameras import end_streams
from robot.web_server import dashboard_server
from robot_doubles import make_daemon
from test_robotd import free_port

# Far longer than the guards below: a server that waited for its open streams to finish would fail them.
GRACE_S = 120


@pytest.fixture
def served(tmp_path):
    """The dashboard of a test daemon served in a thread on a free port; yields (server, port, its thread)."""
    daemon = make_daemon(tmp_path, two_phase=False)
    port = free_port()
    app = create_app(daemon, WebSettings(port=port))
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=GRACE_S)
    server = dashboard_server(config, app)
    thread = threading.Thread(target=server.run, name="dashboard-shutdown-test", daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive(), "uvicorn did not start"
        thread.join(0.02)
    yield server, port, thread
    server.should_exit = True
    thread.join(GRACE_S)
    daemon.close()


def open_stream(port: int) -> http.client.HTTPResponse:
    """GET the test camera's stream and read its first frame's part header."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", "/stream/still")
    reply = connection.getresponse()
    assert reply.status == 200 and reply.getheader("content-type").startswith("multipart/x-mixed-replace")
    assert reply.readline() == b"--frame\r\n"
    return reply


def test_shutdown_ends_the_open_camera_streams_cleanly(served):
    server, port, thread = served
    streams = [open_stream(port), open_stream(port)]
    server.should_exit = True
    thread.join(30)
    assert not thread.is_alive(), "the server waited for its open camera streams"
    for reply in streams:
        rest = reply.read()  # the chunked body ends properly: no IncompleteRead from a cut connection
        assert rest.endswith(b"\r\n") and reply.isclosed()


def test_a_stream_asked_for_once_the_streams_ended_is_empty(tmp_path):
    daemon = make_daemon(tmp_path, two_phase=False)
    app = create_app(daemon, WebSettings(allowed_hosts=("testserver",)))
    end_streams(app)
    with TestClient(app) as client:
        reply = client.get("/stream/still")  # the whole body: it would never come from a stream still open
    daemon.close()
    assert reply.status_code == 200 and reply.content == b""
