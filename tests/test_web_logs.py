"""robotd's log for the dashboard: a bounded ring of records, read with ``GET /api/logs?after=SEQ``."""

import contextlib
import logging

import pytest
from fastapi.testclient import TestClient

from robot.web import WebSettings, create_app
from robot.web_logs import LogRing
from robot_doubles import make_daemon


@contextlib.contextmanager
def logger_with(ring: LogRing, name: str = "robotd.test"):
    """A logger that sends its records (INFO and up) to ``ring`` only, for the length of the block."""
    log = logging.getLogger(name)
    log.addHandler(ring)
    log.setLevel(logging.INFO)
    log.propagate = False
    try:
        yield log
    finally:
        log.removeHandler(ring)
        log.propagate = True


def test_the_ring_keeps_the_newest_records_and_says_how_many_were_missed():
    ring = LogRing(capacity=5)
    with logger_with(ring) as log:
        for i in range(1, 9):
            log.info("line %d", i)
    page = ring.since(0, 200)
    assert [line["message"] for line in page["lines"]] == [f"line {i}" for i in range(4, 9)]
    assert [line["seq"] for line in page["lines"]] == [4, 5, 6, 7, 8] and page["last_seq"] == 8
    assert ring.since(2, 200)["missed"] == 1  # line 3 fell out of the ring before it was asked for
    assert ring.since(6, 200) == {"lines": page["lines"][-2:], "last_seq": 8, "missed": 0}
    assert ring.since(8, 200) == {"lines": [], "last_seq": 8, "missed": 0}
    newest = ring.since(3, 2)  # a limit keeps the newest, the rest counted as missed
    assert [line["seq"] for line in newest["lines"]] == [7, 8] and newest["missed"] == 3


def test_a_record_keeps_its_level_logger_and_error_and_a_bad_format_does_not_raise():
    ring = LogRing()
    with logger_with(ring, "firmware_interface.robotd.link") as log:
        try:
            raise ConnectionError("port gone")
        except ConnectionError:
            log.exception("link lost on %s", "/dev/ttyACM0")
        log.warning("%d moves", "seven")  # a broken call somewhere must not break the ring
    first, second = ring.since(0, 10)["lines"]
    assert (first["level"], first["logger"]) == ("ERROR", "firmware_interface.robotd.link")
    assert first["message"] == "link lost on /dev/ttyACM0 — ConnectionError: port gone"
    assert second["level"] == "WARNING" and second["message"].startswith("'%d moves' (could not be formatted")


def test_the_web_servers_access_lines_are_left_out():
    ring = LogRing()
    with logger_with(ring, "uvicorn.access") as access:
        access.info('127.0.0.1 - "GET /api/logs HTTP/1.1" 200')
    assert ring.since(0, 10)["lines"] == []


@pytest.fixture
def client(tmp_path):
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.INFO)  # as [robotd] log_level sets it
    daemon = make_daemon(tmp_path)
    with TestClient(create_app(daemon, WebSettings(allowed_hosts=("testserver",)))) as client:
        yield client
    daemon.close()
    root.setLevel(level)


def test_api_logs_follows_the_daemons_log_while_the_app_is_served(client):
    logging.getLogger("robotd").warning("calibration <b>saved</b> to %s", "/var/lib/robotd/views.toml")
    page = client.get("/api/logs").json()
    mine = [line for line in page["lines"] if line["logger"] == "robotd"]
    assert mine[-1]["message"] == "calibration <b>saved</b> to /var/lib/robotd/views.toml"
    assert mine[-1]["level"] == "WARNING"
    after = page["last_seq"]
    logging.getLogger("robotd.history").info("pruned 3 runs")
    newer = client.get(f"/api/logs?after={after}").json()
    assert newer["lines"] and all(line["seq"] > after for line in newer["lines"]) and newer["missed"] == 0
    assert "pruned 3 runs" in [line["message"] for line in newer["lines"]]


def test_the_ring_is_taken_off_the_root_logger_when_the_app_stops(tmp_path):
    daemon = make_daemon(tmp_path)
    before = list(logging.getLogger().handlers)
    with TestClient(create_app(daemon, WebSettings(allowed_hosts=("testserver",)))):
        assert [h for h in logging.getLogger().handlers if isinstance(h, LogRing)]
    assert logging.getLogger().handlers == before
    daemon.close()


@pytest.mark.parametrize(
    ("query", "detail"),
    [
        ("after=-1", "after: Input should be greater than or equal to 0"),
        ("limit=0", "limit: Input should be greater than or equal to 1"),
        ("after=x", "after: Input should be a valid integer, unable to parse string as an integer"),
    ],
)
def test_a_bad_log_query_is_a_422(client, query, detail):
    reply = client.get(f"/api/logs?{query}")
    assert reply.status_code == 422 and reply.json() == {"detail": detail}
