"""The Calibration tab before the first calibration, in a real browser: the starting layout over both cameras,
Save and apply writes the views file, and the solved-cube check confirms it (``tests/test_dashboard_page.py``
has the browser and server fixtures; this skips as they do without playwright or Chromium)."""

import json

from page_checks import CONTRAST, drag_by
from robot import assemble
from robot.web import WebSettings
from test_dashboard_page import Server, page, serve  # noqa: F401 - fixtures
from test_first_calibration import SOLVED, flip_spin_config, maestro, uncalibrated_daemon  # noqa: F401
from test_robotd import free_port


def test_first_calibration_from_the_tab_saves_the_views_and_a_solved_cube_confirms_them(serve, page, tmp_path):  # noqa: F811
    server = serve(make=uncalibrated_daemon)
    views_file = server.daemon.store.files["views"]
    page.goto(server.url + "#calibration")
    page.wait_for_function("() => document.getElementById('calibration-note').textContent.startsWith('First')")
    assert "no views are saved yet, so robotd cannot scan" in page.inner_text("#calibration-note")
    for camera, faces in (("ufr", "URF"), ("dlb", "DLB")):
        quads = page.locator(f'.calibration-view[data-camera="{camera}"] g.quad')
        assert quads.evaluate_all("groups => groups.map(g => g.dataset.face).join('')") == faces
    assert page.is_visible("#size-field") and page.input_value("#views-size") == "3"
    assert page.is_disabled("#calibration-solved")  # nothing saved to check yet
    assert page.inner_text("#calibration-result") == "" and not views_file.exists()
    page.screenshot(path=str(tmp_path / "calibration-first.png"), full_page=True)

    page.click("#calibration-save")
    page.wait_for_function("() => document.getElementById('calibration-result').textContent.startsWith('Saved')")
    assert views_file.exists() and page.is_hidden("#size-field")
    assert not page.inner_text("#calibration-note").startswith("First")

    assert page.is_enabled("#calibration-solved")
    page.click("#calibration-solved")
    page.wait_for_function("() => document.getElementById('calibration-solved-result').dataset.solved")
    assert page.inner_text("#calibration-solved-result").startswith("Confirmed: the solved cube reads as solved")
    page.wait_for_function("() => document.getElementById('calibration-solved-overlay').naturalWidth > 0")
    assert page.evaluate(CONTRAST)["failing"] == []
    assert page.problems == []
    page.screenshot(path=str(tmp_path / "calibration-confirmed.png"), full_page=True)
    for name in ("calibration-first.png", "calibration-confirmed.png"):
        print(f"screenshot: {tmp_path / name}")
    assert server.daemon.store.scanner.scan().state == SOLVED  # the saved views are the ones scans use


def test_a_flip_spin_rigs_face_under_the_camera_is_dragged_and_saved_from_the_tab(page, tmp_path, maestro, monkeypatch):  # noqa: F811
    monkeypatch.setattr(assemble, "warm_up_solvers", lambda settings: None)
    built = assemble.build(flip_spin_config(tmp_path, maestro), sim=False, web=False)
    server = Server(built.daemon, WebSettings(port=free_port()))
    saved = tmp_path / "data" / "top_face.json"
    try:
        page.goto(server.url + "#calibration")
        page.wait_for_function("() => document.getElementById('calibration-note').textContent.startsWith('First')")
        assert "back-left, back-right, front-right, front-left" in page.inner_text("#calibration-note")
        figure = page.locator('.calibration-view.top-face[data-camera="top"]')
        handle = figure.locator('g.quad[data-face="top"] circle.quad-corner').nth(0)
        start = [float(handle.get_attribute(axis)) for axis in ("cx", "cy")]
        drag_by(page, handle, -30, -20)
        dragged = [float(handle.get_attribute(axis)) for axis in ("cx", "cy")]
        assert dragged[0] < start[0] and dragged[1] < start[1]
        assert page.inner_text("#calibration-result") == "Changed: not saved yet."
        page.click("#calibration-save")
        page.wait_for_function("() => document.getElementById('calibration-result').textContent.startsWith('Saved')")
        assert f"top_face to {saved}" in page.inner_text("#calibration-result")
        assert json.loads(saved.read_text())["top_face"][0] == dragged
        assert page.inner_text("#calibration-note").startswith("Drag the corners of the face under the camera")
        assert page.is_enabled("#calibration-solved")  # the six scan views exist now
        page.screenshot(path=str(tmp_path / "calibration-flip-spin.png"), full_page=True)
        print(f"screenshot: {tmp_path / 'calibration-flip-spin.png'}")
        assert page.problems == []
    finally:
        server.stop()
        built.close()
