"""Optimal 2x2x2 solving from a breadth-first distance table over all 3,674,160 states.

The table is built with vectorised numpy BFS in the chosen metric (HTM: the
9 moves of U R F, QTM: their 6 quarter turns), then stored as distance mod 3
in 2 bits per state. Neighbours of a state are at distance d-1, d or d+1, so
the mod-3 value alone tells which neighbour is one move closer: solving is a
walk down the table, never a search.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .cubie import CubieCube
from .notation import QUARTER_TURNS, check_metric
from .pocket_coords import SOLVED_INDEX, STATES, TWISTS, coordinate, move_tables
from .table_cache import read_table, write_table

UNSEEN = 255
FORMAT_VERSION = 1


def metric_moves(metric: str) -> tuple[int, ...]:
    """Move ids (U R F only) used in a metric."""
    return tuple(range(9)) if check_metric(metric) == "htm" else tuple(m for m in QUARTER_TURNS if m < 9)


def neighbour_indices(states: np.ndarray, move: int) -> np.ndarray:
    """State index after ``move`` for an array of state indices."""
    perm_table, twist_table = move_tables()
    perm, twist = np.divmod(states, TWISTS)
    return perm_table[perm, move].astype(np.int64) * TWISTS + twist_table[twist, move]


def bfs_distances(metric: str) -> np.ndarray:
    """Exact distance (uint8) from solved of every state, by breadth-first search."""
    distance = np.full(STATES, UNSEEN, dtype=np.uint8)
    distance[SOLVED_INDEX] = 0
    frontier = np.array([SOLVED_INDEX], dtype=np.int64)
    depth = 0
    while len(frontier):
        for move in metric_moves(metric):
            reached = neighbour_indices(frontier, move)
            distance[reached[distance[reached] == UNSEEN]] = depth + 1
        depth += 1
        frontier = np.flatnonzero(distance == depth)
    return distance


def pack_mod3(distance: np.ndarray) -> bytes:
    """Distance mod 3 in 2 bits per state, four states per byte (lowest bits first)."""
    v = (distance % 3).astype(np.uint8).reshape(-1, 4)
    return (v[:, 0] | (v[:, 1] << 2) | (v[:, 2] << 4) | (v[:, 3] << 6)).astype(np.uint8).tobytes()


def unpack_mod3(packed: bytes) -> np.ndarray:
    b = np.frombuffer(packed, dtype=np.uint8)
    return np.stack([(b >> s) & 3 for s in (0, 2, 4, 6)], axis=1).reshape(-1)


@dataclass
class PocketTable:
    """A loaded 2x2 table: distance mod 3 of every state in one metric."""
    metric: str
    packed: bytes
    counts: list[int]
    build_s: float
    cached: bool

    def __post_init__(self) -> None:
        perm_table, twist_table = move_tables()
        moves = metric_moves(self.metric)
        self.moves = moves
        # Python lists: per-state look-ups in a short loop beat numpy call overhead.
        self._perm_next = [[int(p) * TWISTS for p in row[list(moves)]] for row in perm_table]
        self._twist_next = [[int(t) for t in row[list(moves)]] for row in twist_table]

    def mod3(self, index: int) -> int:
        return (self.packed[index >> 2] >> ((index & 3) << 1)) & 3

    def solve_index(self, index: int) -> list[int]:
        """Optimal move ids from state ``index`` to solved, by descent."""
        packed, perm_next, twist_next, moves = self.packed, self._perm_next, self._twist_next, self.moves
        path = []
        value = (packed[index >> 2] >> ((index & 3) << 1)) & 3
        while index != SOLVED_INDEX:
            closer = (value + 2) % 3
            perm, twist = divmod(index, TWISTS)
            p_row, t_row = perm_next[perm], twist_next[twist]
            for k in range(len(moves)):
                n = p_row[k] + t_row[k]
                if (packed[n >> 2] >> ((n & 3) << 1)) & 3 == closer:
                    break
            else:
                raise RuntimeError("2x2 table is inconsistent: no neighbour is closer")
            path.append(moves[k])
            index, value = n, closer
        return path

    def solve(self, cube: CubieCube) -> list[int]:
        return self.solve_index(coordinate(cube))


def build_table(metric: str) -> tuple[PocketTable, np.ndarray]:
    """Build a table from scratch; also returns the exact distances it was made from."""
    start = time.perf_counter()
    distance = bfs_distances(metric)
    counts = np.bincount(distance[distance != UNSEEN]).tolist()
    packed = pack_mod3(distance)
    return PocketTable(metric, packed, counts, time.perf_counter() - start, False), distance


def cache_name(metric: str) -> str:
    return f"pocket-{metric}-v{FORMAT_VERSION}.bin"


@lru_cache(maxsize=None)
def load_table(metric: str = "htm") -> PocketTable:
    """The table for a metric: from the cache when valid, else built and cached."""
    check_metric(metric)
    found = read_table(cache_name(metric))
    if found is not None:
        header, payload = found
        if header.get("states") == STATES and len(payload) == STATES // 4:
            return PocketTable(metric, payload, header["counts"], header["build_s"], True)
    table, _ = build_table(metric)
    header = {"version": FORMAT_VERSION, "metric": metric, "states": STATES,
              "counts": table.counts, "build_s": table.build_s}
    write_table(cache_name(metric), header, table.packed)
    return table
