"""The search loops of the two-phase solver, for one view of the cube.

Phase 1 (IDA*, 18 moves, down to G1) expands the levels far from its
depth limit with numpy, many nodes at once (near the root the heuristic
prunes little and nodes are many), and the last levels with plain Python
ints, flat lists and bytes, which for a single node beat numpy calls.
Each phase-1 end runs phase 2 (IDA*, the 10 G1 moves) in plain Python.
Moves are tried in a fixed order, so the search is deterministic.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np

from ...puzzles.cube.cubie import move_cube
from ...puzzles.cube.geometry import FACES, OPPOSITE
from .coords import (
    FLIPS,
    PHASE2_MOVES,
    SLICE_PERMS,
    SLICES,
    UD_SPLITS,
    corner_perm_moves,
    flip_moves,
    phase1_coordinates,
    phase2_coordinates,
    slice_moves,
    slice_perm_moves,
    twist_moves,
    ud_edge_perm_moves,
    ud_split_moves,
    ud_split_of_edge_perm,
)
from .native import NativeTables, library
from .tables import TABLES, load_tables
from .views import View

# Phase 2 is cut off at this depth: long phase-2 searches cost more than trying
# the next phase-1 sequences, which reach short totals sooner.
PHASE2_DEPTH_LIMIT = 12
# A canonical sequence that leaves G1 and ends back in it with a quarter turn
# of R, L, F or B has at least this many moves (found by exhaustive search),
# so a phase-1 branch in G1 with fewer moves to go is pruned.
RETURN_TO_G1 = 5
# Phase-1 levels with more moves to go than this are expanded with numpy, NUMPY_CHUNK nodes at a time.
NUMPY_LEVELS_ABOVE = 4
NUMPY_CHUNK = 4096
# The bound before any solution is found: longer than any (phase 1 never needs more than 12 moves, phase 2 is
# cut at PHASE2_DEPTH_LIMIT), so only the clock ends a search that has found nothing.
MAX_SOLUTION_LENGTH = 40
MAX_CODED_PATH = 15  # 18**15 < 2**63: a path of up to 15 moves fits an int64 as base-18 digits
NO_FACE = 6
Nodes = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # twist, flip, slice, previous face, path
LAST_PHASE1_MOVES = frozenset(3 * FACES.index(f) + t for f in "RLFB" for t in (0, 2))


def _may_follow(previous_face: int, face: int) -> bool:
    if previous_face == NO_FACE:
        return True
    return face != previous_face and not (OPPOSITE[FACES[previous_face]] == FACES[face] and face < previous_face)


def _allowed_after() -> np.ndarray:
    """(7, 18): whether a move may follow a turn of each face (row NO_FACE: at the start)."""
    return np.array([[_may_follow(prev, m // 3) for m in range(18)] for prev in range(NO_FACE + 1)])


@dataclass(frozen=True)
class SearchTables:
    """Move and pruning tables in the flat form the search loops index."""

    twist: list[int]  # twist * 18 + move -> twist
    flip: list[int]
    slice: list[int]
    twist_slice: bytes  # twist * 495 + slice -> distance
    flip_slice: bytes
    twist_flip: bytes  # twist * 2048 + flip -> distance
    corner: list[int]  # corner_perm * 10 + k -> corner_perm (k: position in PHASE2_MOVES)
    edge: list[int]
    slice_perm: list[int]
    ud_split: list[int]
    corner_slice_perm: bytes  # corner_perm * 24 + slice_perm -> distance
    edge_slice_perm: bytes
    corner_ud_split: bytes  # corner_perm * 70 + ud_split -> distance
    ud_split_of_edge: list[int]
    phase1_next: tuple[tuple[tuple[int, int], ...], ...]  # previous face -> ((move, face), ...)
    phase1_last: tuple[tuple[tuple[int, int], ...], ...]  # the same, ending phase 1
    phase2_next: tuple[tuple[tuple[int, int], ...], ...]  # previous face -> ((k, face), ...)
    move_cp: tuple[tuple[int, ...], ...]
    move_ep: tuple[tuple[int, ...], ...]
    arrays: dict[str, np.ndarray]  # numpy forms for the many-node levels of phase 1


@cache
def search_tables() -> SearchTables:
    """The tables in search form (built or loaded on first use, then kept)."""
    pruning = load_tables()
    follow = [[(m, m // 3) for m in range(18) if _may_follow(prev, m // 3)] for prev in range(NO_FACE + 1)]
    return SearchTables(
        twist=twist_moves().ravel().tolist(),
        flip=flip_moves().ravel().tolist(),
        slice=slice_moves().ravel().tolist(),
        twist_slice=pruning.twist_slice,
        flip_slice=pruning.flip_slice,
        twist_flip=pruning.twist_flip,
        corner=corner_perm_moves().ravel().tolist(),
        edge=ud_edge_perm_moves().ravel().tolist(),
        slice_perm=slice_perm_moves().ravel().tolist(),
        ud_split=ud_split_moves().ravel().tolist(),
        corner_slice_perm=pruning.corner_slice_perm,
        edge_slice_perm=pruning.edge_slice_perm,
        corner_ud_split=pruning.corner_ud_split,
        ud_split_of_edge=ud_split_of_edge_perm().tolist(),
        phase1_next=tuple(tuple(row) for row in follow),
        phase1_last=tuple(tuple((m, f) for m, f in row if m in LAST_PHASE1_MOVES) for row in follow),
        phase2_next=tuple(
            tuple((k, m // 3) for k, m in enumerate(PHASE2_MOVES) if _may_follow(prev, m // 3))
            for prev in range(NO_FACE + 1)
        ),
        move_cp=tuple(move_cube(m, 3).cp for m in range(18)),
        move_ep=tuple(move_cube(m, 3).ep for m in range(18)),
        arrays={
            "twist": twist_moves(),
            "flip": flip_moves(),
            "slice": slice_moves(),
            **{name: pruning.distances(name) for name in ("twist_slice", "flip_slice", "twist_flip")},
            "allowed": _allowed_after(),
            "face": np.arange(18) // 3,
            "flip_flat": flip_moves().ravel(),
        },
    )


@cache
def native_tables() -> NativeTables | None:
    """The tables for the compiled loops (``native``); None where there are none (no C compiler).

    Where there are, the Python loops' tables (``search_tables``, 30 MB of
    Python ints) are built only if a search asks for the Python loops.
    """
    compiled = library()
    if compiled is None:
        return None
    pruning = load_tables()
    arrays = {
        "twist": twist_moves(),
        "flip": flip_moves(),
        "slice": slice_moves(),
        "corner": corner_perm_moves(),
        "edge": ud_edge_perm_moves(),
        "slice_perm": slice_perm_moves(),
        "ud_split": ud_split_moves(),
        "ud_split_of_edge": ud_split_of_edge_perm(),
        "move_cp": np.array([move_cube(m, 3).cp for m in range(18)]),
        "move_ep": np.array([move_cube(m, 3).ep for m in range(18)]),
        "phase2_moves": np.array(PHASE2_MOVES),
        "allowed": _allowed_after(),
        "ends_phase1": np.array([m in LAST_PHASE1_MOVES for m in range(18)]),
        **{name: pruning.distances(name) for name in TABLES},
    }
    return NativeTables(compiled, arrays)


def _decode_path(code: int, length: int) -> list[int]:
    """The moves whose base-18 digits (first move most significant) make ``code``."""
    path = [0] * length
    for i in range(length - 1, -1, -1):
        code, path[i] = divmod(code, 18)
    return path


class Stop(Exception):
    """Raised inside the search when the budget is spent or the target length is reached."""


@dataclass
class Goal:
    """What the searches of all views share: the clock, the target and the best solution so far.

    Without ``score`` the best solution is the shortest, and only shorter ones are searched for.
    With it (moves -> cost, e.g. a rig's motor time) the best is the one of least cost, and
    solutions up to ``slack`` moves longer than the shortest found are searched for too: a
    longer solution may cost less.
    """

    deadline: float
    max_length: int
    score: Callable[[list[int]], float] | None = None
    slack: int = 0
    best: list[int] | None = None
    best_cost: float = float("inf")
    shortest: int | None = None
    found: int = 0  # solutions offered

    @property
    def bound(self) -> int:
        """The most moves a solution still worth finding may have."""
        if self.shortest is None:
            return MAX_SOLUTION_LENGTH
        return self.shortest - 1 + (self.slack if self.score is not None else 0)

    def offer(self, moves: list[int]) -> None:
        """Keep ``moves`` if it beats the best; stop the search once a short enough one is found."""
        self.found += 1
        self.shortest = len(moves) if self.shortest is None else min(self.shortest, len(moves))
        cost = float(len(moves)) if self.score is None else self.score(moves)
        if cost < self.best_cost:
            self.best, self.best_cost = moves, cost
        if len(moves) <= self.max_length:
            raise Stop

    def check_clock(self) -> None:
        if time.perf_counter() > self.deadline:
            raise Stop


class ViewSearch:
    """The two-phase search of one view of the cube."""

    def __init__(self, view: View, goal: Goal, native: bool = True):
        self.view, self.goal = view, goal
        self.native = native_tables() if native else None
        self._tables = search_tables() if self.native is None else None
        self.path: list[int] = []  # phase-1 moves of the current branch
        self.depth = 0  # length of the phase-1 sequences being tried
        self.replayed: list[int] = []  # phase-1 moves whose cubie states are in cp_at / ep_at
        self.cp_at, self.ep_at = [list(view.cube.cp)], [list(view.cube.ep)]
        self.coordinates = phase1_coordinates(view.cube)
        twist, flip, slice_ = self.coordinates
        pruning = load_tables()
        self.start_depth = max(
            pruning.twist_slice[twist * SLICES + slice_],
            pruning.flip_slice[flip * SLICES + slice_],
            pruning.twist_flip[twist * FLIPS + flip],
        )

    @property
    def tables(self) -> SearchTables:
        """The Python loops' tables (built only for a search that runs them)."""
        assert self._tables is not None
        return self._tables

    def phase1_at(self, depth: int) -> None:
        """Try every phase-1 sequence of exactly ``depth`` moves, each followed by phase 2."""
        self.depth = depth
        if self.native is not None:
            self._compiled_phase1_at(depth)
            return
        if not NUMPY_LEVELS_ABOVE < depth <= MAX_CODED_PATH:
            self.path = []
            self._phase1(*self.coordinates, depth, NO_FACE)
            return
        twist, flip, slice_ = (np.array([value]) for value in self.coordinates)
        self._expand(twist, flip, slice_, np.array([NO_FACE]), np.array([0]), depth)

    def _compiled_phase1_at(self, depth: int) -> None:
        assert self.native is not None
        goal, view = self.goal, self.view

        def offer(moves: list[int]) -> int:
            goal.offer(view.to_original(moves))  # raises Stop at a short enough solution
            return goal.bound

        cube = view.cube
        if not self.native.phase1_at(self.coordinates, cube.cp, cube.ep, depth, goal.deadline, goal.bound, offer):
            raise Stop

    def _expand(self, twist, flip, slice_, previous, paths, togo: int) -> None:
        """Phase 1 from many nodes at once (numpy), in move order, down to NUMPY_LEVELS_ABOVE moves to go.

        Near the root the heuristic prunes little and nodes are many: there a
        vectorised step replaces thousands of Python loop turns. ``paths``
        holds each node's moves as the digits of a base-18 number.
        """
        for start in range(0, len(twist), NUMPY_CHUNK):
            self.goal.check_clock()
            part = slice(start, start + NUMPY_CHUNK)
            children = self._children(twist[part], flip[part], slice_[part], previous[part], paths[part], togo)
            if togo - 1 > NUMPY_LEVELS_ABOVE:
                self._expand(*children, togo - 1)
                continue
            *coordinates, faces, codes = children
            length = self.depth - (togo - 1)
            for t, f, s, face, code in zip(*(a.tolist() for a in (*coordinates, faces, codes))):
                self.path = _decode_path(code, length)
                self._phase1(t, f, s, togo - 1, face)

    def _children(self, twist, flip, slice_, previous, paths, togo: int) -> Nodes:
        """Arrays of the children worth searching (with ``togo - 1`` moves to go), parent by parent, in move order."""
        a = self.tables.arrays
        rest = togo - 1
        t, s = a["twist"][twist], a["slice"][slice_]
        twist_slice = a["twist_slice"][t * SLICES + s]
        chosen = np.flatnonzero(a["allowed"][previous] & (twist_slice <= rest))
        parent, move = np.divmod(chosen, 18)
        t, s, twist_slice = t.ravel()[chosen], s.ravel()[chosen], twist_slice.ravel()[chosen]
        f = a["flip_flat"][flip[parent] * 18 + move]
        flip_slice = a["flip_slice"][f * SLICES + s]
        keep = (flip_slice <= rest) & (a["twist_flip"][t * FLIPS + f] <= rest)
        if 0 < rest < RETURN_TO_G1:
            keep &= (twist_slice > 0) | (flip_slice > 0)
        parent, move = parent[keep], move[keep]
        return t[keep], f[keep], s[keep], a["face"][move], paths[parent] * 18 + move

    def _phase1(self, twist: int, flip: int, slice_: int, togo: int, previous: int) -> None:
        if togo == 0:
            self._phase2_from_endpoint()
            return
        if togo >= 3:
            self.goal.check_clock()
        tables, path = self.tables, self.path
        tw, fl, sl = tables.twist, tables.flip, tables.slice
        ts, fs, tf = tables.twist_slice, tables.flip_slice, tables.twist_flip
        slices, flips = SLICES, FLIPS
        t18, f18, s18 = twist * 18, flip * 18, slice_ * 18
        rest = togo - 1
        for move, face in (tables.phase1_last if togo == 1 else tables.phase1_next)[previous]:
            s = sl[s18 + move]
            t = tw[t18 + move]
            twist_slice = ts[t * slices + s]
            if twist_slice > rest:
                continue
            f = fl[f18 + move]
            flip_slice = fs[f * slices + s]
            if flip_slice > rest or tf[t * flips + f] > rest:
                continue
            if twist_slice == flip_slice == 0 and 0 < rest < RETURN_TO_G1:  # in G1 with too few moves to go
                continue
            path.append(move)
            self._phase1(t, f, s, rest, face)
            path.pop()

    def _endpoint_permutations(self) -> tuple[list[int], list[int]]:
        """Corner and edge permutations after the current phase-1 moves (replaying only what changed)."""
        path, replayed = self.path, self.replayed
        same = min(len(replayed), len(path))
        while replayed[:same] != path[:same]:  # usually only the last move or two differ
            same -= 1
        del replayed[same:], self.cp_at[same + 1 :], self.ep_at[same + 1 :]
        tables = self.tables
        for move in path[same:]:
            cp, ep = self.cp_at[-1], self.ep_at[-1]
            self.cp_at.append([cp[j] for j in tables.move_cp[move]])
            self.ep_at.append([ep[j] for j in tables.move_ep[move]])
            replayed.append(move)
        return self.cp_at[-1], self.ep_at[-1]

    def _phase2_from_endpoint(self) -> None:
        goal, tables, length1 = self.goal, self.tables, len(self.path)
        goal.check_clock()
        limit = min(PHASE2_DEPTH_LIMIT, goal.bound - length1)
        if limit < 0:
            return
        cp, ep = self._endpoint_permutations()
        corner, edge, slice_perm = phase2_coordinates(cp, ep)
        split = tables.ud_split_of_edge[edge]
        h = max(
            tables.corner_slice_perm[corner * SLICE_PERMS + slice_perm],
            tables.edge_slice_perm[edge * SLICE_PERMS + slice_perm],
            tables.corner_ud_split[corner * UD_SPLITS + split],
        )
        previous = self.path[-1] // 3 if self.path else NO_FACE
        moves2: list[int] = []
        for depth in range(h, limit + 1):
            if self._phase2(corner, edge, slice_perm, split, depth, previous, moves2):
                goal.offer(self.view.to_original(self.path + [PHASE2_MOVES[k] for k in moves2]))
                return

    def _phase2(
        self, corner: int, edge: int, slice_perm: int, split: int, togo: int, previous: int, moves: list[int]
    ) -> bool:
        """Depth-limited search inside G1; True (with ``moves`` filled) when solved in exactly ``togo`` moves."""
        if togo == 0:
            return corner == 0 and edge == 0 and slice_perm == 0
        if togo >= 8:
            self.goal.check_clock()
        tables = self.tables
        cm, em, sm, um = tables.corner, tables.edge, tables.slice_perm, tables.ud_split
        cs, es, cu = tables.corner_slice_perm, tables.edge_slice_perm, tables.corner_ud_split
        perms, splits = SLICE_PERMS, UD_SPLITS
        c10, e10, p10, u10 = corner * 10, edge * 10, slice_perm * 10, split * 10
        rest = togo - 1
        for k, face in tables.phase2_next[previous]:
            p = sm[p10 + k]
            c = cm[c10 + k]
            if cs[c * perms + p] > rest:
                continue
            u = um[u10 + k]
            if cu[c * splits + u] > rest:
                continue
            e = em[e10 + k]
            if es[e * perms + p] > rest:
                continue
            moves.append(k)
            if self._phase2(c, e, p, u, rest, face, moves):
                return True
            moves.pop()
        return False
