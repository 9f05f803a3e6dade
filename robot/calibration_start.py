"""The first calibration of a fixed-camera rig: a starting layout to drag onto the cube, and the check with a
solved cube that says whether the saved views read it right.

Until the view config's file exists the daemon runs uncalibrated: the scanner's views are ``NotCalibrated``
(a run ends at its scan with a message that says where to calibrate), and the Calibration tab starts from
``starting_views``: with two cameras, the faces where a rig with two opposite corner cameras sees them (U R F
in the first camera, D L B in the second, as the rendered rig has them); otherwise six squares shared out
among the cameras. Either way the user drags each corner onto the real cube.

``solved_verdict`` turns a scan of a solved cube into what the page says: solved, or which face (and in
which camera) reads colours of another face.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from solver.puzzles.cube.geometry import FACES
from vision import FaceView, ViewConfig, default_views

from .errors import RobotError

CORNER_RIG = (640.0, 480.0)  # the frame size of the rendered corner-camera rig the two-camera layout comes from


class NotCalibrated(RobotError):
    """The rig has no view config yet: scanning is refused until the Calibration tab saves one."""


def uncalibrated(message: str):
    """The views of a rig not calibrated yet: asking for them raises ``NotCalibrated(message)``."""

    def views() -> ViewConfig:
        raise NotCalibrated(message)

    return views


VIEWS_TASK = "drag each face's corners onto the cube in the camera pictures"
TOP_FACE_TASK = "drag the four corners onto the face under the camera, in its picture"


def not_calibrated_message(file, dashboard: str, task: str = VIEWS_TASK) -> str:
    """What a scan before the first calibration says: where to calibrate, and the file that will be written."""
    return (
        f"the cameras are not calibrated yet ({file} does not exist): open the dashboard's Calibration tab "
        f"({dashboard}#calibration), {task}, then Save and apply and check with a solved cube"
    )


def starting_views(sizes: dict[str, tuple[int, int]], size: int = 3) -> ViewConfig:
    """A first layout of the six faces over the cameras ``sizes`` (name -> frame width, height), to be dragged
    onto the real cube; at least one camera is needed."""
    if not sizes:
        raise RobotError("the rig has no camera open: a view config places each face in a camera's picture")
    names = list(sizes)
    if len(names) == 2:
        return _corner_layout(names, sizes, size)
    return _square_layout(names, sizes, size)


def _corner_layout(names: list[str], sizes: dict, size: int) -> ViewConfig:
    rendered = default_views("corners", size)
    camera_of = {"ufr": names[0], "dlb": names[1]}
    views = []
    for view in rendered.views:
        name = camera_of[view.image]
        scale = np.array(sizes[name], dtype=np.float64) / np.array(CORNER_RIG)
        views.append(FaceView(name, view.face, np.round(view.corners * scale, 1)))
    return ViewConfig(size, tuple(views))


def _square_layout(names: list[str], sizes: dict, size: int) -> ViewConfig:
    """Six squares in rows of three, shared out among the cameras in turn."""
    per_camera: dict[str, list[str]] = {name: [] for name in names}
    for k, face in enumerate(FACES):
        per_camera[names[k % len(names)]].append(face)
    views = []
    for name, faces in per_camera.items():
        width, height = sizes[name]
        rows = (len(faces) + 2) // 3
        side = 0.8 * min(width / 3, height / max(rows, 1))
        for k, face in enumerate(faces):
            column, row = k % 3, k // 3
            x = width * (column + 0.5) / 3 - side / 2
            y = height * (row + 0.5) / max(rows, 1) - side / 2
            square = np.array([[x, y], [x + side, y], [x + side, y + side], [x, y + side]])
            views.append(FaceView(name, face, np.round(square, 1)))
    return ViewConfig(size, tuple(sorted(views, key=lambda v: FACES.index(v.face))))


def solved_verdict(state: str, views: ViewConfig) -> dict:
    """A scan of a solved cube judged: ``solved``, and per face off, the camera and how many stickers read
    another face's colour."""
    n = len(state) // 6
    camera = {view.face: view.image for view in views.views}
    off = []
    for k, face in enumerate(FACES):
        stickers = state[k * n : (k + 1) * n]
        own = stickers[n // 2] if n == 9 else Counter(stickers).most_common(1)[0][0]
        wrong = sum(letter != own for letter in stickers)
        if wrong:
            off.append({"face": face, "camera": camera.get(face), "stickers": wrong, "of": n})
    if not off:
        return {"solved": True, "faces_off": [], "message": "the solved cube reads as solved: the views are right"}
    where = "; ".join(
        f"face {f['face']} (camera {f['camera']}): {f['stickers']} of {f['of']} stickers read another colour"
        for f in off
    )
    return {
        "solved": False,
        "faces_off": off,
        "message": f"the solved cube does not read as solved: {where}. Move that face's corners onto the cube's "
        "outer corners (in the order the labels show), save and check again",
    }


def refused_verdict(message: str, stickers: tuple[str, ...], views: ViewConfig) -> dict:
    """A scan of a solved cube that the vision refused: its reason, and the faces of the stickers in doubt."""
    camera = {view.face: view.image for view in views.views}
    faces = list(dict.fromkeys(s[0] for s in stickers if s and s[0] in FACES))
    off = [
        {"face": face, "camera": camera.get(face), "stickers": sum(s[0] == face for s in stickers)} for face in faces
    ]
    named = "; ".join(f"face {f['face']} (camera {f['camera']})" for f in off)
    return {
        "solved": False,
        "faces_off": off,
        "message": f"the scan was refused: {message}" + (f". Stickers in doubt on {named}" if named else ""),
    }
