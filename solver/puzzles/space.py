"""Turns about the axes through a cube's corners, as sticker permutations.

Skewb turns and Pyraminx turns are both 120-degree rotations about an axis
through a corner of a cube (a Pyraminx's four vertices sit on alternate
corners of a cube). Points are integer vectors; a corner axis is a vector
of three signs, e.g. (1, 1, 1) for the URF corner (x grows to R, y to U,
z to F, as in ``solver.puzzles.cube.geometry``).
"""

from __future__ import annotations

from collections.abc import Sequence

Vector = tuple[int, int, int]


def dot(a: Sequence[int], b: Sequence[int]) -> int:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def turn_clockwise(v: Vector, axis: Vector) -> Vector:
    """Rotate ``v`` by 120 degrees clockwise as seen from outside, looking at the corner ``axis``.

    Rodrigues' formula for -120 degrees about axis/sqrt(3), times two:
    2 v' = -v - axis x v + axis (axis . v). ``v`` must have even coordinates.
    """
    cross = (axis[1] * v[2] - axis[2] * v[1], axis[2] * v[0] - axis[0] * v[2], axis[0] * v[1] - axis[1] * v[0])
    d = dot(axis, v)
    doubled = [-v[k] - cross[k] + axis[k] * d for k in range(3)]
    if any(c % 2 for c in doubled):
        raise ValueError(f"{v} has odd coordinates: scale points by 2 before turning them")
    return (doubled[0] // 2, doubled[1] // 2, doubled[2] // 2)


def turn_permutation(points: Sequence[Vector], axis: Vector, depth: int = 0) -> tuple[int, ...]:
    """Sticker permutation of turning every point with ``point . axis > depth`` clockwise about ``axis``.

    Returned as ``source``: after the turn, sticker i shows what sticker
    ``source[i]`` showed before (``new = old[source]``).
    """
    where = {p: i for i, p in enumerate(points)}
    source = list(range(len(points)))
    for i, p in enumerate(points):
        if dot(p, axis) > depth:
            source[where[turn_clockwise(p, axis)]] = i
    return tuple(source)


def compose(first: Sequence[int], then: Sequence[int]) -> tuple[int, ...]:
    """The source permutation of doing ``first``, then ``then``."""
    return tuple(first[i] for i in then)
