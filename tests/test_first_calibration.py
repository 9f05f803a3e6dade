"""Starting from nothing: a six-axis rig without its view config starts, refuses to scan until calibrated, is
calibrated from the dashboard (``GET/PUT /api/calibration``) and checked with a solved cube (``POST
/api/calibration/solved``); ``robotd check`` says what is missing and what fixes it."""

import json
import re
import tomllib
from functools import cache

import numpy as np
import pytest

from firmware_interface import SimulatedFirmware
from firmware_interface.flipspin_mechanism import FlipSpinMechanism
from firmware_interface.maestro.simulator import SimulatedMaestro
from robot import assemble
from robot.calibration_start import NotCalibrated, solved_verdict, starting_views, uncalibrated
from robot.calibration_store import CalibrationStore
from robot.camera import RenderedCamera
from robot.check import check
from robot.cli import main
from robot.config import Config
from robot.events import EventBus
from robot.history import History
from robot.rig import rig_from_config
from robot.run import Runner, RunSettings
from robot.scanner import ViewScanner
from robot_doubles import FLIP_SPIN, VirtualRig, store_daemon, wait_done
from test_robot_web import serving_client
from vision import default_views, render_views, view_config_from_dict
from vision.views import ViewsMissing, load_view_config

SOLVED = "".join(face * 9 for face in "URFDLB")


@cache
def solved_frames() -> dict[str, np.ndarray]:
    """The two corner cameras' frames of a solved 3x3 seated exactly, as the simulator's cameras give them."""
    return render_views(SOLVED, "corners", rng=np.random.default_rng(0), jitter=0.0)


def uncalibrated_daemon(tmp_path, turn_s=0.0):
    """A real rig's daemon (no simulation) whose two cameras look at a solved cube, turned by a virtual rig,
    and whose views file does not exist yet."""
    cameras = {name: RenderedCamera(name, lambda name=name: solved_frames()[name]) for name in ("ufr", "dlb")}
    scanner = ViewScanner(
        lambda: {name: camera.frame() for name, camera in cameras.items()},
        uncalibrated("the cameras are not calibrated yet: open the dashboard's Calibration tab"),
    )
    bus, history = EventBus(), History(tmp_path / "history.sqlite")
    rig = rig_from_config(Config({}).section("rig"))
    runner = Runner(scanner, VirtualRig(SOLVED, turn_s=turn_s), rig, history, bus, RunSettings())
    files = {"views": tmp_path / "views.toml", "calibration": tmp_path / "calibration.json"}
    store = CalibrationStore(scanner, cameras, files, busy=lambda: runner.busy)
    return store_daemon(runner, history, bus, rig, store)


# ---------------------------------------------------------------- the views file


def test_a_missing_views_file_is_its_own_error_and_other_read_errors_stay_as_they_were(tmp_path):
    with pytest.raises(ViewsMissing, match="views.toml does not exist yet: the cameras have not been calibrated"):
        load_view_config(tmp_path / "views.toml")
    (tmp_path / "views.toml").write_text("size = [")
    with pytest.raises(Exception, match="cannot read view config") as error:
        load_view_config(tmp_path / "views.toml")
    assert not isinstance(error.value, ViewsMissing)


def test_the_starting_layout_puts_three_faces_on_each_of_two_cameras_scaled_to_their_frames():
    views = starting_views({"left": (1280, 960), "right": (640, 480)})
    assert [(v.face, v.image) for v in views.views] == [
        ("U", "left"),
        ("R", "left"),
        ("F", "left"),
        ("D", "right"),
        ("L", "right"),
        ("B", "right"),
    ]
    rendered = default_views("corners", 3)
    assert np.allclose(views.views[0].corners, rendered.views[0].corners * 2, atol=0.1)
    assert np.allclose(views.views[3].corners, rendered.views[3].corners, atol=0.1)


