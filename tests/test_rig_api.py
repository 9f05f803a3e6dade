"""Dashboard API: the rig actions between runs (home, motors on/off, reconnect, square) and their refusals."""

import threading

import pytest

from robot_doubles import KEY, acting_daemon, make_daemon, wait_done
from test_robot_web import LOCAL, NETWORK, dashboard, serving_client

ACTIONS = [
    ("/api/rig/home", None, "home"),
    ("/api/rig/motors", {"enabled": False}, "motors off"),
    ("/api/rig/motors", {"enabled": True}, "motors on"),
    ("/api/rig/reconnect", None, "reconnect"),
    ("/api/rig/square", None, "square faces"),
]


@pytest.fixture
def acting(tmp_path):
    with serving_client(acting_daemon(tmp_path)) as client:
        yield client


def test_the_status_lists_the_rig_actions_and_the_motors(acting):
    status = acting.get("/api/status").json()
    assert status["rig_actions"] == ["home", "motors", "reconnect", "square"] and status["motors_on"] is True


@pytest.mark.parametrize("path, body, action", ACTIONS)
def test_each_rig_action_is_done_and_said_in_words(acting, path, body, action):
    rig = acting.daemon.runner.motion
    with acting.websocket_connect("/ws") as socket:
        assert socket.receive_json()["kind"] == "snapshot"
        reply = acting.post(path, json=body)
        event = socket.receive_json()
    assert reply.status_code == 200, reply.text
    assert reply.json()["action"] == action and reply.json()["outcome"] == "done" and reply.json()["message"]
    assert rig.done == [action]
    assert event["kind"] == "rig" and event["run_id"] is None
    assert event["data"] == {
        "action": action,
        "outcome": "done",
        "message": reply.json()["message"],
        "seconds": reply.json()["seconds"],
    }
    assert acting.daemon.history.list_runs(10, 0, None) == []  # not a run


def test_motors_off_shows_in_the_status(acting):
    acting.post("/api/rig/motors", json={"enabled": False})
    assert acting.get("/api/status").json()["motors_on"] is False
    acting.post("/api/rig/motors", json={"enabled": True})
    assert acting.get("/api/status").json()["motors_on"] is True


@pytest.mark.parametrize(
    "body, words",
    [
        ({}, "enabled: Field required"),
        ({"enabled": "false"}, "enabled: Input should be"),
        ({"enabled": 0}, "enabled: Input should be"),
        ({"enabled": True, "speed": 1}, "speed: Extra inputs"),
    ],
)
def test_a_bad_motors_body_is_422_naming_the_field(acting, body, words):
    reply = acting.post("/api/rig/motors", json=body)
    assert reply.status_code == 422 and reply.json()["detail"].startswith(words), reply.json()
    assert acting.daemon.runner.motion.done == []


def test_what_the_controller_cannot_do_is_400_saying_why(tmp_path):
    daemon = acting_daemon(tmp_path, cannot={"home": "a Marlin rig has no home switches (robotd never sends G28)"})
    with dashboard(daemon) as client:
        assert client.get("/api/status").json()["rig_actions"] == ["motors", "reconnect", "square"]
        reply = client.post("/api/rig/home")
        assert reply.status_code == 400
        assert reply.json()["detail"] == "home: a Marlin rig has no home switches (robotd never sends G28)"
    assert daemon.runner.motion.done == []
    daemon.close()


def test_a_rig_without_actions_refuses_each(tmp_path):
    daemon = make_daemon(tmp_path)
    with dashboard(daemon) as client:
        for path, body, action in ACTIONS:
            reply = client.post(path, json=body)
            assert reply.status_code == 400 and reply.json()["detail"] == f"{action}: this rig's motion cannot do that"
        assert client.get("/api/status").json()["rig_actions"] == []
    daemon.close()


@pytest.mark.parametrize("path, body, action", ACTIONS)
def test_a_rig_action_during_a_run_is_409(tmp_path, path, body, action):
    daemon = acting_daemon(tmp_path, turn_s=0.5)
    with dashboard(daemon) as client:
        run_id = client.post("/api/runs", json={"seed": 3}).json()["run_id"]
        reply = client.post(path, json=body)
        assert reply.status_code == 409
        assert reply.json()["detail"].startswith(f"a run is in progress (run {run_id}, ")
        client.post("/api/stop")
        wait_done(daemon)
    assert daemon.runner.motion.done == []
    daemon.close()


def test_stop_halts_a_rig_action_and_another_waits_for_it(tmp_path):
    daemon = acting_daemon(tmp_path, turn_s=30)
    with dashboard(daemon) as client:
        replies = {}
        thread = threading.Thread(target=lambda: replies.update(home=client.post("/api/rig/home")))
        thread.start()
        while daemon.runner.jogging is None and thread.is_alive():
            thread.join(0.01)
        busy = client.post("/api/rig/reconnect")
        assert busy.status_code == 409
        assert busy.json()["detail"] == "the rig action home is in progress: wait until it has ended"
        assert client.post("/api/runs", json={}).status_code == 409
        stop = client.post("/api/stop").json()
        thread.join(10)
        assert stop["jogging"] == "home"
        assert replies["home"].status_code == 400 and replies["home"].json()["detail"].startswith("stopped: ")
        assert daemon.runner.jogging is None and daemon.runner.motion.done == []
        daemon.runner.motion.turn_s = 0.0
        for path, body, _ in reversed(ACTIONS):  # the recovery after a stop is not refused for it
            assert client.post(path, json=body).status_code == 200
        assert daemon.runner.motion.done == [action for _, _, action in reversed(ACTIONS)]
    daemon.close()


@pytest.mark.parametrize("path, body, action", ACTIONS)
def test_rig_actions_need_the_key_when_bound_to_the_network(tmp_path, path, body, action):
    daemon = acting_daemon(tmp_path)
    with dashboard(daemon, NETWORK) as client:
        assert client.post(path, json=body).status_code == 401
        assert client.post(path, json=body, headers={"X-Api-Key": "wrong-key-here"}).status_code == 401
        assert daemon.runner.motion.done == []
        assert client.post(path, json=body, headers={"X-Api-Key": KEY}).status_code == 200
    daemon.close()


@pytest.mark.parametrize("path, body, action", ACTIONS)
def test_rig_actions_need_the_dashboards_header(tmp_path, path, body, action):
    from fastapi.testclient import TestClient

    from robot.web import create_app

    daemon = acting_daemon(tmp_path)
    with TestClient(create_app(daemon, LOCAL)) as client:
        reply = client.post(path, json=body)
        assert reply.status_code == 403 and "needs the header 'X-Robotd: 1'" in reply.json()["detail"]
        assert client.get(path).status_code == 405
    assert daemon.runner.motion.done == []
    daemon.close()


def test_the_openapi_description_has_the_rig_actions_with_their_refusals(acting):
    paths = acting.get("/openapi.json").json()["paths"]
    for path in ("/api/rig/home", "/api/rig/motors", "/api/rig/reconnect", "/api/rig/square", "/api/calibration/check"):
        responses = paths[path]["post"]["responses"]
        assert {"200", "400", "403", "413", "422"} <= set(responses), path
    assert {"401", "409"} <= set(paths["/api/rig/home"]["post"]["responses"])
    assert "409" in paths["/api/calibration"]["put"]["responses"]
