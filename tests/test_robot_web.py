"""Dashboard API: runs, history, validation, auth, WebSocket events and camera frames."""

import asyncio
import contextlib
import re
import socket
from dataclasses import replace

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

import solver
from robot.assemble import listen
from robot.config import Config
from robot.errors import ConfigError
from robot.motion import parse_jog
from robot.web import STATIC_DIR, WebSettings, create_app, web_settings
from robot.web_events import Broadcaster
from robot.web_guard import INTENT_HEADER, RequestGuard
from robot_doubles import KEY, make_daemon, scanning_daemon, wait_done
from solver.puzzles.cube.notation import MOVE_NAMES

LOCAL = WebSettings(allowed_hosts=("testserver",))  # TestClient's requests say Host: testserver
NETWORK = replace(LOCAL, host="0.0.0.0", api_key=KEY)


def dashboard(daemon, settings: WebSettings = LOCAL) -> TestClient:
    """A client of the app that sends the header the dashboard's own requests carry."""
    return TestClient(create_app(daemon, settings), headers={INTENT_HEADER: "1"})


@contextlib.contextmanager
def serving_client(daemon, settings: WebSettings = LOCAL):
    """``dashboard(daemon)`` with the daemon at hand as ``client.daemon``; the daemon is closed after."""
    with dashboard(daemon, settings) as client:
        client.daemon = daemon
        yield client
    daemon.close()


@pytest.fixture
def client(tmp_path):
    with serving_client(make_daemon(tmp_path)) as client:
        yield client


def jogging_daemon(tmp_path, turn_s=0.0):
    """The test daemon, its virtual rig taught to jog one face turn (as ``LinkMotion.jog`` checks them)."""
    daemon = make_daemon(tmp_path, turn_s=turn_s)
    rig = daemon.runner.motion

    def jog(command):
        rig.state = solver.apply(rig.state, MOVE_NAMES[parse_jog(command)])

    rig.jog, rig.jog_commands = jog, lambda: ["R", "R'", "R2"]
    return daemon


@pytest.fixture
def jog_client(tmp_path):
    with serving_client(jogging_daemon(tmp_path)) as client:
        yield client


def test_start_a_run_and_read_it_back(client):
    assert client.get("/api/status").json()["phase"] == "idle"
    reply = client.post("/api/runs", json={"puzzle": 2, "seed": 4})
    assert reply.status_code == 201
    run_id = reply.json()["run_id"]
    wait_done(client.daemon)
    run = client.get(f"/api/runs/{run_id}").json()
    assert run["outcome"] == "done" and run["events"][-1]["data"]["phase"] == "done"
    assert [r["id"] for r in client.get("/api/runs", params={"outcome": "done"}).json()["runs"]] == [run_id]


def test_bad_input_gets_readable_4xx(client):
    reply = client.get("/api/runs", params={"limit": 0})
    assert reply.status_code == 422 and reply.json()["detail"].startswith("limit:")
    assert client.get("/api/runs", params={"outcome": "finished"}).status_code == 422
    reply = client.get("/api/runs/999")
    assert reply.status_code == 404 and reply.json()["detail"] == "no run with id 999"
    reply = client.post("/api/runs", json={"puzzle": 4})
    assert reply.status_code == 422 and "puzzle" in reply.json()["detail"]
    assert client.get("/stream/nope").status_code == 404


def test_camera_frame_is_a_jpeg(client):
    reply = client.get("/api/cameras/still/frame.jpg")
    assert reply.status_code == 200 and reply.content[:2] == b"\xff\xd8"
    assert client.get("/api/cameras").json()["cameras"][0]["name"] == "still"


def test_websocket_gets_snapshot_then_every_event_in_order(client):
    with client.websocket_connect("/ws") as socket:
        snapshot = socket.receive_json()
        assert snapshot["kind"] == "snapshot" and snapshot["status"]["phase"] == "idle"
        client.post("/api/runs", json={"puzzle": 2, "seed": 1})
        events = []
        while not (events and events[-1]["kind"] == "phase" and events[-1]["data"]["phase"] == "done"):
            events.append(socket.receive_json())
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    assert {"scan", "solution", "move"} <= {e["kind"] for e in events}


