"""3D geometry of the synthetic camera: the cube's faces and stickers, cameras and rig poses.

World frame as in ``solver.puzzles.cube.geometry``: x towards R, y towards U, z towards
F; a cube of n layers spans -n..n (a cubie is 2 units wide). Cameras are
pinholes with x right, y down, z forward.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from solver.puzzles.cube.geometry import FACES, NORMALS, stickers

STICKER_HALF = 0.86  # half-side of a sticker on a 2-unit cubie: the rest is black gap
STICKER_ROUND = 0.2  # corner radius of a sticker
FOCAL_PX = 620.0


@dataclass(frozen=True)
class FaceFrame:
    """A face in 3D: centre, outward normal, net right and net down unit vectors."""

    centre: np.ndarray
    normal: np.ndarray
    right: np.ndarray
    down: np.ndarray

    def corners(self, half: float) -> np.ndarray:
        """(4, 3) corners TL, TR, BR, BL of a square of half-side ``half`` around the centre."""
        r, d = self.right * half, self.down * half
        return np.stack([self.centre - r - d, self.centre + r - d, self.centre + r + d, self.centre - r + d])


@cache
def face_frames(size: int) -> tuple[FaceFrame, ...]:
    """The six faces of an n-cube, in face order, with their net orientation."""
    frames = []
    per_face = size * size
    for k, face in enumerate(FACES):
        first = np.array(stickers(size)[k * per_face][0], dtype=np.float64)
        right = np.array(stickers(size)[k * per_face + size - 1][0], dtype=np.float64) - first
        down = np.array(stickers(size)[k * per_face + per_face - size][0], dtype=np.float64) - first
        normal = np.array(NORMALS[face], dtype=np.float64)
        frames.append(FaceFrame(normal * size, normal, right / np.linalg.norm(right), down / np.linalg.norm(down)))
    return tuple(frames)


@cache
def sticker_outline(points_per_corner: int = 4) -> np.ndarray:
    """(k, 2) outline of a rounded sticker in its own (right, down) units, centred on 0."""
    inner = STICKER_HALF - STICKER_ROUND
    outline = []
    for cx, cy, start in ((inner, inner, 0.0), (-inner, inner, 0.5), (-inner, -inner, 1.0), (inner, -inner, 1.5)):
        for t in np.linspace(0, 0.5, points_per_corner):
            angle = np.pi * (start + t)
            outline.append((cx + STICKER_ROUND * np.cos(angle), cy + STICKER_ROUND * np.sin(angle)))
    return np.array(outline)


def sticker_polygons(size: int) -> np.ndarray:
    """(6 n^2, k, 3) 3D outline of every sticker, in facelet order."""
    outline = sticker_outline()
    polys = []
    for index, (position, normal) in enumerate(stickers(size)):
        frame = face_frames(size)[index // (size * size)]
        centre = np.array(position, dtype=np.float64) + np.array(normal, dtype=np.float64)
        polys.append(centre + outline[:, :1] * frame.right + outline[:, 1:] * frame.down)
    return np.array(polys)


def rotation(axis: np.ndarray | Sequence[float], angle: float) -> np.ndarray:
    """Rotation matrix about a unit axis (Rodrigues)."""
    axis = np.asarray(axis, dtype=np.float64)
    axis = axis / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * (k @ k)


@dataclass(frozen=True)
class Camera:
    """A pinhole camera: world-to-camera rotation (rows: right, down, forward), position, image size."""

    rotation: np.ndarray
    position: np.ndarray
    width: int = 640
    height: int = 480
    focal: float = FOCAL_PX
    shift: tuple[float, float] = (0.0, 0.0)

    @classmethod
    def looking_at(cls, position, target, up, **kwargs) -> Camera:
        position = np.asarray(position, dtype=np.float64)
        forward = np.asarray(target, dtype=np.float64) - position
        forward /= np.linalg.norm(forward)
        right = np.cross(forward, up)
        right /= np.linalg.norm(right)
        down = np.cross(forward, right)
        return cls(np.stack([right, down, forward]), position, **kwargs)

    def project(self, points: np.ndarray) -> np.ndarray:
        """(..., 3) world points to (..., 2) pixel coordinates."""
        local = (np.asarray(points) - self.position) @ self.rotation.T
        z = np.maximum(local[..., 2:3], 1e-6)
        centre = np.array([self.width / 2 + self.shift[0], self.height / 2 + self.shift[1]])
        return self.focal * local[..., :2] / z + centre

    def sees(self, point: np.ndarray, normal: np.ndarray) -> bool:
        return float(np.dot(normal, self.position - point)) > 1e-6


def corner_cameras(size: int) -> dict[str, Camera]:
    """The two cameras of a six-motor rig, on opposite corners: "ufr" sees U R F, "dlb" sees D L B."""
    distance = 5.2 * size
    diagonal = np.array([1.0, 1.0, 1.0]) / np.sqrt(3)
    return {
        "ufr": Camera.looking_at(diagonal * distance, np.zeros(3), np.array([0.0, 1.0, 0.0])),
        "dlb": Camera.looking_at(-diagonal * distance, np.zeros(3), np.array([0.0, -1.0, 0.0])),
    }


def face_camera(
    size: int,
    face: str,
    turn: int = 0,
    tilt: tuple[float, float] = (0.0, 0.0),
    roll: float = 0.0,
    distance: float = 4.2,
    shift: tuple[float, float] = (0.0, 0.0),
) -> Camera:
    """A camera facing one face; the face appears turned by ``turn`` quarter turns clockwise.

    ``tilt``: degrees the camera moves off the face axis towards the net's
    right and up; ``roll``: extra degrees about the view axis; ``distance``
    in cube sizes from the centre.
    """
    frame = face_frames(size)[FACES.index(face)]
    up = -frame.down
    spin = rotation(frame.normal, -np.pi / 2 * turn - np.radians(roll))
    up = spin @ up
    right = np.cross(up, frame.normal)
    direction = (rotation(up, np.radians(tilt[0])) @ rotation(right, -np.radians(tilt[1]))) @ frame.normal
    return Camera.looking_at(direction * distance * size, np.zeros(3), up, shift=shift)


def photo_camera(
    size: int,
    face: str,
    *,
    rotation_deg: float = 0.0,
    fill: float = 0.6,
    tilt_deg: float = 0.0,
    tilt_towards_deg: float = 0.0,
    offset: tuple[float, float] = (0.0, 0.0),
    width: int = 640,
    height: int = 480,
) -> Camera:
    """A handheld camera on one face with a controlled pose (``face_camera`` with exact pose numbers).

    ``rotation_deg``: the camera rolls about its optical axis so that the
    image turns this many degrees clockwise about its centre (a face seen
    square then appears turned by exactly that); ``tilt_deg``: angle between
    the optical axis and the face's normal (perspective), towards
    ``tilt_towards_deg`` (0: the net's right, 90: its top, before the roll); ``fill``: the face's outline spans this
    fraction of the image's shorter side (the larger side of its bounding
    box); ``offset``: where the face sits in the room the frame leaves around
    it, -1..1 in x and y (0: centred; +-1: touching an edge).
    """
    theta, phi = np.radians(tilt_deg), np.radians(tilt_towards_deg)
    # face_camera tilts about its up, then its right axis: these two angles give exactly theta towards phi
    across = np.degrees(np.arcsin(np.sin(theta) * np.sin(phi)))
    along = np.degrees(np.arctan2(np.sin(theta) * np.cos(phi), np.cos(theta)))
    corners = face_frames(size)[FACES.index(face)].corners(float(size))

    spin = np.radians(rotation_deg)  # roll about the optical axis: the image turns about its centre
    roll = np.array([[np.cos(spin), -np.sin(spin), 0.0], [np.sin(spin), np.cos(spin), 0.0], [0.0, 0.0, 1.0]])

    def posed(distance: float, shift=(0.0, 0.0)) -> Camera:
        camera = face_camera(size, face, 0, tilt=(along, across), distance=distance)
        return Camera(roll @ camera.rotation, camera.position, width, height, camera.focal, tuple(shift))

    target = fill * min(width, height)
    near, far = 1.05, 200.0  # distance from the centre, in cube sizes: span falls as it grows
    for _ in range(60):
        middle = 0.5 * (near + far)
        if float(np.ptp(posed(middle).project(corners), axis=0).max()) > target:
            near = middle
        else:
            far = middle
    distance = 0.5 * (near + far)
    outline = posed(distance).project(corners)
    low, high = outline.min(axis=0), outline.max(axis=0)
    room = np.maximum(np.array([width, height], float) - (high - low), 0.0) / 2
    wanted = np.array([width, height], float) / 2 + np.clip(np.asarray(offset, float), -1, 1) * room
    return posed(distance, tuple(wanted - (low + high) / 2))