def test_the_starting_layout_of_one_camera_holds_six_squares_inside_its_frame():
    views = starting_views({"top": (800, 600)})
    assert {v.image for v in views.views} == {"top"} and [v.face for v in views.views] == list("URFDLB")
    corners = np.array([v.corners for v in views.views])
    assert corners[..., 0].min() >= 0 and corners[..., 0].max() <= 800
    assert corners[..., 1].min() >= 0 and corners[..., 1].max() <= 600
    view_config_from_dict(views.to_json())  # a valid view config as it stands


def test_a_solved_scan_is_judged_per_face_naming_the_camera():
    views = default_views("corners", 3)
    assert solved_verdict(SOLVED, views)["solved"] is True
    off = SOLVED[:20] + "UU" + SOLVED[22:]  # two stickers of F read U
    verdict = solved_verdict(off, views)
    assert verdict["solved"] is False
    assert verdict["faces_off"] == [{"face": "F", "camera": "ufr", "stickers": 2, "of": 9}]
    assert "face F (camera ufr): 2 of 9 stickers read another colour" in verdict["message"]


# ---------------------------------------------------------------- the API round trip


def test_first_calibration_save_writes_the_views_file_and_a_solved_cube_confirms_it(tmp_path):
    daemon = uncalibrated_daemon(tmp_path)
    with serving_client(daemon) as client:
        run_id = client.post("/api/runs").json()["run_id"]
        wait_done(daemon)
        run = client.get(f"/api/runs/{run_id}").json()
        assert run["outcome"] == "error" and "Calibration tab" in run["error"]

        page = client.get("/api/calibration").json()
        assert page["config"]["views"] is None and page["editable"]["views"] is True
        assert set(page["views"]) == {"ufr", "dlb"} and page["views"]["ufr"]["faces"] == {}
        starting = page["starting"]
        assert [v["image"] for v in starting["view"]] == ["ufr"] * 3 + ["dlb"] * 3
        refused = client.post("/api/calibration/solved")
        assert refused.status_code == 400 and "no views are saved yet" in refused.json()["detail"]

        saved = client.put("/api/calibration", json={"views": starting})
        assert saved.status_code == 200, saved.text
        assert saved.json()["saved"][0]["file"] == str(tmp_path / "views.toml")
        written = view_config_from_dict(tomllib.loads((tmp_path / "views.toml").read_text()), "views.toml")
        assert [v.face for v in written.views] == list("URFDLB")

        verdict = client.post("/api/calibration/solved").json()
        assert verdict["solved"] is True and verdict["faces_off"] == [] and verdict["state"] == SOLVED
        assert client.get(f"/api/scan/overlay.png?scan={verdict['scan_id']}").status_code == 200


def test_a_face_placed_on_another_face_is_named_by_the_solved_check(tmp_path):
    daemon = uncalibrated_daemon(tmp_path)
    with serving_client(daemon) as client:
        views = client.get("/api/calibration").json()["starting"]
        by_face = {v["face"]: v for v in views["view"]}
        by_face["F"]["corners"] = by_face["U"]["corners"]  # F dragged onto the U face
        assert client.put("/api/calibration", json={"views": views}).status_code == 200
        verdict = client.post("/api/calibration/solved").json()
    assert verdict["solved"] is False and verdict["state"] is None
    assert [(f["face"], f["camera"]) for f in verdict["faces_off"]] == [("U", "ufr"), ("F", "ufr")]
    assert verdict["message"].startswith("the scan was refused: the colours of faces U and F look the same")
    assert verdict["message"].endswith("Stickers in doubt on face U (camera ufr); face F (camera ufr)")


def test_the_solved_check_waits_for_a_run_to_end(tmp_path):
    daemon = uncalibrated_daemon(tmp_path, turn_s=0.5)
    daemon.store.scanner.set_views(default_views("corners", 3))
    with serving_client(daemon) as client:
        assert client.post("/api/runs").status_code == 201
        reply = client.post("/api/calibration/solved")
        assert reply.status_code == 409 and reply.json()["detail"].startswith("a run is in progress")
        client.post("/api/stop")
        wait_done(daemon)


