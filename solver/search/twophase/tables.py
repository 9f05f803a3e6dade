"""Pruning tables of the two-phase solver: exact distances in pairs of coordinates.

Each table holds, for every value of a pair of coordinates, the fewest moves
that bring that pair to solved; it is a lower bound on the moves left for
any cube with those coordinates (the heuristic of the IDA* searches).

- phase 1, 18 moves: twist x slice (1,082,565), flip x slice (1,013,760)
  and twist x flip (4,478,976);
- phase 2, the 10 G1 moves: corner_perm x slice_perm and ud_edge_perm x
  slice_perm (967,680 each), and corner_perm x ud_split (2,822,400).

They are built by numpy breadth-first search (a layer is expanded forwards
from the frontier, or found backwards from the unseen states when those are
fewer: both move sets hold each move's inverse), cached packed two distances
per byte through ``solver.tables.cache``, and handed to the search as one byte per
entry.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache

import numpy as np

from ...tables.cache import read_table, write_table
from .coords import (
    CORNER_PERMS,
    FLIPS,
    SLICE_PERMS,
    SLICES,
    TWISTS,
    UD_EDGE_PERMS,
    UD_SPLITS,
    corner_perm_moves,
    flip_moves,
    slice_moves,
    slice_perm_moves,
    twist_moves,
    ud_edge_perm_moves,
    ud_split_moves,
)

UNSEEN = 255
FORMAT_VERSION = 1
CACHE_NAME = f"twophase-v{FORMAT_VERSION}.bin"

# name: (first coordinate's move table, second's); entry index = first * len(second) + second.
TABLES = {
    "twist_slice": (twist_moves, slice_moves),
    "flip_slice": (flip_moves, slice_moves),
    "twist_flip": (twist_moves, flip_moves),
    "corner_slice_perm": (corner_perm_moves, slice_perm_moves),
    "edge_slice_perm": (ud_edge_perm_moves, slice_perm_moves),
    "corner_ud_split": (corner_perm_moves, ud_split_moves),
}
SIZES = {
    "twist_slice": TWISTS * SLICES,
    "flip_slice": FLIPS * SLICES,
    "twist_flip": TWISTS * FLIPS,
    "corner_slice_perm": CORNER_PERMS * SLICE_PERMS,
    "edge_slice_perm": UD_EDGE_PERMS * SLICE_PERMS,
    "corner_ud_split": CORNER_PERMS * UD_SPLITS,
}


def _neighbours(states: np.ndarray, first: np.ndarray, second: np.ndarray, move: int) -> np.ndarray:
    a, b = np.divmod(states, len(second))
    return first[a, move].astype(np.int64) * len(second) + second[b, move]


def bfs_distances(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Distance (uint8) from (0, 0) of every pair of coordinates, given both move tables."""
    size, moves = len(first) * len(second), first.shape[1]
    distance = np.full(size, UNSEEN, dtype=np.uint8)
    distance[0] = 0
    frontier = np.array([0], dtype=np.int64)
    unseen = size - 1
    depth = 0
    while len(frontier) and unseen:
        if len(frontier) <= unseen:
            for move in range(moves):
                reached = _neighbours(frontier, first, second, move)
                distance[reached[distance[reached] == UNSEEN]] = depth + 1
        else:
            candidates = np.flatnonzero(distance == UNSEEN)
            for move in range(moves):
                near = distance[_neighbours(candidates, first, second, move)] == depth
                distance[candidates[near]] = depth + 1
                candidates = candidates[~near]
        depth += 1
        frontier = np.flatnonzero(distance == depth)
        unseen -= len(frontier)
    if unseen:
        raise RuntimeError(f"{unseen} coordinate pairs are unreachable: the move tables are inconsistent")
    return distance


def packed_size(count: int) -> int:
    return (count + 1) // 2


def pack_nibbles(distance: np.ndarray) -> bytes:
    """Two distances per byte, the even entry in the low four bits (an odd count is padded with 0)."""
    if distance.max(initial=0) > 15:
        raise ValueError(f"nibble packing needs distances below 16, got {int(distance.max())}")
    padded = np.zeros(2 * packed_size(len(distance)), dtype=np.uint8)
    padded[: len(distance)] = distance
    pairs = padded.reshape(-1, 2)
    return (pairs[:, 0] | (pairs[:, 1] << 4)).astype(np.uint8).tobytes()


def unpack_nibbles(packed: bytes, count: int) -> np.ndarray:
    """The first ``count`` distances of a nibble-packed table."""
    b = np.frombuffer(packed, dtype=np.uint8)
    return np.stack([b & 15, b >> 4], axis=1).reshape(-1)[:count]


@dataclass
class TwoPhaseTables:
    """The four pruning tables, one byte per entry (index as in ``TABLES``)."""

    twist_slice: bytes
    flip_slice: bytes
    twist_flip: bytes
    corner_slice_perm: bytes
    edge_slice_perm: bytes
    corner_ud_split: bytes
    counts: dict[str, list[int]]
    build_s: float
    cached: bool

    def distances(self, name: str) -> np.ndarray:
        return np.frombuffer(getattr(self, name), dtype=np.uint8)


def build_tables() -> TwoPhaseTables:
    """All four tables from scratch (move tables included in the time)."""
    start = time.perf_counter()
    built = {name: bfs_distances(first(), second()) for name, (first, second) in TABLES.items()}
    counts = {name: np.bincount(d).tolist() for name, d in built.items()}
    return TwoPhaseTables(
        **{name: d.tobytes() for name, d in built.items()},
        counts=counts,
        build_s=time.perf_counter() - start,
        cached=False,
    )


def _from_payload(header: dict, payload: bytes) -> TwoPhaseTables | None:
    if header.get("version") != FORMAT_VERSION or header.get("sizes") != SIZES:
        return None
    if len(payload) != sum(packed_size(size) for size in SIZES.values()):
        return None
    tables, offset = {}, 0
    for name, size in SIZES.items():
        tables[name] = unpack_nibbles(payload[offset : offset + packed_size(size)], size).tobytes()
        offset += packed_size(size)
    return TwoPhaseTables(**tables, counts=header["counts"], build_s=header["build_s"], cached=True)


@cache
def load_tables() -> TwoPhaseTables:
    """The pruning tables: from the cache when valid, else built and cached."""
    found = read_table(CACHE_NAME)
    if found is not None:
        tables = _from_payload(*found)
        if tables is not None:
            return tables
    tables = build_tables()
    payload = b"".join(pack_nibbles(tables.distances(name)) for name in SIZES)
    header = {"version": FORMAT_VERSION, "sizes": SIZES, "counts": tables.counts, "build_s": tables.build_s}
    write_table(CACHE_NAME, header, payload)
    return tables
