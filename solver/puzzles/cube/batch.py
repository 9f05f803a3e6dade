"""Vectorised operations on many cube states at once (numpy, shape (N, slots)).

A batch state is a uint8 row per cube: one value per slot, corners first
(``piece * 3 + twist``) then, on a 3x3, edges (``piece * 2 + flip``), the
cubie convention of ``solver.puzzles.cube.cubie``. Every value is below 24, so a move is
one gather of source slots and one table look-up, for any number of states.

``Puzzle.cube3()`` has all 18 moves; ``Puzzle.cube2()`` keeps DLB fixed and
has the 9 moves of U, R and F. Move ids are those of ``solver.puzzles.cube.notation``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from .cubie import CubieCube, move_cube
from .geometry import CORNER_SLOTS, EDGE_SLOTS, FACES, corner_facelets, edge_facelets
from .notation import QUARTER_TURNS

VALUES = 24  # distinct values a slot can hold
KEY_DTYPE = np.dtype([("corners", "<u8"), ("edges", "<u8")])
KEY_BYTES = np.dtype((np.void, KEY_DTYPE.itemsize))  # a key as one 16-byte value


@dataclass(frozen=True, eq=False)
class Puzzle:
    size: int
    moves: tuple[int, ...]  # notation move ids, in the order of the batch move axis
    source: np.ndarray  # (moves, slots): slot i takes the piece from slot source[m, i]
    flat_lut: np.ndarray  # (moves * slots * 24,): new value of slot i given the old one
    lut_base: np.ndarray  # (moves, slots) offsets into flat_lut

    @property
    def slots(self) -> int:
        return self.source.shape[1]

    @property
    def quarter_turns(self) -> tuple[int, ...]:
        """Positions on the move axis of the quarter-turn moves (QTM)."""
        return tuple(k for k, m in enumerate(self.moves) if m in QUARTER_TURNS)

    @staticmethod
    @cache
    def cube3() -> Puzzle:
        return _build(3, tuple(range(18)))

    @staticmethod
    @cache
    def cube2() -> Puzzle:
        return _build(2, tuple(range(9)))

    @staticmethod
    def of_size(size: int) -> Puzzle:
        return Puzzle.cube3() if size == 3 else Puzzle.cube2()


def _slot_lut(twist: int, modulus: int) -> np.ndarray:
    v = np.arange(VALUES)
    return (v // modulus) * modulus + (v % modulus + twist) % modulus


def _build(size: int, moves: tuple[int, ...]) -> Puzzle:
    slots = 20 if size == 3 else 8
    source = np.zeros((len(moves), slots), dtype=np.intp)
    lut = np.zeros((len(moves), slots, VALUES), dtype=np.uint8)
    for k, m in enumerate(moves):
        cube = move_cube(m, size)
        source[k, :8] = cube.cp
        source[k, 8:] = [8 + e for e in cube.ep]
        for i, t in enumerate(cube.co):
            lut[k, i] = _slot_lut(t, 3)
        for i, f in enumerate(cube.eo):
            lut[k, 8 + i] = _slot_lut(f, 2)
    base = (np.arange(len(moves) * slots, dtype=np.int32) * VALUES).reshape(len(moves), slots)
    for array in (source, lut, base):
        array.setflags(write=False)
    return Puzzle(size, moves, source, lut.reshape(-1), base)


def from_cubie(cube: CubieCube) -> np.ndarray:
    """One batch row (uint8) from a cubie state."""
    corners = [p * 3 + t for p, t in zip(cube.cp, cube.co)]
    edges = [p * 2 + f for p, f in zip(cube.ep, cube.eo)]
    return np.array(corners + edges, dtype=np.uint8)


def to_cubie(row: np.ndarray) -> CubieCube:
    """The cubie state of one batch row."""
    values = [int(v) for v in row]
    size = 3 if len(values) == 20 else 2
    c, e = values[:8], values[8:]
    return CubieCube(
        size, tuple(v // 3 for v in c), tuple(v % 3 for v in c), tuple(v // 2 for v in e), tuple(v % 2 for v in e)
    )


def solved(puzzle: Puzzle, count: int = 1) -> np.ndarray:
    return np.tile(from_cubie(CubieCube.solved(puzzle.size)), (count, 1))


def apply_move(puzzle: Puzzle, states: np.ndarray, move: int | np.ndarray) -> np.ndarray:
    """Apply one move (a position on the puzzle's move axis, or one per state) to N states."""
    move = np.asarray(move)
    gathered = np.take_along_axis(states, puzzle.source[move], axis=-1) if move.ndim else states[:, puzzle.source[move]]
    return np.take(puzzle.flat_lut, puzzle.lut_base[move] + gathered)


def apply_all_moves(puzzle: Puzzle, states: np.ndarray, moves: tuple[int, ...] | None = None) -> np.ndarray:
    """Every move (or the given move axis positions) applied to N states: shape (N, moves, slots)."""
    picked = np.arange(len(puzzle.moves)) if moves is None else np.asarray(moves)
    n = len(states)
    gathered = states[:, puzzle.source[picked].ravel()]
    out = np.take(puzzle.flat_lut, puzzle.lut_base[picked].ravel() + gathered)
    return out.reshape(n, len(picked), puzzle.slots)


def is_solved(puzzle: Puzzle, states: np.ndarray) -> np.ndarray:
    return (states == solved(puzzle)[0]).all(axis=-1)


def one_hot(states: np.ndarray, dtype=np.float32) -> np.ndarray:
    """One-hot encoding of each slot's value: shape (N, slots * 24)."""
    n, slots = states.shape
    out = np.zeros((n, slots * VALUES), dtype=dtype)
    index = states.astype(np.int32) + np.arange(slots, dtype=np.int32) * VALUES
    np.put_along_axis(out, index, 1, axis=1)
    return out


def state_keys(states: np.ndarray) -> np.ndarray:
    """Exact compact keys (16 bytes, KEY_DTYPE) for hashing and duplicate detection: slot i's value in
    bits 5i.. of the corners' word (8 corner slots), edge slot j's in bits 5j.. of the edges' word."""
    # Packed two slots, then four, at a time in narrow integers: a few passes over whole columns, where a
    # sum over each row's 20 shifted values took four times as long.
    pairs = states[:, 0::2].astype(np.uint16) | (states[:, 1::2].astype(np.uint16) << np.uint16(5))
    fours = (pairs[:, 0::2].astype(np.uint32) | (pairs[:, 1::2].astype(np.uint32) << np.uint32(10))).astype(np.uint64)
    keys = np.zeros(len(states), dtype=KEY_DTYPE)
    keys["corners"] = fours[:, 0] | (fours[:, 1] << np.uint64(20))
    if states.shape[1] > 8:
        keys["edges"] = fours[:, 2] | (fours[:, 3] << np.uint64(20)) | (fours[:, 4] << np.uint64(40))
    return keys


_KEY_MIX = np.uint64(0x9E3779B97F4A7C15)  # odd multiplier spreading the corner key over all 64 bits
_BITS_MIX = np.uint64(0xD6E8FEB86659FD93)  # another, so that a hash's top bits depend on all of it


def key_hashes(keys: np.ndarray) -> np.ndarray:
    """A 64-bit hash (uint64) of each ``state_keys`` key."""
    with np.errstate(over="ignore"):
        return keys["edges"] ^ (keys["corners"] * _KEY_MIX)


def hash_bits(hashes: np.ndarray, bits: int) -> np.ndarray:
    """``bits`` bits (int64, 0 .. 2**bits - 1) of each hash, mixed from all of its 64: a slot in a table of
    2**bits."""
    with np.errstate(over="ignore"):
        return ((hashes * _BITS_MIX) >> np.uint64(64 - bits)).astype(np.int64)


def state_key_bytes(states: np.ndarray) -> list[bytes]:
    """``state_keys`` as one ``bytes`` per state, for dict look-ups (one conversion for the whole batch)."""
    return state_keys(states).view(KEY_BYTES).tolist()


@cache
def _facelet_lut(size: int) -> tuple[np.ndarray, np.ndarray]:
    """(slot of each facelet, (facelets, 24) face index for each slot value); centres use slot -1."""
    count = 6 * size * size
    slot_of = np.full(count, -1, dtype=np.intp)
    lut = np.zeros((count, VALUES), dtype=np.uint8)
    for face in range(6):
        lut[face * size * size + size * size // 2] = face  # centres of a 3x3; a 2x2 overwrites below
    for slot, where in enumerate(corner_facelets(size)):
        for k, index in enumerate(where):
            slot_of[index] = slot
            lut[index] = [FACES.index(CORNER_SLOTS[v // 3][(k - v % 3) % 3]) for v in range(VALUES)]
    if size == 3:
        for slot, where in enumerate(edge_facelets()):
            for k, index in enumerate(where):
                slot_of[index] = 8 + slot
                lut[index] = [FACES.index(EDGE_SLOTS[v // 2][(k + v % 2) % 2]) for v in range(VALUES)]
    return slot_of, lut


def to_facelet_array(states: np.ndarray) -> np.ndarray:
    """Face index (0..5 = U R F D L B) of every facelet: shape (N, 54) or (N, 24)."""
    size = 3 if states.shape[1] == 20 else 2
    slot_of, lut = _facelet_lut(size)
    values = states[:, np.maximum(slot_of, 0)].astype(np.intp)
    return lut[np.arange(len(slot_of)), values]