def test_auth_when_bound_to_the_network(tmp_path):
    daemon = make_daemon(tmp_path, turn_s=0.05)
    with dashboard(daemon, NETWORK) as client:
        assert client.post("/api/runs", json={}).status_code == 401
        assert client.post("/api/runs", json={}, headers={"X-Api-Key": "wrong-key-here"}).status_code == 401
        assert client.post("/api/runs", json={"seed": 2}, headers={"X-Api-Key": KEY}).status_code == 201
        assert client.post("/api/runs", json={}, headers={"Authorization": f"Bearer {KEY}"}).status_code == 409
        assert client.post("/api/stop").status_code == 200  # stop never needs the key
        assert client.get("/api/status").json()["auth_required"] is True
        wait_done(daemon)
    daemon.close()


def test_network_binding_without_a_key_is_a_config_error():
    with pytest.raises(ConfigError, match=r"\[web\] api_key: is required when host is '0.0.0.0'"):
        web_settings(Config({"web": {"host": "0.0.0.0"}}).section("web"))
    assert web_settings(Config({"web": {"host": "::1"}}).section("web")).requires_key is False


def test_a_slow_client_is_dropped_and_the_others_get_everything():
    async def scenario():
        broadcaster = Broadcaster(asyncio.get_running_loop(), queue_size=8)
        slow, _ = broadcaster.attach()
        fast, _ = broadcaster.attach()
        received = []
        for seq in range(1, 51):
            broadcaster.on_event({"seq": seq, "kind": "move", "data": {}})
            await asyncio.sleep(0)
            while not fast.queue.empty():
                received.append(fast.queue.get_nowait()["seq"])
        return slow, fast, received, broadcaster

    slow, fast, received, broadcaster = asyncio.run(scenario())
    assert slow.too_slow and slow not in broadcaster.clients
    assert not fast.too_slow and received == list(range(1, 51))


def test_jog_one_face_turn(jog_client):
    rig = jog_client.daemon.runner.motion
    before = rig.state
    assert jog_client.get("/api/status").json()["jog"] == ["R", "R'", "R2"]
    with jog_client.websocket_connect("/ws") as socket:
        assert socket.receive_json()["kind"] == "snapshot"
        reply = jog_client.post("/api/jog", json={"command": "R'"})
        assert reply.status_code == 200
        assert reply.json()["command"] == "R'" and reply.json()["outcome"] == "done"
        event = socket.receive_json()
    assert event["kind"] == "jog" and event["run_id"] is None and event["data"]["command"] == "R'"
    assert rig.state == solver.apply(before, "R'")


def test_bad_jogs_get_readable_4xx(jog_client):
    reply = jog_client.post("/api/jog", json={"command": "R U"})
    assert reply.status_code == 400 and "'R U': 2 moves; give one face turn" in reply.json()["detail"]
    for body, words in (
        ({}, "command: Field required"),
        ({"command": "R", "speed": 2}, "speed: Extra inputs"),
        ({"command": 3}, "command:"),
        ({"command": ""}, "command:"),
    ):
        reply = jog_client.post("/api/jog", json=body)
        assert reply.status_code == 422 and words in reply.json()["detail"], body
    assert jog_client.post("/api/jog", content=b"R", headers={"Content-Type": "text/plain"}).status_code == 422


def test_a_jog_during_a_run_is_409(tmp_path):
    daemon = jogging_daemon(tmp_path, turn_s=0.5)
    with dashboard(daemon) as client:
        run_id = client.post("/api/runs", json={"seed": 3}).json()["run_id"]
        reply = client.post("/api/jog", json={"command": "R"})
        assert reply.status_code == 409
        assert reply.json()["detail"].startswith(f"a run is in progress (run {run_id}, ")
        assert reply.json()["detail"].endswith("stop it first")
        client.post("/api/stop")
        wait_done(daemon)
    daemon.close()


def test_jog_needs_the_key_when_bound_to_the_network(tmp_path):
    daemon = jogging_daemon(tmp_path)
    body = {"command": "R"}
    with dashboard(daemon, NETWORK) as client:
        assert client.post("/api/jog", json=body).status_code == 401
        assert client.post("/api/jog", json=body, headers={"X-Api-Key": "wrong-key-here"}).status_code == 401
        assert client.post("/api/jog", json=body, headers={"X-Api-Key": KEY}).status_code == 200
        assert client.post("/api/jog", json=body, headers={"Authorization": f"Bearer {KEY}"}).status_code == 200
    daemon.close()


