"""The best real cube for given sticker costs: pieces, twists, flips and parity.

Given ``cost[sticker, face]`` (how badly each sticker fits each face's
colour), find the facelet string of least total cost among *reachable*
cubes: every corner and edge slot holds a real piece, each piece once (so
each colour is on exactly 9 or 4 stickers), corner twists add up to 0 mod
3, edge flips to 0 mod 2, and corner and edge permutations have the same
parity. Stickers whose face is fixed by definition (the centres of a 3x3,
the DLB corner of a 2x2, see ``solver.puzzles.cube.facelets``) keep it.

Method: a min-cost matching of pieces to slots (each pair costed with its
best orientation), an exact dynamic programme over orientations for the
twist and flip sums, and, where corner and edge parities disagree, the
cheapest transposition of two pieces that flips one of them. This is the
"repair the least-confident swaps" step: a misread that breaks parity is
undone by exchanging the two pieces whose exchange costs least.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from solver.puzzles.cube.geometry import (
    CORNER_SLOTS,
    EDGE_SLOTS,
    FACES,
    centre_facelets,
    corner_facelets,
    edge_facelets,
)

from .assignment import assign

_DLB_SLOT = CORNER_SLOTS.index("DBL")
_TRANSPOSITIONS_TRIED = 6


@dataclass(frozen=True)
class PieceKind:
    """Corners or edges of one puzzle size: slots, the pieces that move, what each option shows."""

    facelets: np.ndarray  # (slots, k) facelet indices of each slot
    faces: np.ndarray  # (pieces * k, k): face index shown at each slot position for option piece*k+o
    movable: np.ndarray  # slot indices whose piece is unknown (also the piece ids that move)
    modulus: int  # 3 for twists, 2 for flips


@dataclass(frozen=True)
class Solution:
    """A reachable cube: face index of every facelet and its total cost.

    ``parts`` keeps, per kind of piece, the best arrangement found for each
    permutation parity, so ``best_cube_without`` re-solves one kind only.
    """

    faces: np.ndarray
    cost: float
    size: int
    parts: tuple = ()


@cache
def _kinds(size: int) -> tuple[PieceKind, ...]:
    corner_faces = np.array(
        [[FACES.index(CORNER_SLOTS[p][(k - t) % 3]) for k in range(3)] for p in range(8) for t in range(3)],
        dtype=np.intp,
    )
    movable = [s for s in range(8) if size == 3 or s != _DLB_SLOT]
    corners = PieceKind(
        np.array(corner_facelets(size), dtype=np.intp), corner_faces, np.array(movable, dtype=np.intp), 3
    )
    if size == 2:
        return (corners,)
    edge_faces = np.array(
        [[FACES.index(EDGE_SLOTS[p][(k + f) % 2]) for k in range(2)] for p in range(12) for f in range(2)],
        dtype=np.intp,
    )
    edges = PieceKind(np.array(edge_facelets(), dtype=np.intp), edge_faces, np.arange(12, dtype=np.intp), 2)
    return corners, edges


@cache
def fixed_facelets(size: int) -> dict[int, int]:
    """Facelets whose face is fixed by definition: 3x3 centres, the 2x2 DLB corner."""
    if size == 3:
        return {index: face for face, index in enumerate(centre_facelets())}
    where = corner_facelets(2)[_DLB_SLOT]
    return {index: FACES.index(face) for index, face in zip(where, CORNER_SLOTS[_DLB_SLOT])}


def _parity(perm: np.ndarray) -> int:
    seen = np.zeros(len(perm), dtype=bool)
    parity = 0
    for start in range(len(perm)):
        length, j = 0, start
        while not seen[j]:
            seen[j] = True
            j = perm[j]
            length += 1
        parity ^= length > 0 and length % 2 == 0
    return int(parity)


def _orientations(option_cost: np.ndarray, modulus: int) -> tuple[np.ndarray, np.ndarray]:
    """Least cost and choice of orientations whose sum is 0 mod ``modulus``, for many candidates at once.

    ``option_cost[candidate, slot, o]``. Each slot first takes its cheapest
    orientation; if their sum is off by ``t``, the fix is either one slot
    turned on by ``t`` or, for twists, two slots each turned by ``2t`` (mod
    3). Nothing else can be cheaper: among three or more changed slots some
    of them change the sum by a multiple of ``modulus`` and could be left
    alone. Returns (costs, orientations per candidate and slot).
    """
    count, slots, m = option_cost.shape
    rows = np.arange(count)[:, None]
    chosen = option_cost.argmin(axis=2)
    base = option_cost.min(axis=2).sum(axis=1)
    off = (-chosen.sum(axis=1)) % m
    turned = np.take_along_axis(option_cost, (chosen[:, :, None] + np.arange(m)) % m, axis=2)
    extra = turned - turned[:, :, :1]  # [candidate, slot, turned on by k]
    single = extra[rows, np.arange(slots), off[:, None]]
    one = single.argmin(axis=1)
    cost_one = single[rows[:, 0], one]
    if m == 3 and slots > 1:
        double = extra[rows, np.arange(slots), (2 * off[:, None]) % m]
        two = np.argpartition(double, 1, axis=1)[:, :2]
        cost_two = np.take_along_axis(double, two, axis=1).sum(axis=1)
    else:
        two, cost_two = np.zeros((count, 2), dtype=np.intp), np.full(count, np.inf)
    orient = chosen.copy()
    use_one = (off > 0) & (cost_one <= cost_two)
    use_two = (off > 0) & ~use_one
    orient[use_one, one[use_one]] += off[use_one]
    for k in (0, 1):
        orient[use_two, two[use_two, k]] += 2 * off[use_two]
    fix = np.where(off == 0, 0.0, np.where(use_one, cost_one, cost_two))
    return base + fix, orient % m


@dataclass(frozen=True)
class _KindResult:
    cost: float
    perm: np.ndarray  # piece in each movable slot (piece ids)
    orient: np.ndarray


def _solve_kind(kind: PieceKind, option_cost: np.ndarray) -> dict[int, _KindResult]:
    """Best arrangement of one kind of piece for each permutation parity that could be found.

    ``option_cost[slot, piece * m + o]``. The 2x2 has no parity constraint:
    its single entry is under key 0.
    """
    m = kind.modulus
    mov = kind.movable
    sub = option_cost[np.ix_(mov, (mov[:, None] * m + np.arange(m)).ravel())]
    sub = sub.reshape(len(mov), len(mov), m)  # [slot, piece, orientation]
    relaxed = sub.min(axis=2)
    cols = assign(relaxed)[1]
    if len(mov) < 8:  # 2x2: any corner permutation is reachable
        return {0: _evaluate(sub, mov, cols[None], m)[0]}
    base = relaxed[np.arange(len(mov)), cols]
    swapped = relaxed[:, cols]  # swapped[i, j]: slot i takes slot j's piece
    delta = swapped + swapped.T - base[:, None] - base[None, :]
    delta[np.tril_indices(len(mov))] = np.inf
    others = np.repeat(cols[None], _TRANSPOSITIONS_TRIED, axis=0)
    for row, flat in enumerate(np.argsort(delta, axis=None)[:_TRANSPOSITIONS_TRIED]):
        i, j = divmod(int(flat), len(mov))
        others[row, [i, j]] = cols[[j, i]]
    best, *transposed = _evaluate(sub, mov, np.vstack([cols[None], others]), m)
    return {_parity(cols): best, 1 - _parity(cols): min(transposed, key=lambda r: r.cost)}


def _evaluate(sub: np.ndarray, mov: np.ndarray, perms: np.ndarray, m: int) -> list[_KindResult]:
    """Each candidate permutation (pieces for the movable slots) with its best orientations."""
    costs, orient = _orientations(sub[np.arange(len(mov)), perms], m)
    return [_KindResult(float(c), mov[p], o) for c, p, o in zip(costs, perms, orient)]


def option_costs(kind: PieceKind, cost: np.ndarray) -> np.ndarray:
    """(slots, options) summed sticker cost of showing each option in each slot."""
    k = kind.faces.shape[1]
    return cost[kind.facelets[:, None, :], kind.faces[None, :, :]].reshape(len(kind.facelets), -1, k).sum(axis=2)


def _fill(faces: np.ndarray, kind: PieceKind, result: _KindResult) -> None:
    k = kind.faces.shape[1]
    options = result.perm * kind.modulus + result.orient
    faces[kind.facelets[kind.movable]] = kind.faces[options].reshape(-1, k)


def _combine(cost: np.ndarray, size: int, per_kind: list[dict[int, _KindResult]]) -> Solution:
    faces = np.full(cost.shape[0], -1, dtype=np.intp)
    fixed = fixed_facelets(size)
    for index, face in fixed.items():
        faces[index] = face
    fixed_cost = float(sum(cost[i, f] for i, f in fixed.items()))
    kinds = _kinds(size)
    if size == 2:
        chosen = [per_kind[0][0]]
    else:
        corners, edges = per_kind
        pairs = [(corners[p], edges[p]) for p in (0, 1) if p in corners and p in edges]
        best_corners, best_edges = min(pairs, key=lambda pair: pair[0].cost + pair[1].cost)
        chosen = [best_corners, best_edges]
    for kind, result in zip(kinds, chosen):
        _fill(faces, kind, result)
    return Solution(faces, fixed_cost + sum(r.cost for r in chosen), size, tuple(per_kind))


def best_cube(cost: np.ndarray, size: int) -> Solution:
    """The reachable cube of least summed ``cost[sticker, face]`` (see the module docstring)."""
    per_kind = [_solve_kind(kind, option_costs(kind, cost)) for kind in _kinds(size)]
    return _combine(cost, size, per_kind)


FORBIDDEN = 1e6  # cost that keeps a sticker off a face


def best_cube_without(cost: np.ndarray, base: Solution, sticker: int) -> Solution:
    """The best reachable cube in which ``sticker`` shows another face than in ``base`` (the best).

    Only the kind of piece holding the sticker is solved again. The sticker
    must not be one whose face is fixed by definition.
    """
    forced = cost.copy()
    forced[sticker, base.faces[sticker]] = FORBIDDEN
    per_kind = list(base.parts)
    for k, kind in enumerate(_kinds(base.size)):
        if np.any(kind.facelets == sticker):
            per_kind[k] = _solve_kind(kind, option_costs(kind, forced))
    return _combine(forced, base.size, per_kind)
