"""The calibration the dashboard edits: validated per field, saved atomically with bounded backups, applied at
once (``robot.calibration_store`` and ``GET/PUT /api/calibration``, ``POST /api/calibration/check``)."""

import json
import os
import stat
import tomllib
from pathlib import Path

import pytest

from robot.calibration_store import BACKUPS, calibration_at_start, field_of, save_atomically, views_text
from robot_doubles import calibrating_daemon, make_daemon, wait_done
from test_robot_web import dashboard, serving_client
from vision import default_views, view_config_from_dict

PALETTE = {
    "U": [235, 235, 230],
    "R": [200, 30, 40],
    "F": [30, 160, 70],
    "D": [240, 210, 20],
    "L": [245, 120, 10],
    "B": [30, 90, 210],
}


@pytest.fixture
def store_client(tmp_path):
    with serving_client(calibrating_daemon(tmp_path)) as client:
        yield client


def edited_views(client, face_index=0, corner=0, point=(300.0, 70.0)) -> dict:
    views = client.get("/api/calibration").json()["config"]["views"]
    views["view"][face_index]["corners"][corner] = list(point)
    return views


# ---------------------------------------------------------------- saving a file


def test_a_save_keeps_the_previous_file_as_a_backup_and_only_the_newest_few(tmp_path):
    path = tmp_path / "views.toml"
    assert save_atomically(path, "first\n") is None and path.read_text() == "first\n"
    os.chmod(path, 0o640)
    first = save_atomically(path, "save 0\n")
    assert first.read_text() == "first\n" and first.name.startswith("views.toml.") and first.suffix == ".bak"
    backups = [first, *(save_atomically(path, f"save {n}\n") for n in range(1, BACKUPS + 2))]
    assert path.read_text() == f"save {BACKUPS + 1}\n" and stat.S_IMODE(path.stat().st_mode) == 0o640
    kept = sorted(p.name for p in tmp_path.glob("views.toml.*.bak"))
    assert kept == sorted(b.name for b in backups[-BACKUPS:])  # the newest ones
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []


def test_a_failed_save_leaves_the_old_file_whole(tmp_path, monkeypatch):
    path = tmp_path / "calibration.json"
    path.write_text("old\n")

    def no_room(source, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", no_room)
    with pytest.raises(OSError):
        save_atomically(path, "new\n")
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []


def test_views_are_written_as_toml_that_reads_back_the_same():
    views = default_views("corners", 3)
    again = view_config_from_dict(tomllib.loads(views_text(views, Path("rig/views.toml"))), "views.toml")
    assert again.to_json() == views.to_json()
    assert json.loads(views_text(views, Path("rig/views.json"))) == views.to_json()


@pytest.mark.parametrize(
    "part, message, field",
    [
        ("views", "view config views view #2 (face R): 'corners' must be four [x, y] points", "views.view.1.corners"),
        (
            "views",
            "view config views view #3 (face F): the corners enclose 10 square pixels: too small",
            "views.view.2.corners",
        ),
        ("views", "view config views view #1 (face U): 'at' must name each corner of the face once", "views.view.0.at"),
        (
            "views",
            "view config views view #4: unknown key 'colour' (allowed: at, corners, face, image)",
            "views.view.3",
        ),
        ("views", "view config views: 'inner' must be a number from 0.1 to 0.9, got 2", "views.inner"),
        ("views", "view config views: no view for face D: all six faces are needed", "views"),
        ("calibration", "calibration: 'palette' must map each of U R F D L B to [r, g, b]", "calibration.palette"),
        ("calibration", "calibration: expected a JSON object", "calibration"),
    ],
)
def test_each_problem_is_tied_to_its_field(part, message, field):
    assert field_of(part, message) == field


def test_a_real_rig_finds_a_calibration_saved_without_one_in_the_config(tmp_path):
    assert calibration_at_start(None, tmp_path) is None
    (tmp_path / "calibration.json").write_text("{}")
    assert calibration_at_start(None, tmp_path) == tmp_path / "calibration.json"
    assert calibration_at_start("/etc/robotd/colours.json", tmp_path).as_posix() == "/etc/robotd/colours.json"


# ---------------------------------------------------------------- the API


def test_the_page_gets_the_editable_form_and_where_it_is_saved(store_client, tmp_path):
    page = store_client.get("/api/calibration").json()
    assert page["editable"] == {"views": True, "calibration": True}
    assert page["files"] == {"views": str(tmp_path / "views.toml"), "calibration": str(tmp_path / "calibration.json")}
    assert [v["face"] for v in page["config"]["views"]["view"]] == list("URFDLB")
    assert page["config"]["calibration"] is None and page["references"] is None
    assert page["views"]["ufr"]["width"] == 640


def test_a_check_says_what_is_wrong_per_field_and_changes_nothing(store_client, tmp_path):
    before = (tmp_path / "views.toml").read_text()
    views = edited_views(store_client, face_index=1, corner=2, point=(700.0, 20.0))
    views["inner"] = 0.05
    reply = store_client.post("/api/calibration/check", json={"views": views, "calibration": {"size": 3}})
    assert reply.status_code == 200
    body = reply.json()
    assert body["valid"] is False and body["preview"] is None
    assert [p["field"] for p in body["problems"]] == ["views.inner", "calibration.palette"]
    views["inner"] = 0.5
    body = store_client.post("/api/calibration/check", json={"views": views}).json()
    assert [p["field"] for p in body["problems"]] == ["views.view.1.corners"]
    assert "lies outside the 640x480 frame of camera 'ufr'" in body["problems"][0]["message"]
    assert (tmp_path / "views.toml").read_text() == before and list(tmp_path.glob("*.bak")) == []


def test_a_check_of_a_valid_change_previews_it(store_client, tmp_path):
    views = edited_views(store_client)
    body = store_client.post("/api/calibration/check", json={"views": views}).json()
    assert body["valid"] is True and body["problems"] == []
    assert body["preview"]["views"]["ufr"]["faces"]["U"][0] == [300.0, 70.0]
    assert body["files"] == {"views": str(tmp_path / "views.toml")}
    assert store_client.daemon.store.scanner.views().views[0].corners[0].tolist() != [300.0, 70.0]


def test_a_view_on_a_camera_the_rig_does_not_have_is_refused(store_client):
    views = edited_views(store_client)
    views["view"][3]["image"] = "top"
    body = store_client.post("/api/calibration/check", json={"views": views}).json()
    assert body["problems"] == [
        {
            "field": "views.view.3.image",
            "message": "view config views view #4 (face D): 'image' 'top' is no camera of this rig (cameras: ufr, dlb)",
        }
    ]


def test_a_save_writes_the_file_keeps_a_backup_and_applies_at_once(store_client, tmp_path):
    before = (tmp_path / "views.toml").read_text()
    views = edited_views(store_client)
    reply = store_client.put(
        "/api/calibration",
        json={"views": views, "calibration": {"size": 3, "palette": PALETTE, "position_gains": None}},
    )
    assert reply.status_code == 200, reply.text
    saved = {s["part"]: s for s in reply.json()["saved"]}
    assert saved["views"]["file"] == str(tmp_path / "views.toml")
    assert open(saved["views"]["backup"]).read() == before
    assert saved["calibration"]["backup"] is None  # there was no calibration file before
    written = view_config_from_dict(tomllib.loads((tmp_path / "views.toml").read_text()), "views.toml")
    assert written.views[0].corners[0].tolist() == [300.0, 70.0]
    assert json.loads((tmp_path / "calibration.json").read_text())["palette"]["R"] == PALETTE["R"]
    scanner = store_client.daemon.store.scanner  # applied: no restart
    assert scanner.views().views[0].corners[0].tolist() == [300.0, 70.0]
    assert scanner.calibration.palette[1].tolist() == PALETTE["R"]
    page = store_client.get("/api/calibration").json()
    assert page["views"]["ufr"]["faces"]["U"][0] == [300.0, 70.0] and page["references"]["R"] == PALETTE["R"]


def test_an_invalid_save_is_400_naming_the_field_and_writes_nothing(store_client, tmp_path):
    before = (tmp_path / "views.toml").read_text()
    views = edited_views(store_client, point=(-5.0, 70.0))
    reply = store_client.put("/api/calibration", json={"views": views})
    assert reply.status_code == 400 and reply.json()["detail"].startswith("views.view.0.corners: view config")
    assert (tmp_path / "views.toml").read_text() == before and list(tmp_path.glob("*.bak")) == []


def test_a_save_during_a_run_is_409(tmp_path):
    daemon = calibrating_daemon(tmp_path, turn_s=0.5)
    with dashboard(daemon) as client:
        views = edited_views(client)
        client.post("/api/runs", json={"seed": 3})
        reply = client.put("/api/calibration", json={"views": views})
        assert reply.status_code == 409 and reply.json()["detail"].startswith("a run is in progress")
        client.post("/api/stop")
        wait_done(daemon)
    daemon.close()


def test_a_flip_spin_rigs_views_cannot_be_changed_here_but_its_colours_can(tmp_path):
    daemon = calibrating_daemon(tmp_path, views_fixed="a flip/spin rig's views follow from [vision] top_face")
    with dashboard(daemon) as client:
        page = client.get("/api/calibration").json()
        assert page["editable"] == {"views": False, "calibration": True}
        body = client.post("/api/calibration/check", json={"views": page["config"]["views"]}).json()
        problem = body["problems"][0]
        assert problem["field"] == "views" and "follow from [vision] top_face" in problem["message"]
        calibration = {"size": 3, "palette": PALETTE, "position_gains": None}
        assert client.put("/api/calibration", json={"calibration": calibration}).status_code == 200
    daemon.close()


def test_a_rig_whose_calibration_cannot_change_refuses_the_check(tmp_path):
    daemon = make_daemon(tmp_path)
    with dashboard(daemon) as client:
        reply = client.post("/api/calibration/check", json={"views": {}})
    assert reply.status_code == 400 and reply.json()["detail"] == "this rig's calibration cannot be changed"
    daemon.close()