def test_a_rig_that_cannot_jog_lists_no_commands(client):
    assert client.get("/api/status").json()["jog"] == []
    reply = client.post("/api/jog", json={"command": "R"})
    assert reply.status_code == 400 and reply.json()["detail"] == "this rig's motion cannot jog"


def test_the_latest_scan_as_an_overlay_png(tmp_path):
    daemon = scanning_daemon(tmp_path, refuse=True)
    with dashboard(daemon) as client:
        reply = client.get("/api/scan/overlay.png")
        assert reply.status_code == 404 and reply.json()["detail"].startswith("no scan yet")
        run_id = client.post("/api/runs", json={"puzzle": 3, "moves": 0}).json()["run_id"]
        wait_done(daemon)
        failed = [e for e in client.get(f"/api/runs/{run_id}").json()["events"] if e["kind"] == "scan_failed"][-1]
        assert failed["data"]["stickers"] and "kept" in failed["data"]
        for url in ("/api/scan/overlay.png", f"/api/scan/overlay.png?scan={failed['data']['scan_id']}"):
            reply = client.get(url)
            assert reply.status_code == 200 and reply.headers["content-type"] == "image/png", url
            assert reply.content[:8] == b"\x89PNG\r\n\x1a\n"
        reply = client.get("/api/scan/overlay.png?scan=99")
        assert reply.status_code == 404 and "scan 99 is no longer in memory" in reply.json()["detail"]
        assert client.get("/api/scan/overlay.png?scan=0").status_code == 422
        assert client.get("/api/scan/overlay.png?scan=x").status_code == 422
    daemon.close()


def test_no_overlay_from_a_rig_that_keeps_no_scans(client):
    reply = client.get("/api/scan/overlay.png")
    assert reply.status_code == 404 and reply.json()["detail"] == "this rig's scanner keeps no scans to show"


# ---------------------------------------------------------------- request checks: origin, Host, size, input

CHANGES = [
    ("post", "/api/runs", {"seed": 1}),
    ("post", "/api/jog", {"command": "R"}),
    ("post", "/api/stop", None),
    ("put", "/api/calibration", {"views": {}}),
]


@pytest.mark.parametrize("settings", [LOCAL, NETWORK], ids=["loopback", "network"])
@pytest.mark.parametrize("method, path, body", CHANGES)
def test_a_change_without_the_dashboards_header_is_403(tmp_path, settings, method, path, body):
    daemon = make_daemon(tmp_path)
    with TestClient(create_app(daemon, settings), headers={"X-Api-Key": KEY}) as client:
        reply = client.request(method.upper(), path, json=body)
        assert reply.status_code == 403 and "needs the header 'X-Robotd: 1'" in reply.json()["detail"]
        # what a cross-origin page's auto-submitted empty form sends
        form = client.post(
            path,
            content=b"",
            headers={"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"},
        )
        assert form.status_code == 403 and "comes from another site" in form.json()["detail"]
        assert daemon.history.list_runs(10, 0, None) == [] and daemon.runner.phase == "idle"
    daemon.close()


@pytest.mark.parametrize(
    "header, value",
    [
        ("Origin", "http://evil.example"),
        ("Origin", "null"),
        ("Origin", "http://testserver.evil.example"),
        ("Referer", "http://evil.example/robot.html"),
    ],
)
def test_a_change_from_another_site_is_403_even_with_the_header(client, header, value):
    reply = client.post("/api/runs", json={"seed": 1}, headers={header: value})
    assert reply.status_code == 403
    assert reply.json()["detail"] == (
        f"refused: the request comes from another site ({header} {value!r}), "
        "neither this dashboard nor one of [web] cors_origins"
    )
    assert client.daemon.runner.phase == "idle"


def test_a_change_from_the_dashboards_own_origin_or_a_cors_origin_passes(tmp_path):
    daemon = make_daemon(tmp_path)
    settings = web_settings(
        Config({"web": {"cors_origins": ["http://Laptop.local:3000/"], "allowed_hosts": ["testserver"]}}).section("web")
    )
    assert settings.cors_origins == ("http://laptop.local:3000",)
    with dashboard(daemon, settings) as client:
        for headers in (
            {"Origin": "http://testserver"},
            {"Referer": "http://testserver/#history"},
            {"Origin": "http://laptop.local:3000"},
        ):
            assert client.post("/api/stop", headers=headers).status_code == 200, headers
        preflight = client.options(
            "/api/runs",
            headers={
                "Origin": "http://laptop.local:3000",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "x-robotd",
            },
        )
        assert preflight.status_code == 200
        refused = client.options(
            "/api/runs",
            headers={
                "Origin": "http://evil.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "x-robotd",
            },
        )
        assert refused.status_code == 400 and "access-control-allow-origin" not in refused.headers
    daemon.close()