# ---------------------------------------------------------------- a real rig's daemon and robotd check


def rig_config(tmp_path, port: str) -> str:
    path = tmp_path / "robotd.toml"
    path.write_text(
        f'[robotd]\ndata_dir = "{tmp_path / "data"}"\n'
        f'[serial]\nport = "{port}"\n'
        f'[vision]\nviews = "{tmp_path / "data" / "views.toml"}"\n'
        f'[camera.ufr]\ndevice = "{tmp_path / "no-camera-0"}"\n'
        f'[camera.dlb]\ndevice = "{tmp_path / "no-camera-1"}"\n'
        "[web]\nport = 8099\n"
        '[solver]\nfallback = "none"\n'  # no two-phase worker to start
    )
    return str(path)


@pytest.fixture
def board():
    firmware = SimulatedFirmware("six-axis")
    yield firmware.start()
    firmware.stop()


def test_a_six_axis_rig_without_its_views_file_starts_and_refuses_to_scan_saying_where_to_calibrate(
    tmp_path, board, monkeypatch
):
    monkeypatch.setattr(assemble, "warm_up_solvers", lambda settings: None)  # start-up is tested, not the solver
    built = assemble.build(rig_config(tmp_path, board), sim=False, web=False)
    try:
        daemon = built.daemon
        assert daemon.mode == "rig" and daemon.calibration()["config"]["views"] is None
        with pytest.raises(NotCalibrated) as refused:
            daemon.runner.scanner.scan()
        message = str(refused.value)
        assert f"{tmp_path / 'data' / 'views.toml'} does not exist" in message
        assert "http://127.0.0.1:8099/#calibration" in message and "Calibration tab" in message
    finally:
        built.close()


