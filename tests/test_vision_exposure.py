"""Exposure bracketing: a view whose stickers clip, or that is far too dark, is taken again and read right."""

from __future__ import annotations

import tomllib
from typing import Any

import numpy as np
import pytest

from robot import camera as camera_module
from robot.camera import CaptureCamera, RenderedCamera, capture_settings
from robot.config import Config
from robot.scanner import ViewScanner, camera_retake
from solver.puzzles.cube.cubie import CubieCube, apply_moves_cubie, to_facelets
from solver.puzzles.cube.notation import parse_moves
from vision import ScanError, default_views, render_views, sample_views, scan_views
from vision.exposure import at_one_exposure, bracket

STATE = to_facelets(apply_moves_cubie(CubieCube.solved(3), parse_moves("R U F' L2 D B R' U2 F D'")))
CREAM = {"D": (0.80, 0.78, 0.62)}  # a cream yellow: overexposed, it clips to white's level
VIEWS = default_views("corners", 3)


def rendered_cameras(exposure: dict[str, float]) -> dict[str, RenderedCamera]:
    """The corner rig's two simulated cameras, each at its own exposure, with exposure control."""

    def draw(name: str, factor: float) -> np.ndarray:
        rng = np.random.default_rng(4)  # the same scene and noise at every exposure
        return render_views(STATE, "corners", "daylight", rng, exposure=exposure[name] * factor, stickers=CREAM)[name]

    return {
        name: RenderedCamera(name, lambda name=name: draw(name, 1.0), lambda k, name=name: draw(name, k))
        for name in exposure
    }


def scanner_for(cameras: dict[str, RenderedCamera], retake: bool = True) -> ViewScanner:
    return ViewScanner(
        lambda: {name: c.frame() for name, c in cameras.items()},
        lambda: VIEWS,
        retake=camera_retake(cameras) if retake else None,
    )


def test_clipped_white_and_cream_yellow_are_read_right_after_a_darker_retake():
    cameras = rendered_cameras({"ufr": 3.0, "dlb": 3.0})
    first = {name: c.frame() for name, c in cameras.items()}
    rgb = sample_views(first, VIEWS)
    clipped = rgb.min(axis=1) >= 245
    whites, creams = [np.array([c == face for c in STATE]) for face in "UD"]
    assert clipped[whites].all() and clipped[creams].sum() >= 6  # white and cream yellow at the ceiling
    with pytest.raises(ScanError):
        scan_views(first, VIEWS)  # as taken, white and cream yellow cannot be told apart
    result = scanner_for(cameras).scan()
    assert result.state == STATE and min(result.confidence) > 0.9
    assert {r["image"] for r in result.retakes if r["kept"] and r["why"] == "clipped"} == {"ufr", "dlb"}
    assert all(r["exposure"] < 1 for r in result.retakes)


def test_a_view_far_darker_than_the_rest_is_taken_again_brighter():
    cameras = rendered_cameras({"ufr": 1.0, "dlb": 0.12})
    taken = bracket({name: c.frame() for name, c in cameras.items()}, VIEWS, camera_retake(cameras))
    assert [(r["image"], r["why"], r["kept"]) for r in taken.retakes] == [("dlb", "dark", True)]
    assert taken.exposures["ufr"] == 1.0 and taken.exposures["dlb"] > 4
    assert scan_views(taken.images, VIEWS, None, taken.exposures).state == STATE


def test_a_scan_that_needs_no_retake_takes_none_and_a_camera_without_control_keeps_its_frame():
    cameras = rendered_cameras({"ufr": 1.0, "dlb": 1.0})
    assert scanner_for(cameras).scan().retakes == []
    fixed = {name: RenderedCamera(name, c.frame) for name, c in rendered_cameras({"ufr": 3.0, "dlb": 3.0}).items()}
    taken = bracket({name: c.frame() for name, c in fixed.items()}, VIEWS, camera_retake(fixed))
    assert taken.exposures == {"ufr": 1.0, "dlb": 1.0}
    assert all(not r["kept"] for r in taken.retakes) and len(taken.retakes) == 2


def test_colours_of_frames_at_different_exposures_are_brought_to_the_lowest():
    rgb = np.full((54, 3), 200.0)
    out = at_one_exposure(rgb, VIEWS, {"ufr": 0.5, "dlb": 1.0})
    for k, view in enumerate(VIEWS.views):
        block = out[k * 9 : (k + 1) * 9]
        if view.image == "ufr":
            assert np.allclose(block, 200.0)  # taken at the lowest exposure: as it is
        else:  # half the linear light of sRGB 200
            assert np.allclose(block, 147.0, atol=1.0)


class ExposureSource:
    """A camera source with a settable exposure: frames are as bright as the exposure."""

    flush_frames = 2

    def __init__(self, settings=None, exposure_locks: bool = True):
        self.exposure, self.locks, self.calls = 100.0, exposure_locks, []

    def read(self) -> np.ndarray:
        return np.full((8, 8, 3), min(255, int(self.exposure)), np.uint8)

    def current(self, names) -> dict[str, Any]:
        return {"exposure": self.exposure if self.locks else None}

    def release(self, names) -> dict[str, str]:
        return {}

    def fix(self, values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        self.calls.append(dict(values))
        if "exposure" in values and self.locks:
            self.exposure = float(values["exposure"])
            return {"exposure": self.exposure}, {}
        return {}, {name: "refused" for name in values}

    def close(self) -> None:
        pass


@pytest.mark.parametrize("locks", [True, False])
def test_a_real_camera_retakes_at_a_multiple_of_its_locked_exposure_and_restores_it(monkeypatch, locks):
    source = ExposureSource(exposure_locks=locks)
    monkeypatch.setattr(camera_module, "_open_source", lambda settings: source)
    text = '[camera.cam]\ndevice = "/dev/video0"\nwarmup_frames = 0\nsettle_frames = 1\n'
    camera = CaptureCamera(capture_settings(Config(tomllib.loads(text)).section("camera.cam"), "cam"))
    assert camera.frame()[0, 0, 0] == 100
    darker = camera.frame_at(0.5)
    if not locks:  # the automatic holds the exposure: nothing to bracket with
        assert darker is None
        return
    assert darker is not None and darker[0, 0, 0] == 50
    assert source.calls[-2:] == [{"exposure": 50.0}, {"exposure": 100.0}]
    assert camera.frame()[0, 0, 0] == 100