def test_the_event_stream_refuses_another_sites_page(client):
    with pytest.raises(WebSocketDisconnect) as refused:
        with client.websocket_connect("/ws", headers={"Origin": "http://evil.example"}):
            pass
    assert refused.value.code == 1008 and "another site" in refused.value.reason
    with client.websocket_connect("/ws", headers={"Origin": "http://testserver"}) as socket:
        assert socket.receive_json()["kind"] == "snapshot"


@pytest.mark.parametrize(
    "host",
    [
        "localhost:8080",
        "LOCALHOST",
        "127.0.0.1:8080",
        "[::1]:8080",
        "[::1]",
        "[0:0:0:0:0:0:0:1]:80",
        "robot.local:8080",
        "192.168.1.20",
    ],
)
def test_the_hosts_robotd_answers_to(tmp_path, host):
    daemon = make_daemon(tmp_path)
    config = {"host": "192.168.1.20", "api_key": KEY, "allowed_hosts": ["Robot.local"]}
    with dashboard(daemon, web_settings(Config({"web": config}).section("web"))) as client:
        assert client.get("/api/status", headers={"Host": host}).status_code == 200
    daemon.close()


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:8080",
        "localhost.evil.example",
        "127.0.0.1.nip.io",
        "[::1",
        "[robot.local]",
        "localhost:port",
        "",
    ],
)
def test_any_other_host_is_400(client, host):
    for method in ("GET", "POST"):
        reply = client.request(method, "/api/status" if method == "GET" else "/api/stop", headers={"Host": host})
        assert reply.status_code == 400, (method, host)
        assert reply.json()["detail"] == (
            f"Host {host!r} is not a name robotd answers to (it answers to "
            "127.0.0.1, ::1, localhost, testserver and any IP address; "
            "add other names to [web] allowed_hosts)"
        )
    assert client.daemon.runner.phase == "idle"


@pytest.mark.parametrize(
    "key, value, words",
    [
        ("allowed_hosts", ["http://robot.local"], "'http://robot.local' is not a host name or address"),
        ("allowed_hosts", ["robot.local:8080"], "'robot.local:8080' is not a host name or address"),
        ("allowed_hosts", [3], "3 is not a host name or address"),
        ("allowed_hosts", "robot.local", "must be a list"),
        ("cors_origins", ["laptop.local"], "'laptop.local' is not an origin"),
        ("cors_origins", ["http://laptop.local/app"], "'http://laptop.local/app' is not an origin"),
        ("max_body_bytes", 100, "must be at least 1024"),
        ("max_body_bytes", "64k", "must be a whole number"),
        ("behind_proxy", "yes", "must be true or false"),
        ("api_docs", 1, "must be true or false"),
    ],
)
def test_bad_security_options_are_config_errors(key, value, words):
    with pytest.raises(ConfigError, match=rf"\[web\] {key}: .*{re.escape(words)}"):
        web_settings(Config({"web": {key: value}}).section("web"))


def test_allowed_hosts_take_addresses_in_any_spelling():
    settings = web_settings(Config({"web": {"allowed_hosts": ["[::1]", "FE80::1", "Robot.Local"]}}).section("web"))
    assert settings.allowed_hosts == ("::1", "fe80::1", "robot.local")


def test_a_large_body_is_413_before_the_app_reads_it(client):
    big = b"{" + b" " * 4_000_000 + b"}"
    reply = client.put("/api/calibration", content=big, headers={"Content-Type": "application/json"})
    assert reply.status_code == 413
    assert reply.json()["detail"] == (
        "request body of 4,000,002 bytes refused: the limit is 65,536 bytes ([web] max_body_bytes)"
    )
    chunks = (b" " * 100_000 for _ in range(40))  # no Content-Length: sent chunked
    reply = client.put("/api/calibration", content=chunks, headers={"Content-Type": "application/json"})
    assert reply.status_code == 413 and "([web] max_body_bytes)" in reply.json()["detail"]
    small = client.put("/api/calibration", json={"views": {}})  # under the limit: the app answers
    assert small.status_code == 400 and small.json()["detail"] == "this rig's calibration cannot be changed"