def test_check_names_the_board_and_says_what_is_missing_with_its_fix(tmp_path, board, monkeypatch, capsys):
    monkeypatch.setenv("ROBOTD_MODEL_DIR", str(tmp_path / "no-models"))
    config = rig_config(tmp_path, board)
    result = check(config)
    assert result.board is not None and result.board["firmware"]
    fixes = {m.item: m.fix for m in result.missing}
    assert set(fixes) == {"views", "camera ufr", "camera dlb", "models"}
    assert "Calibration tab, http://127.0.0.1:8099/#calibration" in fixes["views"]
    assert "[camera.ufr] device" in fixes["camera ufr"] and "ROBOTD_MODEL_DIR" in fixes["models"]

    assert main(["check", "--config", config, "--json"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert report["board"]["firmware"] == result.board["firmware"]
    assert [m["item"] for m in report["missing"]] == [m.item for m in result.missing]
    assert len(report["problems"]) == len(result.problems)

    assert main(["check", "--config", config]) == 2
    out, err = capsys.readouterr()
    assert f"board on {board}:" in out
    assert re.search(rf"^  firmware +: {re.escape(result.board['firmware'])}$", out, re.M)
    assert "views.toml does not exist yet; to fix: start robotd" in err


def test_check_reports_a_board_that_does_not_answer_with_its_fix(tmp_path):
    result = check(rig_config(tmp_path, str(tmp_path / "no-board")))
    board = next(m for m in result.missing if m.item == "board")
    assert "/dev/serial/by-id/" in board.fix and "docs/firmware.md" in board.fix
    assert result.board is None


# ---------------------------------------------------------------- a flip/spin rig: the face under its camera


@pytest.fixture
def maestro():
    mechanism = FlipSpinMechanism(size=3)
    board = SimulatedMaestro(mechanism=mechanism, homes=mechanism.home_targets(), slew_us_per_ms=40.0)
    yield board.start()
    board.stop()


def flip_spin_config(tmp_path, port: str, top_face: str = "") -> str:
    path = tmp_path / "robotd.toml"
    path.write_text(
        f'[robotd]\ndata_dir = "{tmp_path / "data"}"\n{FLIP_SPIN}\n[serial]\nport = "{port}"\n'
        f'[vision]\n{top_face}\n[camera.top]\ndevice = "{tmp_path / "no-camera"}"\n'
        '[web]\nport = 8099\n[solver]\nfallback = "none"\n'
    )
    return str(path)


TOP_FACE = [[212.0, 132.0], [428.0, 132.0], [428.0, 348.0], [212.0, 348.0]]


def test_a_flip_spin_rig_starts_without_top_face_and_the_tab_saves_it(tmp_path, maestro, monkeypatch):
    monkeypatch.setattr(assemble, "warm_up_solvers", lambda settings: None)
    built = assemble.build(flip_spin_config(tmp_path, maestro), sim=False, web=False)
    saved = tmp_path / "data" / "top_face.json"
    try:
        daemon = built.daemon
        with pytest.raises(NotCalibrated, match=r"top_face\.json does not exist.*8099/#calibration.*face under"):
            daemon.runner.scanner.scan()
        with serving_client(daemon) as client:
            page = client.get("/api/calibration").json()
            top = page["top_face"]
            assert top["camera"] == "top" and top["corners"] is None and top["fixed"] is None
            assert top["file"] == str(saved) and len(top["starting"]) == 4
            assert page["config"]["views"] is None and page["editable"]["views"] is False
            twisted = [TOP_FACE[0], TOP_FACE[2], TOP_FACE[1], TOP_FACE[3]]
            reply = client.put("/api/calibration/top_face", json={"corners": twisted})
            assert reply.status_code == 400 and "no proper quadrilateral" in reply.json()["detail"]
            assert not saved.exists()
            reply = client.put("/api/calibration/top_face", json={"corners": TOP_FACE})
            assert reply.status_code == 200, reply.text
            assert reply.json()["top_face"]["corners"] == TOP_FACE and reply.json()["saved"][0]["file"] == str(saved)
            assert json.loads(saved.read_text()) == {"top_face": TOP_FACE}
            views = daemon.runner.scanner.views()  # applied: the six scan views follow from it
            assert sorted(v.face for v in views.views) == sorted("URFDLB")
            assert any(np.allclose(v.corners, np.array(TOP_FACE)[[0, 1, 2, 3]]) for v in views.views)
    finally:
        built.close()
    assert not any(m.item == "top_face" for m in check(flip_spin_config(tmp_path, maestro)).missing)


def test_check_of_a_flip_spin_rig_says_top_face_is_missing_and_where_to_set_it(tmp_path):
    result = check(flip_spin_config(tmp_path, str(tmp_path / "no-board")))
    top = next(m for m in result.missing if m.item == "top_face")
    assert "Calibration tab, http://127.0.0.1:8099/#calibration" in top.fix and "Measuring top_face" in top.fix
    assert not any("required for a flip/spin rig" in p for p in result.problems)


def test_a_top_face_set_in_the_config_is_shown_and_cannot_be_changed_here(tmp_path, maestro, monkeypatch):
    monkeypatch.setattr(assemble, "warm_up_solvers", lambda settings: None)
    config = flip_spin_config(tmp_path, maestro, f"top_face = {TOP_FACE}")
    built = assemble.build(config, sim=False, web=False)
    try:
        with serving_client(built.daemon) as client:
            top = client.get("/api/calibration").json()["top_face"]
            assert top["corners"] == TOP_FACE and top["fixed"] == "set by [vision] top_face in the config"
            reply = client.put("/api/calibration/top_face", json={"corners": TOP_FACE})
            assert reply.status_code == 400 and "change it there" in reply.json()["detail"]
    finally:
        built.close()
    assert not (tmp_path / "data" / "top_face.json").exists()


def test_a_rig_without_top_face_refuses_it_naming_why(tmp_path):
    with serving_client(uncalibrated_daemon(tmp_path)) as client:
        reply = client.put("/api/calibration/top_face", json={"corners": TOP_FACE})
    assert reply.status_code == 400 and "only a real flip/spin rig" in reply.json()["detail"]
