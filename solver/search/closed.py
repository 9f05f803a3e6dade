"""The states a search has generated: exact 16-byte state keys to node ids, in numpy arrays.

An open-addressing hash table with linear probing, searched and filled a whole batch of keys at a time, so
the A* spends a few numpy passes per expansion instead of one Python dict look-up per child (a quarter of
its time with the per-child network). Keys are compared whole, so two states are never taken for one.

Where the machine has a C compiler the probing runs in ``closed.c`` (``solver.compiled``; off with
``ROBOTD_CLOSED_SET_NATIVE=0``), one key after another, on the same arrays and home slots: the batched
claims below cost several numpy passes per probe step. Compiled, a table fills about five times quicker
and a whole search takes about 5% less time (docs/solver.md).
"""

from __future__ import annotations

import ctypes
from functools import cache
from pathlib import Path

import numpy as np

from ..compiled import CompiledSource
from ..puzzles.cube.batch import KEY_DTYPE, hash_bits, key_hashes

COMPILED = CompiledSource(Path(__file__).with_name("closed.c"), "closed-set", "ROBOTD_CLOSED_SET_NATIVE")
EMPTY = -1
_CLAIMED = -2  # a slot claimed by the pending key i holds _CLAIMED - i until one claim is kept


class ClosedSet:
    """State keys to node ids; at most half full, doubling as it grows."""

    def __init__(self, capacity_log2: int = 16, compiled: bool = True):
        """``compiled``: probe in ``closed.c`` where it could be compiled (False: always in numpy)."""
        self._allocate(capacity_log2)
        self.count = 0
        library = COMPILED.library() if compiled else None
        self._loops = _loops(library) if library is not None else None

    def _allocate(self, capacity_log2: int) -> None:
        self.bits = capacity_log2
        self.keys = np.zeros(1 << capacity_log2, dtype=KEY_DTYPE)
        self.ids = np.full(1 << capacity_log2, EMPTY, dtype=np.int32)  # node ids; a search stops far below 2**31

    def __len__(self) -> int:
        return self.count

    def add_batch(self, keys: np.ndarray, first_id: int) -> tuple[np.ndarray, np.ndarray]:
        """Enter a batch of keys. Returns (``fresh``: the index in ``keys`` of each key not seen before, its
        first occurrence, in order; they are entered under ``first_id``, ``first_id + 1``, ...; ``seen``: the
        node id of each key entered before this batch, ``EMPTY`` for the others)."""
        self._grow_for(len(keys))
        homes = hash_bits(key_hashes(keys), self.bits)
        if self._loops is not None:
            return self._add_compiled(self._loops[0], np.ascontiguousarray(keys), homes, first_id)
        seen, holder, slot = self._probe(keys, homes)
        won = np.flatnonzero(holder == np.arange(len(keys)))
        first = np.full(len(keys), len(keys))  # per winning key, the first index of its equal keys
        new = np.flatnonzero(seen == EMPTY)
        np.minimum.at(first, holder[new], new)
        fresh = np.sort(first[won])
        self.ids[slot[won]] = first_id + np.searchsorted(fresh, first[won])
        self.count += len(fresh)
        return fresh, seen

    def _add_compiled(self, add, keys: np.ndarray, homes: np.ndarray, first_id: int) -> tuple[np.ndarray, np.ndarray]:
        fresh, seen = np.empty(len(keys), dtype=np.int64), np.empty(len(keys), dtype=np.int64)
        count = add(
            keys.ctypes.data,
            homes.ctypes.data,
            len(keys),
            self.keys.ctypes.data,
            self.ids.ctypes.data,
            (1 << self.bits) - 1,
            first_id,
            fresh.ctypes.data,
            seen.ctypes.data,
        )
        self.count += count
        return fresh[:count], seen

    def _probe(self, keys: np.ndarray, homes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Find each key, or claim a free slot for it, all keys at once, starting at their ``homes``. Returns
        (the id of each key found from before, else EMPTY; for each key new to the table, the index of the
        equal key whose claim holds its slot, else -1; each key's slot). Claimed slots keep their _CLAIMED
        marks for the caller."""
        slots, pending, mask = homes.copy(), np.arange(len(keys)), (1 << self.bits) - 1
        seen, holder = np.full(len(keys), EMPTY, dtype=np.int64), np.full(len(keys), -1, dtype=np.int64)
        while len(pending):
            at = slots[pending]
            held = self.ids[at]
            free = held == EMPTY
            claims = _CLAIMED - pending[free]
            self.ids[at[free]] = claims
            won = np.zeros(len(pending), dtype=bool)
            won[free] = self.ids[at[free]] == claims
            self.keys[at[won]], holder[pending[won]] = keys[pending[won]], pending[won]
            # A key that lost its claim tries the same slot again: it may have lost to an equal key.
            match = ~free & (self.keys[at] == keys[pending])
            old, twin = match & (held >= 0), match & (held < EMPTY)
            seen[pending[old]], holder[pending[twin]] = held[old], _CLAIMED - held[twin]
            moving = ~free & ~match
            slots[pending[moving]] = (at[moving] + 1) & mask
            pending = pending[~(won | match)]
        return seen, holder, slots

    def _grow_for(self, more: int) -> None:
        if 2 * (self.count + more) <= len(self.ids):
            return
        used = np.flatnonzero(self.ids != EMPTY)
        keys, ids = self.keys[used], self.ids[used]
        bits = self.bits
        while 2 * (self.count + more) > 1 << bits:
            bits += 1
        self._allocate(bits)
        self._rehash(keys, ids)

    def _rehash(self, keys: np.ndarray, ids: np.ndarray) -> None:
        """Enter distinct keys into the empty table (compiled: one after another). In numpy, at once: sorted by
        home slot, each takes the first slot at or after its home not taken by the keys before it, a running
        maximum; the few that would run past the end wrap round through ``_probe`` (absent and distinct, each
        claims a slot of its own)."""
        homes = hash_bits(key_hashes(keys), self.bits)
        if self._loops is not None:
            _, place = self._loops
            keys, ids = np.ascontiguousarray(keys), np.ascontiguousarray(ids, dtype=np.int32)
            place(
                keys.ctypes.data,
                homes.ctypes.data,
                ids.ctypes.data,
                len(keys),
                self.keys.ctypes.data,
                self.ids.ctypes.data,
                (1 << self.bits) - 1,
            )
            self.count = len(keys)
            return
        order = np.argsort(homes, kind="stable")
        homes, rank = homes[order], np.arange(len(order))
        slots = rank + np.maximum.accumulate(homes - rank) if len(order) else homes
        inside = slots < len(self.ids)
        placed = order[inside]
        self.keys[slots[inside]], self.ids[slots[inside]] = keys[placed], ids[placed]
        self.count = len(placed)
        wrapped = order[~inside]
        _, _, slot = self._probe(keys[wrapped], homes[~inside])
        self.ids[slot] = ids[wrapped]
        self.count += len(wrapped)


@cache
def _loops(library: ctypes.CDLL) -> tuple:
    """``closed.c``'s two functions with their argument types (arrays by address)."""
    add, place = library.closed_add, library.closed_place
    pointer, i64 = ctypes.c_void_p, ctypes.c_int64
    add.restype, add.argtypes = i64, [pointer, pointer, i64, pointer, pointer, i64, ctypes.c_int32, pointer, pointer]
    place.restype, place.argtypes = None, [pointer, pointer, pointer, i64, pointer, pointer, i64]
    return add, place
