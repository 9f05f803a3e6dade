"""A rig's own time metric for 3x3x3 searches: what its motors do at once, and what each costs.

A rig turns one face at a time, or two opposite faces together where its
planner merges them (a six-motor rig: ``U D'`` takes as long as ``U``). A
search in move counts does not see that; this metric does. The rig is
known only through its planner's estimate (``planned_s``: move ids ->
seconds), so the solver stays free of any rig code: a command is a single
face turn (18), or two turns of opposite faces when the planner makes them
cheaper together than apart (up to 27 more).

``RigPerimeter`` holds the least motor time of every state that at most
``depth`` commands solve (the rig's counterpart of the quarter-turn
``perimeter``), with the walk down it. Times are kept in whole
milliseconds so that sums compare exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..puzzles.cube.batch import VALUES, Puzzle, apply_move, is_solved, solved
from ..puzzles.cube.notation import inverse_moves, move_face
from .perimeter import state_hashes

PlannedS = Callable[[Sequence[int]], float]
DEFAULT_RIG_DEPTH = 3  # 41,024 states, 0.1 s to build; depth 4 (1.2 M states) takes seconds and ~150 MB to build
NOT_WITHIN = -1
HASH_CHUNK = 65536  # states hashed at once while building: the keys take 8 bytes per slot on the way


def axis(move: int) -> int:
    """0 for U/D turns, 1 for R/L, 2 for F/B."""
    return move_face(move) % 3


@dataclass(frozen=True)
class Commands:
    """What a rig does at once: ``moves[c]`` (one move, or two opposite ones), ``ms[c]`` its motor time."""

    moves: tuple[tuple[int, ...], ...]
    ms: np.ndarray  # int32 milliseconds per command
    axes: np.ndarray  # int8 axis per command
    source: np.ndarray  # (commands, slots): the slot each slot's piece comes from
    table: np.ndarray  # (commands * slots * VALUES,) uint8: a slot's new value from its piece's old one

    @staticmethod
    def of_moves(moves: tuple[tuple[int, ...], ...], ms: np.ndarray) -> Commands:
        """Each command's moves composed into one gather and one look-up, as ``batch.apply_move`` does a move."""
        puzzle = Puzzle.cube3()
        axes = np.array([axis(c[0]) for c in moves], dtype=np.int8)
        source = np.tile(np.arange(puzzle.slots), (len(moves), 1))
        probe = np.repeat(np.arange(VALUES, dtype=np.uint8)[:, None], puzzle.slots, axis=1)  # every value in every slot
        tables = np.tile(probe, (len(moves), 1, 1))
        for c, command in enumerate(moves):
            for move in command:
                source[c] = source[c][puzzle.source[move]]
                tables[c] = apply_move(puzzle, tables[c], move)
        return Commands(moves, ms, axes, source, np.ascontiguousarray(tables.transpose(0, 2, 1)).ravel())

    @staticmethod
    def of_rig(planned_s: PlannedS) -> Commands:
        singles: list[tuple[int, ...]] = [(m,) for m in range(18)]
        pairs: list[tuple[int, ...]] = [
            (a, b)
            for a in range(18)
            for b in range(18)
            if move_face(a) < move_face(b) and axis(a) == axis(b)
            if planned_s([a, b]) < planned_s([a]) + planned_s([b]) - 1e-9
        ]
        moves = tuple(singles + pairs)
        return Commands.of_moves(moves, np.array([round(1000 * planned_s(list(c))) for c in moves], dtype=np.int32))

    def apply(self, states: np.ndarray, command: int | np.ndarray) -> np.ndarray:
        """States after one command each (``command``: one id for all, or one per state)."""
        command = np.broadcast_to(np.asarray(command), (len(states),))
        gathered = np.take_along_axis(states, self.source[command], axis=1)
        slots = states.shape[1]
        base = (command[:, None] * slots + np.arange(slots)[None, :]) * VALUES
        return np.take(self.table, base + gathered)

    def expand(self, states: np.ndarray, last_axes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every command on another axis than each state's last one: (parent index, command id, child)."""
        allowed = self.axes[None, :] != last_axes[:, None]
        parent, command = np.nonzero(allowed)
        return parent, command, self.apply(states[parent], command)


class RigPerimeter:
    """Least motor time (ms) of the states that ``depth`` commands or fewer solve."""

    def __init__(self, commands: Commands, depth: int):
        self.commands, self.depth = commands, depth
        self.hashes, self.ms = _build(commands, depth)

    def __len__(self) -> int:
        return len(self.hashes)

    def lookup(self, states: np.ndarray) -> np.ndarray:
        """Least motor time (int64 ms) of each state, or ``NOT_WITHIN`` when more than ``depth`` commands away."""
        query = state_hashes(states)
        index = np.minimum(np.searchsorted(self.hashes, query), len(self.hashes) - 1)
        return np.where(self.hashes[index] == query, self.ms[index].astype(np.int64), NOT_WITHIN)

    def finish(self, state: np.ndarray) -> list[int] | None:
        """Moves taking a state of the table to solved in its least motor time; None if the walk fails
        (only a shared hash can make it)."""
        row = state[None]
        path: list[int] = []
        left = int(self.lookup(row)[0])
        for _ in range(2 * self.depth + 2):
            if left == 0:
                return path if is_solved(Puzzle.cube3(), row)[0] else None
            children = self.commands.apply(
                np.repeat(row, len(self.commands.ms), axis=0), np.arange(len(self.commands.ms))
            )
            ms = self.lookup(children)
            total = np.where(ms == NOT_WITHIN, np.iinfo(np.int64).max, ms + self.commands.ms)
            best = int(total.argmin())
            if ms[best] == NOT_WITHIN or ms[best] >= left:
                return None
            row, left = children[best][None], int(ms[best])
            path.extend(self.commands.moves[best])
        return None


def _build(commands: Commands, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """(sorted hashes, least ms) of the states within ``depth`` commands of solved.

    Grows backwards from solved: a state one command further is the inverse of
    that command applied, and that command is the first its solution makes.
    """
    undo = Commands.of_moves(tuple(tuple(inverse_moves(c)) for c in commands.moves), commands.ms)
    frontier, ms, first_axis = solved(Puzzle.cube3()), np.zeros(1, np.int64), np.full(1, -1, np.int8)
    hashes_all, ms_all = [state_hashes(frontier)], [ms]
    for _ in range(depth):
        parent, command, children = undo.expand(frontier, first_axis)
        child_ms = ms[parent] + commands.ms[command]
        hashes = _hashes_in_chunks(children)
        order = np.lexsort((child_ms, hashes))
        keep = order[np.r_[True, hashes[order][1:] != hashes[order][:-1]]]  # the cheapest of each state
        frontier, ms, first_axis = children[keep], child_ms[keep], commands.axes[command[keep]]
        hashes_all.append(hashes[keep])
        ms_all.append(ms)
    hashes, least = np.concatenate(hashes_all), np.concatenate(ms_all)
    order = np.lexsort((least, hashes))
    keep = order[np.r_[True, hashes[order][1:] != hashes[order][:-1]]]
    return hashes[keep], least[keep].astype(np.uint16)


def _hashes_in_chunks(states: np.ndarray) -> np.ndarray:
    return np.concatenate([state_hashes(states[low : low + HASH_CHUNK]) for low in range(0, len(states), HASH_CHUNK)])