def test_a_streamed_body_is_cut_off_at_the_limit():
    """At the ASGI level: the guard stops pulling a body without Content-Length once it passes the limit."""
    pulled, sent = [], []

    async def receive():
        pulled.append(10_000)
        return {"type": "http.request", "body": b"x" * 10_000, "more_body": True}  # never ends

    async def send(message):
        sent.append(message)

    async def app(scope, receive, send):
        raise AssertionError("the app got the request")

    guard = RequestGuard(app, hosts=["localhost"], origins=[], max_body_bytes=64 * 1024)
    scope = {
        "type": "http",
        "method": "PUT",
        "path": "/api/calibration",
        "headers": [(b"host", b"localhost"), (b"x-robotd", b"1"), (b"transfer-encoding", b"chunked")],
    }
    asyncio.run(guard(scope, receive, send))
    assert sent[0]["status"] == 413 and sum(pulled) <= 64 * 1024 + 10_000
    assert b"request body refused after 70,000 bytes" in sent[1]["body"]


def test_run_requests_are_checked_before_a_run_starts(client):
    for body, words in (
        ({"scramble": "R U X"}, "scramble: move 3 ('X' at character 5) is not a face turn"),
        ({"light": "disco"}, "light: Input should be 'daylight', 'tungsten'"),
        ({"seed": 1, "speed": 9}, "speed: Extra inputs are not permitted"),
        ({"seed": 2**64}, "seed: Input should be less than or equal to"),
        ({"moves": -1}, "moves: Input should be greater than or equal to 0"),
    ):
        reply = client.post("/api/runs", json=body)
        assert reply.status_code == 422 and reply.json()["detail"].startswith(words), (body, reply.json())
    assert client.daemon.history.list_runs(10, 0, None) == [] and client.daemon.runner.phase == "idle"
    assert client.post("/api/runs", json={"scramble": "R U2 F'", "light": "tungsten"}).status_code == 201
    wait_done(client.daemon)


@pytest.mark.parametrize(
    "method, path, body",
    [
        ("GET", "/api/runs/" + "9" * 20, None),
        ("GET", "/api/runs/-1", None),
        ("GET", "/api/runs/1e3", None),
        ("GET", "/api/runs?offset=" + "9" * 20, None),
        ("GET", "/api/runs?limit=" + "9" * 20, None),
        ("GET", "/api/scan/overlay.png?scan=" + "9" * 30, None),
        ("GET", "/api/cameras/%00/frame.jpg", None),
        ("GET", "/stream/" + "x" * 2000, None),
        ("POST", "/api/runs", b"[]"),
        ("POST", "/api/runs", b"{"),
        ("POST", "/api/runs", b'{"puzzle": true}'),
        ("POST", "/api/runs", b'{"scramble": "\\u0000"}'),
        ("POST", "/api/runs", b'{"scramble": "' + b"R " * 300 + b'"}'),
        ("POST", "/api/jog", b'{"command": null}'),
        ("PUT", "/api/calibration", b'"x"'),
        ("PUT", "/api/calibration", b"\xff\xfe"),
        ("DELETE", "/api/runs/1", None),
        ("PATCH", "/api/status", b"{}"),
    ],
)
def test_no_input_gets_a_500(client, method, path, body):
    reply = client.request(method, path, content=body, headers={"Content-Type": "application/json"})
    assert 400 <= reply.status_code < 500 and isinstance(reply.json()["detail"], str), reply.text


def test_behind_a_proxy_the_key_is_required_on_loopback(tmp_path):
    with pytest.raises(ConfigError, match=r"\[web\] api_key: is required when behind_proxy is true"):
        web_settings(Config({"web": {"behind_proxy": True}}).section("web"))
    settings = web_settings(
        Config({"web": {"behind_proxy": True, "api_key": KEY, "allowed_hosts": ["testserver"]}}).section("web")
    )
    assert settings.host == "127.0.0.1" and settings.requires_key
    daemon = make_daemon(tmp_path)
    with dashboard(daemon, settings) as client:
        assert client.get("/api/status").json()["auth_required"] is True
        assert client.post("/api/runs", json={"seed": 1}).status_code == 401
        assert client.post("/api/runs", json={"seed": 1}, headers={"X-Api-Key": KEY}).status_code == 201
        wait_done(daemon)
    daemon.close()


