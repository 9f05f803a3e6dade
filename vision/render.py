"""Synthetic camera: draws a cube state as a rig's cameras see it (tests and the simulator).

Public calls:

- ``render_views(state, rig, preset, rng)`` -> ``{image name: BGR uint8 image}``
- ``default_views(rig, size)`` -> the ``ViewConfig`` that samples those images

Rigs: ``"corners"`` (six-motor rig, cameras ``ufr`` and ``dlb`` on opposite
corners, three faces each), ``"flip"`` (flip rig: six frames ``U``..``B``,
one face each, turned the way such a rig presents them), ``"top"`` (one
fixed camera ``top`` above the cube, seeing world U: a flip/spin rig turns
the cube under it; ``top_face_corners`` says where that face is), ``"phone"`` (six
handheld photos, one face each in net orientation, at a random pose with
the robot's frame and coloured plastic around: for automatic grid
detection; it has no fixed view config). Presets: ``vision.lighting.PRESETS``.

Drawing: black plastic faces and rounded stickers with gaps, projected by a
pinhole camera with the cube seated a little differently each time;
per-face Lambertian shading, a one-sided gradient, vignetting, a specular
glare spot, the illuminant's cast, sensor noise and gain, sRGB encoding,
optional blur and JPEG artefacts.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache, partial

import cv2
import numpy as np

from solver import InvalidState
from solver.puzzles.cube.facelets import to_face_letters
from solver.puzzles.cube.geometry import FACES

from .errors import ScanError
from .lab import linear_to_srgb
from .lighting import PLASTIC_ALBEDO, STICKER_ALBEDO, Lighting, face_shading, preset
from .scene import Camera, corner_cameras, face_camera, face_frames, photo_camera, rotation, sticker_polygons
from .views import FaceView, ViewConfig

RIGS = ("corners", "flip", "phone", "top")
FLIP_TURNS = {"U": 0, "R": 1, "F": 0, "D": 2, "L": 3, "B": 1}  # how the flip rig presents each face
SUBPIXEL = 4  # fixed-point bits for polygon drawing
_LUT_SIZE = 1 << 14
_SRGB_LUT = np.round(linear_to_srgb(np.linspace(0.0, 1.0, _LUT_SIZE))).astype(np.uint8)


def _checked_state(state: str) -> str:
    """Face letters to draw: a state in the letters U R F D L B is drawn as it is (each letter the colour
    of that face in the default scheme, however the cube is turned); other letters are mapped by the cube."""
    try:
        mapped = to_face_letters(state)
        return state if set(state) == set(FACES) else mapped
    except InvalidState as error:
        raise ScanError(f"cannot render state: {error}") from None


def _rig_cameras(rig: str, size: int, rng: np.random.Generator | None) -> dict[str, Camera]:
    if rig == "corners":
        return corner_cameras(size)
    if rig == "flip":
        return {f: face_camera(size, f, FLIP_TURNS[f], tilt=(0.0, 12.0)) for f in FACES}
    if rig == "top":
        return {"top": _top_camera(size)}
    if rig == "phone":
        rng = rng if rng is not None else np.random.default_rng()
        return {
            f: face_camera(
                size,
                f,
                0,
                tilt=tuple(rng.uniform(-14, 14, 2)),
                roll=rng.uniform(-8, 8),
                distance=rng.uniform(4.4, 5.8),
                shift=tuple(rng.uniform(-50, 50, 2)),
            )
            for f in FACES
        }
    raise ScanError(f"unknown rig {rig!r} (rigs: {', '.join(RIGS)})")


def default_views(rig: str, size: int) -> ViewConfig:
    """View config of a rendered rig with the cube seated exactly (``render_views`` jitters it a little)."""
    if rig == "phone":
        raise ScanError("handheld photos have no fixed view config: use automatic grid detection")
    if rig == "top":
        raise ScanError(
            "one camera above the cube sees one face at a time: its views come from the rig's "
            "scan plan (top_face_corners)"
        )
    if size not in (2, 3):
        raise ScanError(f"size must be 2 or 3, got {size!r}")
    cameras = _rig_cameras(rig, size, None)
    views = []
    for k, face in enumerate(FACES):
        frame = face_frames(size)[k]
        # the camera that sees the face most squarely
        name = max(cameras, key=lambda n: float(np.dot(frame.normal, _unit(cameras[n].position - frame.centre))))
        corners = cameras[name].project(frame.corners(float(size)))
        views.append(FaceView(name, face, corners))
    return ViewConfig(size, tuple(views))


def _top_camera(size: int) -> Camera:
    return face_camera(size, "U", 0, tilt=(0.0, 12.0))


def top_face_corners(size: int) -> np.ndarray:
    """Image points (TL, TR, BR, BL) of the face under the ``top`` camera, world B at the image's top."""
    return _top_camera(size).project(face_frames(size)[FACES.index("U")].corners(float(size)))


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def _cube_pose(rng: np.random.Generator, jitter: float) -> tuple[np.ndarray, np.ndarray]:
    """Small random seat error of the cube: rotation and translation (cube units)."""
    if jitter <= 0:
        return np.eye(3), np.zeros(3)
    axis = rng.normal(size=3)
    turn = rotation(axis, np.radians(rng.normal(0, 1.2 * jitter)))
    return turn, rng.normal(0, 0.05 * jitter, 3)


