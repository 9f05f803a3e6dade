"""Scan planning: the quickest flips and spins that show all six faces to the camera.

The camera looks down at world U with world B at the top of the image, so
the image's top-left, top-right, bottom-right and bottom-left corners are
the world corners U-L-B, U-B-R, U-R-F, U-F-L. A Dijkstra over (pose, faces
seen so far) finds the quickest route; each time a new cube face comes up
the camera takes a frame. Faces and corners are named in the cube's frame
at the scan's start pose (the frame the scanned state is written in), so
the frames can be read with a ``vision.views.ViewConfig`` built here.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from solver.puzzles.cube.geometry import FACES
from vision.views import ViewConfig, face_corner_names, view_config_from_dict

from ..errors import RobotError
from .pose import HOLD, HOLD_OP, RELEASE, Op, Pose, free_ops
from .timing import FlipSpinTiming

IMAGE_CORNERS = ("ULB", "UBR", "URF", "UFL")  # world corners at image top-left, top-right, bottom-right, bottom-left
ALL_SEEN = (1 << len(FACES)) - 1


@dataclass(frozen=True)
class Capture:
    """One camera frame: the ops before it, the cube face on top and the cube corners at the image corners."""

    ops: tuple[Op, ...]
    face: str
    corners: tuple[str, str, str, str]  # cube corner names at image TL, TR, BR, BL
    pose: Pose


@dataclass(frozen=True)
class ScanPlan:
    captures: tuple[Capture, ...]
    end: Pose
    seconds: float

    @property
    def ops(self) -> tuple[Op, ...]:
        return tuple(op for capture in self.captures for op in capture.ops)

    @property
    def robot_moves(self) -> int:
        return sum(op.is_robot_move for op in self.ops)


def image_corners(pose: Pose) -> tuple[str, str, str, str]:
    """Cube corner names (as ``face_corner_names`` spells them) at the image's TL, TR, BR, BL."""
    names = face_corner_names(pose.cube_face("U"))
    found = []
    for world in IMAGE_CORNERS:
        letters = {pose.cube_face(w) for w in world}
        found.append(next(name for name in names if set(name) == letters))
    top_left, top_right, bottom_right, bottom_left = found
    return top_left, top_right, bottom_right, bottom_left


def _bit(pose: Pose) -> int:
    return 1 << FACES.index(pose.cube_face("U"))


def _route(start: Pose, timing: FlipSpinTiming) -> list[tuple[Op, Pose]]:
    """The quickest (then fewest robot moves) ops from ``start`` (cover open) until every face was on top."""
    first = (start, _bit(start))
    best = {first: 0}
    parent: dict[tuple[Pose, int], tuple[tuple[Pose, int], Op] | None] = {first: None}
    heap = [(0, start.number, first)]
    while heap:
        cost, _, node = heapq.heappop(heap)
        if cost > best[node]:
            continue
        pose, seen = node
        if seen == ALL_SEEN:
            return _path(parent, node)
        for op in free_ops(pose, timing.half_spins):
            if op == HOLD_OP:
                continue
            after = pose.apply(op)
            nxt = (after, seen | _bit(after))
            if nxt not in best or cost + timing.cost(op) < best[nxt]:
                best[nxt], parent[nxt] = cost + timing.cost(op), (node, op)
                heapq.heappush(heap, (best[nxt], after.number, nxt))
    raise AssertionError("flips and spins bring every face to the top")


def _path(parent: dict, node) -> list[tuple[Op, Pose]]:
    path = []
    while parent[node] is not None:
        node_before, op = parent[node]
        path.append((op, node[0]))
        node = node_before
    return path[::-1]


def plan_scan(start: Pose, timing: FlipSpinTiming) -> ScanPlan:
    """Six captures, one per cube face, by the quickest route from ``start``; ends with the cover open."""
    pending: list[Op] = []
    pose = start
    if pose.cover == HOLD:
        pending.append(RELEASE)
        pose = pose.apply(RELEASE)
    captures = [Capture(tuple(pending), pose.cube_face("U"), image_corners(pose), pose)]
    seen, pending = {pose.cube_face("U")}, []
    for op, after in _route(pose, timing):
        pending.append(op)
        if after.cube_face("U") not in seen:
            seen.add(after.cube_face("U"))
            captures.append(Capture(tuple(pending), after.cube_face("U"), image_corners(after), after))
            pending = []
    seconds = sum(timing.seconds(op) for capture in captures for op in capture.ops)
    return ScanPlan(tuple(captures), captures[-1].pose, seconds)


def scan_view_dict(
    plan: ScanPlan,
    quad: Sequence[Sequence[float]] | np.ndarray,
    size: int,
    images: Sequence[str] | None = None,
    inner: float = 0.5,
) -> dict:
    """A view config (``vision.view_config_from_dict`` form) for the scan's frames.

    ``quad``: the top face's pixel corners in the camera image, TL TR BR BL
    (the same in every frame: the camera is fixed); ``images``: the frame
    name of each capture (default ``scan1`` ... ``scan6``).
    """
    names = list(images) if images is not None else [f"scan{k + 1}" for k in range(len(plan.captures))]
    if len(names) != len(plan.captures):
        raise RobotError(f"{len(plan.captures)} captures need {len(plan.captures)} image names, got {len(names)}")
    corners = [[float(x), float(y)] for x, y in quad]
    return {
        "size": size,
        "inner": inner,
        "view": [
            {"image": name, "face": capture.face, "corners": corners, "at": list(capture.corners)}
            for name, capture in zip(names, plan.captures)
        ],
    }


def scan_view_config(
    plan: ScanPlan,
    quad: Sequence[Sequence[float]] | np.ndarray,
    size: int,
    images: Sequence[str] | None = None,
    inner: float = 0.5,
) -> ViewConfig:
    """The validated ``ViewConfig`` of ``scan_view_dict``."""
    return view_config_from_dict(scan_view_dict(plan, quad, size, images, inner), "flip/spin scan")
