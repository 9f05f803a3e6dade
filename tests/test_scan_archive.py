"""Scans kept for people: the last ones in memory, refused ones on disk (bounded), and what a run reports of them."""

import json
import logging

import cv2
import numpy as np
import pytest

import solver
from doubtful_scans import grey_edges
from robot.run import ScanRefused
from robot.scan_archive import LAST_OVERLAY, RefusedScans, ScanMemory, scan_report
from robot.scanner import ViewScanner
from robot_doubles import scanning_daemon, wait_done
from vision import default_views, load_view_config, render_views
from vision.cli import main as vision_main

STATE = solver.scramble(3, seed=12)["state"]


@pytest.fixture(scope="module")
def frames():
    views = default_views("corners", 3)
    clear = render_views(STATE, "corners", "daylight", np.random.default_rng(1))
    refused = grey_edges({name: image.copy() for name, image in clear.items()}, views)
    return views, clear, refused


def scanner_of(images, views, memory=None):
    return ViewScanner(lambda: images, lambda: views, memory=memory)


def test_the_scanner_remembers_its_last_scans(frames):
    views, clear, refused = frames
    memory = ScanMemory(keep=2)
    result = scanner_of(clear, views, memory).scan()
    assert result.state == STATE and result.scan_id == 1 and result.doubtful == []
    with pytest.raises(ScanRefused) as error:
        scanner_of(refused, views, memory).scan()
    assert error.value.scan_id == 2 and len(error.value.stickers) >= 2
    assert "cannot read the cube for sure" in str(error.value)
    record = memory.get()
    assert record.id == 2 and record.error == str(error.value) and record.doubtful == error.value.stickers
    assert record.reading is not None and set(record.frames) == {"ufr", "dlb"}
    scanner_of(clear, views, memory).scan()
    assert memory.get(1) is None and memory.get(2).id == 2 and memory.get().id == 3  # only the last two
    assert cv2.imdecode(np.frombuffer(record.overlay_png(), np.uint8), cv2.IMREAD_COLOR).shape[2] == 3


def test_a_refused_scan_is_kept_with_frames_overlay_and_its_story(tmp_path, frames, capsys):
    views, _, refused = frames
    memory = ScanMemory()
    with pytest.raises(ScanRefused) as error:
        scanner_of(refused, views, memory).scan()
    folder = RefusedScans(tmp_path / "refused-scans", 20, memory).keep(7, error.value.scan_id)
    assert folder.parent == tmp_path / "refused-scans" and folder.name.endswith("-run7")
    assert {p.name for p in folder.iterdir()} == {
        "frame-ufr.png",
        "frame-dlb.png",
        "overlay.png",
        "views.json",
        "scan.json",
    }
    assert np.array_equal(cv2.imread(str(folder / "frame-ufr.png")), refused["ufr"])  # the frame as taken
    story = json.loads((folder / "scan.json").read_text())
    assert story["run_id"] == 7 and story["error"] == str(error.value)
    assert story["doubtful"] == list(error.value.stickers)
    assert len(story["reading"]["state"]) == 54 and len(story["reading"]["confidence"]) == 54
    assert story["robotd_version"] and story["time"] and story["views"]["size"] == 3
    assert story["frames"] == {"ufr": "frame-ufr.png", "dlb": "frame-dlb.png"}
    assert load_view_config(folder / "views.json").size == 3
    # the folder replays as it is, with the command it says
    argv = story["replay"].split()[3:]
    assert argv[0] == "scan"
    argv = [
        a.replace("views.json", str(folder / "views.json"))
        .replace("=frame", f"={folder}/frame")
        .replace("overlay-again.png", str(tmp_path / "again.png"))
        for a in argv
    ]
    assert vision_main(argv) == 2
    assert "cannot read the cube for sure" in capsys.readouterr().err and (tmp_path / "again.png").exists()


def test_only_the_newest_refused_scans_are_kept(tmp_path, frames):
    views, _, refused = frames
    memory = ScanMemory()
    archive = RefusedScans(tmp_path / "refused-scans", 3, memory)
    (tmp_path / "refused-scans").mkdir()
    (tmp_path / "refused-scans" / "my-notes").mkdir()  # not robotd's: left alone
    kept = []
    for run_id in range(1, 6):
        with pytest.raises(ScanRefused) as error:
            scanner_of(refused, views, memory).scan()
        kept.append(archive.keep(run_id, error.value.scan_id))
    assert archive.folders() == kept[-3:]
    assert sorted(p.name for p in (tmp_path / "refused-scans").iterdir()) == sorted(
        [p.name for p in kept[-3:]] + ["my-notes"]
    )