@lru_cache(maxsize=4)
def _pixel_grid(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    yy.setflags(write=False)
    xx.setflags(write=False)
    return yy, xx


def _sensor_noise(linear: np.ndarray, light: Lighting, rng: np.random.Generator) -> np.ndarray:
    """``lighting.add_noise`` for a whole float32 image, drawn by OpenCV (seeded from ``rng``)."""
    sigma = cv2.sqrt(np.maximum(linear, 0) * np.float32(light.shot_noise) + np.float32(light.read_noise**2))
    noise = np.empty_like(linear)
    cv2.setRNGSeed(int(rng.integers(2**31)))
    cv2.randn(noise, 0.0, 1.0)  # type: ignore[call-overload]  # the stub wants arrays for mean and stddev; scalars work
    return (linear + noise * sigma) * np.float32(light.gain)


def _fill(canvas: np.ndarray, points: np.ndarray, value) -> None:
    pts = np.round(points * (1 << SUBPIXEL)).astype(np.int32)
    cv2.fillPoly(canvas, [pts], value, lineType=cv2.LINE_8, shift=SUBPIXEL)


def _background(h: int, w: int, rng: np.random.Generator, cube_box: np.ndarray) -> np.ndarray:
    """A table and wall with the robot's frame: grey bars and coloured plastic parts, some near the cube."""
    base = rng.uniform(0.08, 0.35) * np.array(rng.uniform(0.8, 1.2, 3))
    rough = cv2.resize(rng.uniform(0.75, 1.25, (6, 8)).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)
    canvas = (rough[:, :, None] * base[None, None, :]).astype(np.float32)
    palette = [v for v in STICKER_ALBEDO.values()] + [(0.05, 0.05, 0.05), (0.5, 0.5, 0.5)]
    (x0, y0), (x1, y1) = cube_box
    cx, cy, half = (x0 + x1) / 2, (y0 + y1) / 2, max(x1 - x0, y1 - y0) / 2
    for _ in range(int(rng.integers(2, 5))):  # frame bars and gripper arms reaching for the cube
        colour = np.array(palette[int(rng.integers(len(palette)))]) * rng.uniform(0.6, 1.0)
        angle = rng.uniform(0, 2 * np.pi)
        direction = np.array([np.cos(angle), np.sin(angle)])
        start = np.array([cx, cy]) + direction * half * rng.uniform(0.8, 1.0)
        end = start + direction * max(h, w)
        width = rng.uniform(0.15, 0.4) * half
        normal = np.array([-direction[1], direction[0]]) * width
        _fill(canvas, np.array([start - normal, start + normal, end + normal, end - normal]), colour.tolist())
    for _ in range(int(rng.integers(2, 6))):  # plastic blocks, knobs and screws around
        colour = np.array(palette[int(rng.integers(len(palette)))]) * rng.uniform(0.6, 1.0)
        centre = rng.uniform([0, 0], [w, h])
        if abs(centre[0] - cx) < half * 1.1 and abs(centre[1] - cy) < half * 1.1:
            continue
        radius = rng.uniform(0.08, 0.4) * half
        if rng.random() < 0.5:
            cv2.circle(canvas, tuple(int(v) for v in centre), int(radius), colour.tolist(), -1)
        else:
            turn = rotation((0, 0, 1), rng.uniform(0, np.pi))[:2, :2]
            square = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * radius * np.array([1, rng.uniform(0.7, 1.4)])
            _fill(canvas, square @ turn.T + centre, colour.tolist())
    return canvas


def _draw_cube(
    camera: Camera, state: str, size: int, light: Lighting, pose, rng, albedo_map, shade_map, mask, stickers: dict
):
    """Draws visible faces (plastic, then stickers) into the albedo, shading and cube-mask maps."""
    turn, shift = pose
    frames = face_frames(size)
    polygons = sticker_polygons(size) @ turn.T + shift
    normals = np.array([f.normal for f in frames]) @ turn.T
    shading = face_shading(light, normals)
    per_face = size * size
    spread = rng.uniform(0.96, 1.04, (len(state), 3))
    for k, frame in enumerate(frames):
        centre = frame.centre @ turn.T + shift
        if not camera.sees(centre, normals[k]):
            continue
        body = camera.project(frame.corners(float(size)) @ turn.T + shift)
        _fill(albedo_map, body, PLASTIC_ALBEDO)
        _fill(shade_map, body, float(shading[k]))
        _fill(mask, body, 1.0)
        for i in range(k * per_face, (k + 1) * per_face):
            colour = np.array(stickers[state[i]]) * spread[i]
            _fill(albedo_map, camera.project(polygons[i]), colour.tolist())


def _glare(h: int, w: int, camera: Camera, size: int, pose, rng, light: Lighting, at: int | None) -> np.ndarray:
    """Specular spot on a visible sticker (``at``: facelet index, else random), as a linear map."""
    turn, shift = pose
    polygons = sticker_polygons(size) @ turn.T + shift
    frames = face_frames(size)
    visible = [
        i
        for i in range(6 * size * size)
        if camera.sees(frames[i // (size * size)].centre @ turn.T + shift, frames[i // (size * size)].normal @ turn.T)
    ]
    if at is None:
        at = visible[int(rng.integers(len(visible)))]
    elif at not in visible:
        return np.zeros((h, w), np.float32)
    outline = camera.project(polygons[at])
    centre = outline.mean(axis=0) + rng.uniform(-0.2, 0.2, 2) * np.ptp(outline, axis=0)
    radius = light.glare_radius * float(np.ptp(outline[:, 0]))
    yy, xx = _pixel_grid(h, w)
    return light.glare * np.exp(-((xx - centre[0]) ** 2 + (yy - centre[1]) ** 2) / (2 * radius**2))


def render_image(
    camera: Camera,
    state: str,
    light: Lighting | str,
    rng: np.random.Generator,
    *,
    jitter: float = 1.0,
    background: bool = True,
    blur: float = 0.0,
    jpeg: int | None = None,
    glare_at: int | None = None,
    stickers: dict | None = None,
) -> np.ndarray:
    """One BGR uint8 image of a face-letter state through ``camera`` (see the module docstring)."""
    light = preset(light) if isinstance(light, str) else light
    size = 3 if len(state) == 54 else 2
    h, w = camera.height, camera.width
    pose = _cube_pose(rng, jitter)
    outline = camera.project(np.array([f.corners(float(size)) for f in face_frames(size)]).reshape(-1, 3))
    box = np.array([outline.min(axis=0), outline.max(axis=0)])
    albedo = _background(h, w, rng, box) if background else np.full((h, w, 3), 0.15, np.float32)
    shade = np.full((h, w), light.ambient + 0.5 * light.directional, np.float32)
    mask = np.zeros((h, w), np.float32)
    _draw_cube(camera, state, size, light, pose, rng, albedo, shade, mask, {**STICKER_ALBEDO, **(stickers or {})})
    yy, xx = _pixel_grid(h, w)
    side = rng.uniform(0, 2 * np.pi)
    ramp = ((xx - w / 2) * np.cos(side) + (yy - h / 2) * np.sin(side)) / max(h, w)
    spatial = np.clip(1 + light.gradient * ramp * 2, 0.2, None) * (
        1 - light.vignetting * ((xx - w / 2) ** 2 + (yy - h / 2) ** 2) / (w * w / 4 + h * h / 4)
    )
    linear = albedo * (shade * spatial)[:, :, None] * np.array(light.illuminant, np.float32) * light.exposure
    if light.glare > 0:
        spot = _glare(h, w, camera, size, pose, rng, light, glare_at) * mask
        linear += spot[:, :, None] * np.array(light.illuminant, np.float32)
    linear = cv2.GaussianBlur(linear.astype(np.float32), (0, 0), 0.6 + blur)
    linear = _sensor_noise(linear, light, rng)
    index = np.clip(linear[:, :, ::-1] * (_LUT_SIZE - 1) + 0.5, 0, _LUT_SIZE - 1).astype(np.uint16)
    image = _SRGB_LUT[index]
    if jpeg is not None:
        ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(jpeg)])
        decoded = cv2.imdecode(data, cv2.IMREAD_COLOR)
        if decoded is None:
            raise RuntimeError("OpenCV could not decode the JPEG it had just encoded")
        image = decoded.astype(np.uint8, copy=False)
    return image


def render_views(
    state: str,
    rig: str = "corners",
    light: str | Lighting = "daylight",
    rng: np.random.Generator | None = None,
    *,
    blur: float = 0.0,
    jpeg: int | None = None,
    jitter: float = 1.0,
    background: bool = True,
    glare_at: int | None = None,
    exposure: float = 1.0,
    stickers: dict | None = None,
) -> dict[str, np.ndarray]:
    """All images of a rig for one cube state (any six colour letters; drawn in the default scheme).

    ``rng`` makes the picture reproducible; ``blur`` (pixels, Gaussian sigma)
    and ``jpeg`` (quality 1..100) add camera artefacts; ``jitter`` scales how
    far the cube sits from its nominal seat; ``glare_at`` puts the preset's
    glare spot on that facelet index where a camera sees it. ``exposure``
    scales the preset's exposure, as a camera's exposure time does (what
    passes 255 clips); ``stickers`` replaces the linear albedo of some
    colours (face letter: (r, g, b)), e.g. a cream yellow.
    """
    state = _checked_state(state)
    rng = rng if rng is not None else np.random.default_rng()
    light = preset(light) if isinstance(light, str) else light
    light = replace(light, exposure=light.exposure * exposure)
    if jpeg is not None and not 1 <= int(jpeg) <= 100:
        raise ScanError(f"JPEG quality must be 1..100, got {jpeg}")
    size = 3 if len(state) == 54 else 2
    cameras = _rig_cameras(rig, size, rng)
    draw = partial(render_image, jitter=jitter, background=background, blur=blur, jpeg=jpeg, glare_at=glare_at)
    return {name: draw(camera, state, light, rng, stickers=stickers) for name, camera in cameras.items()}


def render_face_photo(
    state: str,
    face: str = "F",
    *,
    rotation_deg: float = 0.0,
    fill: float = 0.6,
    tilt_deg: float = 0.0,
    tilt_towards_deg: float = 0.0,
    offset: tuple[float, float] = (0.0, 0.0),
    light: str | Lighting = "daylight",
    rng: np.random.Generator | None = None,
    blur: float = 0.0,
    jpeg: int | None = None,
    background: bool = True,
    glare_at: int | None = None,
) -> np.ndarray:
    """One 640x480 handheld photo of ``face`` in net orientation, at a pose the caller sets exactly.

    Like the ``phone`` rig's photos, but for benchmarks that bin by pose:
    ``rotation_deg`` (in-plane, clockwise, -45..45 for a face still read in
    net orientation), ``fill`` (0.25..1: fraction of the shorter image side
    the face spans), ``tilt_deg`` (0..30 typical: perspective, the angle
    between the optical axis and the face normal) towards
    ``tilt_towards_deg``, ``offset`` (-1..1: where the face sits in the room
    left around it); see ``scene.photo_camera``. The cube sits exactly at its
    seat, so ``face_photo_corners`` with the same pose gives the true corners.
    Light, ``blur``, ``jpeg``, ``background`` and ``glare_at`` as for ``render_views``.
    """
    state = _checked_state(state)
    if face not in FACES:
        raise ScanError(f"unknown face {face!r} (faces: {' '.join(FACES)})")
    if not 0.05 <= fill <= 1.5:
        raise ScanError(f"fill must be 0.05..1.5 of the frame, got {fill}")
    if jpeg is not None and not 1 <= int(jpeg) <= 100:
        raise ScanError(f"JPEG quality must be 1..100, got {jpeg}")
    rng = rng if rng is not None else np.random.default_rng()
    size = 3 if len(state) == 54 else 2
    camera = photo_camera(
        size,
        face,
        rotation_deg=rotation_deg,
        fill=fill,
        tilt_deg=tilt_deg,
        tilt_towards_deg=tilt_towards_deg,
        offset=offset,
    )
    return render_image(
        camera, state, light, rng, jitter=0.0, background=background, blur=blur, jpeg=jpeg, glare_at=glare_at
    )


def face_photo_corners(size: int, face: str = "F", **pose) -> np.ndarray:
    """True outer corners (TL, TR, BR, BL of the face in net orientation, pixels) of a ``render_face_photo``
    taken with the same pose keywords (``rotation_deg``, ``fill``, ``tilt_deg``, ``tilt_towards_deg``,
    ``offset``)."""
    camera = photo_camera(size, face, **pose)
    return camera.project(face_frames(size)[FACES.index(face)].corners(float(size)))


__all__ = [
    "RIGS",
    "default_views",
    "face_photo_corners",
    "render_face_photo",
    "render_image",
    "render_views",
    "top_face_corners",
]