def test_the_api_docs_are_off_unless_configured(tmp_path):
    daemon = make_daemon(tmp_path)
    with dashboard(daemon) as client:
        assert client.get("/docs").status_code == 404 and client.get("/redoc").status_code == 404
        assert client.get("/openapi.json").json()["info"]["title"] == "robotd"  # served locally: no CDN
    with dashboard(daemon, replace(LOCAL, api_docs=True)) as client:
        assert client.get("/docs").status_code == 200 and client.get("/redoc").status_code == 200
    daemon.close()


def test_every_request_of_the_page_carries_the_header():
    scripts = {path.name: path.read_text() for path in STATIC_DIR.glob("*.js")}
    assert [name for name, text in scripts.items() if "fetch(" in text] == ["api.js"]
    assert '"X-Robotd": "1"' in scripts["api.js"]


# ---------------------------------------------------------------- found by fuzzing (tests/test_web_fuzz.py)


@pytest.mark.parametrize(
    "body, words",
    [
        ({"seed": "5"}, "seed: Input should be a valid integer"),
        ({"moves": True}, "moves: Input should be a valid integer"),
        ({"seed": 4, "puzzle": "2"}, "puzzle: Input should be 2 or 3"),
    ],
)
def test_run_options_of_another_json_type_are_422_not_converted(client, body, words):
    """``{"moves": true}`` used to start a run scrambled by one random move."""
    reply = client.post("/api/runs", json=body)
    assert reply.status_code == 422 and reply.json()["detail"].startswith(words), reply.json()
    assert client.daemon.runner.phase == "idle" and client.daemon.history.list_runs(10, 0, None) == []


def test_a_calibration_update_with_an_unknown_field_is_422_naming_it(client):
    reply = client.put("/api/calibration", json={"views": {}, "colours": {}})
    assert reply.status_code == 422 and reply.json()["detail"] == "colours: Extra inputs are not permitted"
    reply = client.put("/api/calibration", json={"views": "corners"})
    assert reply.status_code == 422 and reply.json()["detail"].startswith("views: Input should be a valid dictionary")


@pytest.mark.parametrize(
    "method, path, allow",
    [
        ("GET", "/api/stop", "POST"),
        ("GET", "/api/jog", "POST"),
        ("DELETE", "/api/runs/1", "GET"),
        ("PUT", "/api/status", "GET"),
        ("POST", "/api/calibration", "GET, PUT"),
    ],
)
def test_a_method_an_api_path_does_not_take_is_405_with_allow(client, method, path, allow):
    """Not the static page's 404, which said that the path does not exist."""
    reply = client.request(method, path)
    assert reply.status_code == 405 and reply.headers["allow"] == allow
    assert reply.json()["detail"].startswith(path.replace("/1", "/{run_id}") + " takes ")
    assert client.get("/api/nope").status_code == 404 and client.get("/").status_code == 200


def test_the_openapi_description_declares_every_refusal_with_its_body(client):
    spec = client.get("/openapi.json").json()
    problem = {"$ref": "#/components/schemas/Problem"}
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            replies = operation["responses"]
            assert "400" in replies, (method, path)  # every request can be refused for its Host
            assert method == "get" or {"403", "413"} <= set(replies), (method, path)
            for code in (code for code in replies if code >= "400"):
                assert replies[code]["content"]["application/json"]["schema"] == problem, (method, path, code)
    images = {
        path: list(spec["paths"][path]["get"]["responses"]["200"]["content"])
        for path in ("/api/cameras/{name}/frame.jpg", "/api/scan/overlay.png", "/stream/{name}")
    }
    assert images == {
        "/api/cameras/{name}/frame.jpg": ["image/jpeg"],
        "/api/scan/overlay.png": ["image/png"],
        "/stream/{name}": ["multipart/x-mixed-replace"],
    }


def test_dashboard_connections_send_without_waiting_for_an_ack():
    """A reply goes out in two writes (headers, body): with Nagle's algorithm on, each reply on a kept-alive
    connection waited for the client's delayed ACK, 40 ms a request."""

    async def accepted_nodelay() -> int:
        accepted = asyncio.get_running_loop().create_future()

        def on_connection(reader, writer):
            accepted.set_result(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connection, sock=listen("127.0.0.1", 0))
        _, writer = await asyncio.open_connection(*server.sockets[0].getsockname()[:2])
        nodelay = await accepted
        writer.close()
        server.close()
        await server.wait_closed()
        return nodelay

    assert asyncio.run(accepted_nodelay()) != 0