def test_nothing_is_kept_when_told_so_or_when_the_scan_is_gone(tmp_path, frames, caplog):
    views, _, refused = frames
    memory = ScanMemory()
    with pytest.raises(ScanRefused) as error:
        scanner_of(refused, views, memory).scan()
    assert RefusedScans(tmp_path / "none", 0, memory).keep(1, error.value.scan_id) is None
    assert not (tmp_path / "none").exists()
    assert RefusedScans(tmp_path / "a", 5, memory).keep(1, 999) is None
    assert RefusedScans(tmp_path / "a", 5, memory).keep(1, None) is None
    (tmp_path / "file").write_text("in the way")
    with caplog.at_level(logging.WARNING, logger="robotd.scans"):
        assert RefusedScans(tmp_path / "file" / "sub", 5, memory).keep(1, error.value.scan_id) is None
    assert "could not keep the refused scan of run 1" in caplog.text


def test_a_run_refused_on_every_attempt_says_where_its_scan_is(tmp_path):
    daemon = scanning_daemon(tmp_path, refuse=True, keep=2, retries=1)
    try:
        run_id = daemon.start_run(puzzle=3, moves=0)
        wait_done(daemon)
        run = daemon.history.get_run(run_id)
    finally:
        daemon.close()
    folder = next((tmp_path / "refused-scans").iterdir())
    assert run["outcome"] == "error"
    assert run["error"].startswith("scan failed after 2 attempts: cannot read the cube for sure")
    assert run["error"].endswith(f"; the refused scan is kept in {folder}")
    failed = [e["data"] for e in run["events"] if e["kind"] == "scan_failed"]
    assert [f["kept"] for f in failed] == [None, str(folder)]  # only the last attempt is kept
    assert all(f["stickers"] and f["scan_id"] for f in failed)
    report = scan_report(run["events"], daemon.scans, tmp_path)
    assert report == {
        "scan_doubts": failed[-1]["stickers"],
        "scan_kept": str(folder),
        "scan_overlay": str(folder / "overlay.png"),
    }


def test_a_scan_that_went_through_in_doubt_gets_its_overlay_written(tmp_path, frames):
    views, clear, _ = frames
    memory = ScanMemory()
    result = scanner_of(clear, views, memory).scan()
    events = [{"kind": "scan", "data": {"state": result.state, "doubtful": ["F3"], "scan_id": result.scan_id}}]
    report = scan_report(events, memory, tmp_path)
    assert report == {"scan_doubts": ["F3"], "scan_kept": None, "scan_overlay": str(tmp_path / LAST_OVERLAY)}
    assert cv2.imread(report["scan_overlay"]) is not None
    events[0]["data"]["doubtful"] = []
    assert scan_report(events, memory, tmp_path) == {}  # a clear scan: nothing to say


def test_a_keeper_that_fails_does_not_hide_the_scan_error(tmp_path):
    daemon = scanning_daemon(tmp_path, refuse=True)

    def broken(run_id, scan_id):
        raise RuntimeError("disk on fire")

    daemon.runner.keep_refused = broken
    try:
        run = daemon.runner.run(lambda: daemon.simulation.prepare(3, None, "", None))
    finally:
        daemon.close()
    assert run["outcome"] == "error" and "cannot read the cube for sure" in run["error"]
    assert "kept in" not in run["error"]


def test_a_vision_failure_is_kept_like_a_refused_scan(tmp_path, frames, monkeypatch):
    views, clear, _ = frames

    def broken(images, config, calibration=None, exposures=None):
        raise ValueError("Probabilities contain NaN")

    monkeypatch.setattr("robot.scanner.scan_views", broken)
    memory = ScanMemory()
    with pytest.raises(ScanRefused) as error:
        scanner_of(clear, views, memory).scan()
    assert str(error.value) == "the vision failed on these frames: ValueError: Probabilities contain NaN"
    folder = RefusedScans(tmp_path, 5, memory).keep(1, error.value.scan_id)
    story = json.loads((folder / "scan.json").read_text())
    assert story["error"] == str(error.value) and story["reading"] is None and (folder / "overlay.png").exists()
