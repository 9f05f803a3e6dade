"""Dashboard API: runs, history, validation, auth, WebSocket events and camera frames."""

import asyncio
import time

import pytest
from fastapi.testclient import TestClient

import solver
from robot.config import Config
from robot.errors import ConfigError
from robot.motion import parse_jog
from robot.web import Broadcaster, WebSettings, create_app, web_settings
from solver.notation import MOVE_NAMES

from robot_doubles import KEY, make_daemon, scanning_daemon, wait_done


@pytest.fixture
def client(tmp_path):
    daemon = make_daemon(tmp_path)
    with TestClient(create_app(daemon, WebSettings())) as client:
        client.daemon = daemon
        yield client
    daemon.close()


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
    daemon = jogging_daemon(tmp_path)
    with TestClient(create_app(daemon, WebSettings())) as client:
        client.daemon = daemon
        yield client
    daemon.close()


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
    reply = client.post("/api/runs", json={"scramble": "R U X"})
    wait_done(client.daemon)
    run = client.get(f"/api/runs/{reply.json()['run_id']}").json()
    assert run["outcome"] == "error" and "'X'" in run["error"]
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
    settings = WebSettings(host="0.0.0.0", api_key=KEY)
    with TestClient(create_app(daemon, settings)) as client:
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
    for body, words in (({}, "command: Field required"), ({"command": "R", "speed": 2}, "speed: Extra inputs"),
                        ({"command": 3}, "command:"), ({"command": ""}, "command:")):
        reply = jog_client.post("/api/jog", json=body)
        assert reply.status_code == 422 and words in reply.json()["detail"], body
    assert jog_client.post("/api/jog", content=b"R", headers={"Content-Type": "text/plain"}).status_code == 422


def test_a_jog_during_a_run_is_409(tmp_path):
    daemon = jogging_daemon(tmp_path, turn_s=0.5)
    with TestClient(create_app(daemon, WebSettings())) as client:
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
    with TestClient(create_app(daemon, WebSettings(host="0.0.0.0", api_key=KEY))) as client:
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
    with TestClient(create_app(daemon, WebSettings())) as client:
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
