"""The states a search has generated: exact 16-byte state keys to node ids, in numpy arrays.

An open-addressing hash table with linear probing, searched and filled a whole batch of keys at a time, so
the A* spends a few numpy passes per expansion instead of one Python dict look-up per child (a quarter of
its time with the per-child network). Keys are compared whole, so two states are never taken for one.
"""

from __future__ import annotations

import numpy as np

from ..puzzles.cube.batch import KEY_DTYPE, hash_bits, key_hashes

EMPTY = -1
_CLAIMED = -2  # a slot claimed by the pending key i holds _CLAIMED - i until one claim is kept


class ClosedSet:
    """State keys to node ids; at most half full, doubling as it grows."""

    def __init__(self, capacity_log2: int = 16):
        self._allocate(capacity_log2)
        self.count = 0

    def _allocate(self, capacity_log2: int) -> None:
        self.bits = capacity_log2
        self.keys = np.zeros(1 << capacity_log2, dtype=KEY_DTYPE)
        self.ids = np.full(1 << capacity_log2, EMPTY, dtype=np.int64)

    def __len__(self) -> int:
        return self.count

    def add_batch(self, keys: np.ndarray, first_id: int) -> tuple[np.ndarray, np.ndarray]:
        """Enter a batch of keys. Returns (``fresh``: the index in ``keys`` of each key not seen before, its
        first occurrence, in order; they are entered under ``first_id``, ``first_id + 1``, ...; ``seen``: the
        node id of each key entered before this batch, ``EMPTY`` for the others)."""
        hashes = key_hashes(keys)
        unique, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
        if not np.array_equal(keys[first][inverse], keys):  # two states share a hash within the batch
            unique, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
            hashes = key_hashes(keys)
            unique = hashes[first]
        found = self._find(unique, keys[first])
        new = np.flatnonzero(found == EMPTY)
        new = new[np.argsort(first[new], kind="stable")]
        fresh = first[new]
        self._grow_for(len(fresh))
        self._insert(hashes[fresh], keys[fresh], first_id + np.arange(len(fresh)))
        return fresh, found[inverse]

    def _find(self, hashes: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """The id of each key, or EMPTY."""
        out = np.full(len(keys), EMPTY, dtype=np.int64)
        slots, pending, mask = hash_bits(hashes, self.bits), np.arange(len(keys)), (1 << self.bits) - 1
        while len(pending):
            at = slots[pending]
            ids = self.ids[at]
            match = (ids != EMPTY) & (self.keys[at] == keys[pending])
            out[pending[match]] = ids[match]
            going_on = (ids != EMPTY) & ~match
            slots[pending[going_on]] = (at[going_on] + 1) & mask
            pending = pending[going_on]
        return out

    def _insert(self, hashes: np.ndarray, keys: np.ndarray, ids: np.ndarray) -> None:
        """Enter keys known to be absent (and distinct) under ``ids``."""
        slots, pending, mask = hash_bits(hashes, self.bits), np.arange(len(keys)), (1 << self.bits) - 1
        while len(pending):
            at = slots[pending]
            free = self.ids[at] == EMPTY
            # Of the keys wanting one free slot, the one whose claim stays written takes it.
            claims = _CLAIMED - pending[free]
            self.ids[at[free]] = claims
            won = np.zeros(len(pending), dtype=bool)
            won[free] = self.ids[at[free]] == claims
            self.keys[at[won]], self.ids[at[won]] = keys[pending[won]], ids[pending[won]]
            slots[pending[~won]] = (at[~won] + 1) & mask
            pending = pending[~won]
        self.count += len(keys)

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
        """Enter distinct keys into the empty table at once: sorted by home slot, each takes the first slot
        at or after its home not taken by the keys before it, a running maximum; the few that would run past
        the end wrap round through ``_insert``."""
        hashes = key_hashes(keys)
        homes = hash_bits(hashes, self.bits)
        order = np.argsort(homes, kind="stable")
        homes, rank = homes[order], np.arange(len(order))
        slots = rank + np.maximum.accumulate(homes - rank) if len(order) else homes
        inside = slots < len(self.ids)
        placed = order[inside]
        self.keys[slots[inside]], self.ids[slots[inside]] = keys[placed], ids[placed]
        self.count = len(placed)
        wrapped = order[~inside]
        self._insert(hashes[wrapped], keys[wrapped], ids[wrapped])
