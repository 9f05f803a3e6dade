"""``python -m vision``: classify, scan, render, calibrate; errors exit 2 with one line."""

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from doubtful_scans import refused_images
from solver import scramble
from vision.cli import main
from vision.lighting import sticker_colours

ROOT = Path(__file__).resolve().parent.parent


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def state():
    return scramble(3, seed=12)["state"]


def test_classify_prints_the_state_and_json(tmp_path, capsys, state):
    rgb = sticker_colours(state, "tungsten", np.random.default_rng(1))
    path = tmp_path / "scan.json"
    path.write_text(json.dumps(np.round(rgb).tolist()))
    code, out, _ = run(capsys, "classify", "--rgb", str(path))
    assert code == 0 and out.strip() == state
    code, out, _ = run(capsys, "classify", "--rgb", str(path), "--json")
    data = json.loads(out)
    assert data["state"] == state and len(data["confidence"]) == 54 and 0 < data["min_confidence"] <= 1


@pytest.mark.parametrize("size", [2, 3])
def test_classify_reads_stickers_numbered_face_by_face_in_u_l_f_r_b_d_order(tmp_path, capsys, size):
    # rubiks-color-resolver's layout: keys "1".."54", faces U L F R B D, each in net reading order.
    state = scramble(size, seed=7)["state"]
    rgb = np.round(sticker_colours(state, "daylight", np.random.default_rng(2))).tolist()
    n = size * size
    blocks = {face: rgb["URFDLB".index(face) * n :][:n] for face in "URFDLB"}
    numbered = [colour for face in "ULFRBD" for colour in blocks[face]]
    path = tmp_path / "numbered.json"
    path.write_text(json.dumps({str(i + 1): colour for i, colour in enumerate(numbered)}))
    code, out, _ = run(capsys, "classify", "--rgb", str(path))
    assert code == 0 and out.strip() == state


def test_a_numbered_sticker_object_with_a_key_missing_is_named(tmp_path, capsys):
    path = tmp_path / "gap.json"
    path.write_text(json.dumps({str(i): [10, 20, 30] for i in [*range(1, 30), *range(31, 56)]}))
    code, _, err = run(capsys, "classify", "--rgb", str(path))
    assert code == 2 and "lacks key '30'" in err and str(path) in err


