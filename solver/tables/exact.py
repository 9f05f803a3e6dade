"""One byte per state: its distance from solved and a move that brings it one closer.

The table of a puzzle is built by breadth-first search over its state
indices, vectorised with numpy: the neighbours of many states under one
move come from the puzzle's per-factor move tables (``PuzzleModel.
factor_moves``), merged here into two (the first factor, and all others as
one), so a neighbour is two look-ups. Layers are grown forwards from the
frontier while it is smaller than the set of states not yet reached, and
backwards (each unreached state looks for a neighbour in the frontier)
after that, which is cheaper for the last, largest layers.

Byte ``distance << 4 | move``: the move leads to a state one closer, so an
optimal solution is a walk of one look-up per move, never a search.
Distances and move ids must fit in 4 bits each (God's numbers of the
puzzles here are 11 and they have 8 moves).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from ..puzzles import PuzzleModel
from .cache import read_table, write_table

FORMAT_VERSION = 1
UNSEEN = 255


def merge(tables: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(first factor's table, one table for all the other factors together, mixed radix)."""
    rest = tables[-1]
    for table in reversed(tables[1:-1]):
        rest = (table[:, None, :] * len(rest) + rest[None, :, :]).reshape(-1, table.shape[1])
    return tables[0].astype(np.int64), rest.astype(np.int64)


def inverse_moves(head: np.ndarray, rest: np.ndarray) -> list[int]:
    """For each move, the move that undoes it."""
    out = []
    for m in range(head.shape[1]):
        undo = [
            k
            for k in range(head.shape[1])
            if (head[head[:, m], k] == np.arange(len(head))).all()
            and (rest[rest[:, m], k] == np.arange(len(rest))).all()
        ]
        out.append(undo[0])
    return out


@dataclass
class Coordinates:
    """A puzzle's state indices and how its moves change them."""

    head: np.ndarray  # (head size, moves)
    rest: np.ndarray  # (rest size, moves)
    solved: int
    inverse: list[int] = field(init=False)

    def __post_init__(self) -> None:
        self.inverse = inverse_moves(self.head, self.rest)

    @property
    def states(self) -> int:
        return len(self.head) * len(self.rest)

    @property
    def moves(self) -> int:
        return self.head.shape[1]

    def neighbours(self, states: np.ndarray, move: int) -> np.ndarray:
        h, r = np.divmod(states, len(self.rest))
        return self.head[h, move] * len(self.rest) + self.rest[r, move]

    def fingerprint(self) -> str:
        """Changes whenever the numbering or the moves change, so a stale cached table is never used."""
        digest = hashlib.sha256(self.head.tobytes() + self.rest.tobytes() + str(self.solved).encode())
        return digest.hexdigest()[:16]


def coordinates(puzzle: PuzzleModel) -> Coordinates:
    head, rest = merge(puzzle.factor_moves())
    return Coordinates(head, rest, puzzle.rank(puzzle.solved))


def bfs_codes(coords: Coordinates) -> np.ndarray:
    """The table: ``distance << 4 | move`` (uint8) for every state index."""
    distance = np.full(coords.states, UNSEEN, dtype=np.uint8)
    move = np.zeros(coords.states, dtype=np.uint8)
    distance[coords.solved] = 0
    frontier, depth, unseen = np.array([coords.solved], dtype=np.int64), 0, coords.states - 1
    while len(frontier):
        if len(frontier) < unseen:
            _grow_forwards(coords, frontier, depth, distance, move)
        else:
            _grow_backwards(coords, depth, distance, move)
        depth += 1
        frontier = np.flatnonzero(distance == depth)
        unseen -= len(frontier)
    if unseen or depth > 16 or coords.moves > 16:
        raise RuntimeError(f"table does not fit: {unseen} states unreachable, depth {depth}, {coords.moves} moves")
    return (distance << 4) | move


def _grow_forwards(coords: Coordinates, frontier: np.ndarray, depth: int, distance, move) -> None:
    for m in range(coords.moves):
        reached = coords.neighbours(frontier, m)
        new = reached[distance[reached] == UNSEEN]
        distance[new] = depth + 1
        move[new] = coords.inverse[m]


def _grow_backwards(coords: Coordinates, depth: int, distance, move) -> None:
    candidates = np.flatnonzero(distance == UNSEEN)
    for m in range(coords.moves):
        hit = distance[coords.neighbours(candidates, m)] == depth
        distance[candidates[hit]] = depth + 1
        move[candidates[hit]] = m
        candidates = candidates[~hit]


@dataclass
class ExactTable:
    """A loaded table and a walk down it."""

    puzzle: str
    codes: bytes
    counts: list[int]
    build_s: float
    cached: bool
    coords: Coordinates

    def __post_init__(self) -> None:
        size = len(self.coords.rest)
        # Python lists: per-state look-ups in a short loop beat numpy call overhead.
        self._head = (self.coords.head * size).tolist()
        self._rest = self.coords.rest.tolist()

    @property
    def gods_number(self) -> int:
        return len(self.counts) - 1

    def distance(self, index: int) -> int:
        return self.codes[index] >> 4

    def walk(self, index: int) -> list[int]:
        """Optimal move ids (tracked moves) from state ``index`` to solved."""
        codes, head, rest, size = self.codes, self._head, self._rest, len(self._rest)
        path = []
        code = codes[index]
        while code >> 4:
            m = code & 15
            h, r = divmod(index, size)
            index = head[h][m] + rest[r][m]
            path.append(m)
            code = codes[index]
        return path


def build_table(puzzle: PuzzleModel, coords: Coordinates | None = None) -> ExactTable:
    """Build a puzzle's table by breadth-first search (with its move tables, unless given)."""
    start = time.perf_counter()
    coords = coords or coordinates(puzzle)
    codes = bfs_codes(coords)
    counts = np.bincount(codes >> 4).tolist()
    return ExactTable(puzzle.name, codes.tobytes(), counts, time.perf_counter() - start, False, coords)


def cache_name(puzzle: PuzzleModel) -> str:
    return f"{puzzle.table_name}-v{FORMAT_VERSION}.bin"


@cache
def load_table(puzzle: PuzzleModel) -> ExactTable:
    """A puzzle's table: from the cache when valid, else built and cached."""
    start = time.perf_counter()
    coords = coordinates(puzzle)
    found = read_table(cache_name(puzzle))
    if found is not None:
        header, payload = found
        if header.get("fingerprint") == coords.fingerprint() and len(payload) == coords.states:
            return ExactTable(puzzle.name, payload, header["counts"], header["build_s"], True, coords)
    table = build_table(puzzle, coords)
    table.build_s = time.perf_counter() - start  # the move tables were made for the fingerprint: count them
    header = {
        "version": FORMAT_VERSION,
        "puzzle": puzzle.name,
        "states": coords.states,
        "fingerprint": coords.fingerprint(),
        "counts": table.counts,
        "build_s": table.build_s,
    }
    write_table(cache_name(puzzle), header, table.codes)
    return table