def test_classify_errors_exit_2(tmp_path, capsys):
    path = tmp_path / "short.json"
    path.write_text(json.dumps([[1, 2, 3]] * 10))
    code, _, err = run(capsys, "classify", "--rgb", str(path))
    assert code == 2 and err.startswith("error: ") and "54 (3x3x3) or 24 (2x2x2)" in err
    code, _, err = run(capsys, "classify", "--rgb", str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read sticker colours" in err


def test_render_then_scan_photos(tmp_path, capsys, state):
    out = tmp_path / "face.png"
    code, printed, _ = run(
        capsys, "render", "--state", state, "--view", "phone", "--light", "led", "-o", str(out), "--seed", "3"
    )
    assert code == 0 and len(printed.split()) == 6
    faces = [f"{f}={tmp_path / f'face_{f}.png'}" for f in "URFDLB"]
    code, printed, _ = run(capsys, "scan", "--faces", *faces)
    assert code == 0 and printed.strip() == state


def test_render_one_image_and_scan_a_rig_with_its_config(tmp_path, capsys, state):
    views = tmp_path / "rig.json"
    code, _, _ = run(
        capsys,
        "render",
        "--state",
        state,
        "--view",
        "corners",
        "--light",
        "daylight",
        "-o",
        str(tmp_path / "cam.png"),
        "--seed",
        "1",
        "--views-out",
        str(views),
    )
    assert code == 0 and views.exists()
    code, printed, _ = run(
        capsys,
        "scan",
        "--views",
        str(views),
        "--image",
        f"ufr={tmp_path / 'cam_ufr.png'}",
        "--image",
        f"dlb={tmp_path / 'cam_dlb.png'}",
        "--json",
    )
    assert code == 0 and json.loads(printed)["state"] == state
    code, _, _ = run(capsys, "render", "--state", state, "--view", "flip:F", "-o", str(tmp_path / "f.png"))
    assert code == 0 and (tmp_path / "f.png").exists()


def test_calibrate_then_use_it(tmp_path, capsys):
    solved = "U" * 9 + "R" * 9 + "F" * 9 + "D" * 9 + "L" * 9 + "B" * 9
    rng = np.random.default_rng(4)
    (tmp_path / "solved.json").write_text(json.dumps(sticker_colours(solved, "tungsten", rng).tolist()))
    cal = tmp_path / "cal.json"
    code, _, _ = run(capsys, "calibrate", "--rgb", str(tmp_path / "solved.json"), "-o", str(cal))
    assert code == 0 and json.loads(cal.read_text())["size"] == 3
    state = scramble(3, seed=4)["state"]
    (tmp_path / "scan.json").write_text(json.dumps(sticker_colours(state, "tungsten", rng).tolist()))
    code, printed, _ = run(capsys, "classify", "--rgb", str(tmp_path / "scan.json"), "--calibration", str(cal))
    assert code == 0 and printed.strip() == state


def test_scan_errors_exit_2(tmp_path, capsys):
    code, _, err = run(capsys, "scan", "--faces", "U=nothing.png")
    assert code == 2 and "cannot read image 'nothing.png'" in err
    code, _, err = run(capsys, "scan", "--faces", "U")
    assert code == 2 and "NAME=FILE" in err
    code, _, err = run(capsys, "scan")
    assert code == 2 and "nothing to scan" in err
    code, _, err = run(capsys, "render", "--state", "UUU", "--view", "corners", "-o", str(tmp_path / "x.png"))
    assert code == 2 and "cannot render state" in err


def test_module_entry_point_exit_code(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("[[0, 0, 0]]")
    result = subprocess.run(
        [sys.executable, "-m", "vision", "classify", "--rgb", str(path)], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1


def read_png(path):
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    assert image is not None, f"{path} is not a PNG"
    return image


def test_scan_writes_the_overlay_for_photos_and_for_a_rig(tmp_path, capsys, state):
    run(
        capsys,
        "render",
        "--state",
        state,
        "--view",
        "phone",
        "--light",
        "led",
        "-o",
        str(tmp_path / "face.png"),
        "--seed",
        "3",
    )
    faces = [f"{f}={tmp_path / f'face_{f}.png'}" for f in "URFDLB"]
    code, printed, _ = run(capsys, "scan", "--faces", *faces, "--overlay", str(tmp_path / "photos.png"))
    assert code == 0 and printed.strip() == state
    assert read_png(tmp_path / "photos.png").std() > 20
    views = tmp_path / "rig.json"
    run(
        capsys,
        "render",
        "--state",
        state,
        "--view",
        "corners",
        "-o",
        str(tmp_path / "cam.png"),
        "--seed",
        "1",
        "--views-out",
        str(views),
    )
    code, printed, _ = run(
        capsys,
        "scan",
        "--views",
        str(views),
        "--image",
        f"ufr={tmp_path / 'cam_ufr.png'}",
        "--image",
        f"dlb={tmp_path / 'cam_dlb.png'}",
        "--json",
        "--overlay",
        str(tmp_path / "rig.png"),
    )
    assert code == 0 and json.loads(printed)["state"] == state
    assert read_png(tmp_path / "rig.png").shape == read_png(tmp_path / "photos.png").shape  # one layout for both


def test_a_refused_scan_still_writes_its_overlay_and_exits_2(tmp_path, capsys, state):
    images, views = refused_images(state)
    for name, image in images.items():
        cv2.imwrite(str(tmp_path / f"{name}.png"), image)
    views.save(tmp_path / "rig.json")
    overlay = tmp_path / "refused.png"
    code, printed, err = run(
        capsys,
        "scan",
        "--views",
        str(tmp_path / "rig.json"),
        "--image",
        f"ufr={tmp_path / 'ufr.png'}",
        "--image",
        f"dlb={tmp_path / 'dlb.png'}",
        "--overlay",
        str(overlay),
    )
    assert code == 2 and printed == ""
    assert err.startswith("error: cannot read the cube for sure") and err.count("\n") == 1
    assert f"(overlay written to {overlay})" in err
    picture = read_png(overlay)
    assert ((picture == (0, 0, 255)).all(axis=2)).sum() > 200  # the stickers in doubt, framed red


def test_overlay_errors_are_one_line(tmp_path, capsys, state):
    run(capsys, "render", "--state", state, "--view", "phone", "-o", str(tmp_path / "face.png"), "--seed", "3")
    faces = [f"{f}={tmp_path / f'face_{f}.png'}" for f in "URFDLB"]
    code, _, err = run(capsys, "scan", "--faces", *faces, "--overlay", str(tmp_path / "no" / "such" / "dir.png"))
    assert code == 2 and err.startswith("error: cannot write the overlay to") and err.count("\n") == 1
    code, _, err = run(capsys, "scan", "--faces", faces[0], "--overlay", str(tmp_path / "x.png"))
    assert code == 2 and not (tmp_path / "x.png").exists()  # no faces located: nothing to draw
