"""The open list of the batched A*: node ids ordered by (f, insertion order), in numpy arrays.

A heap of Python tuples costs about 100 bytes and two interpreted heap operations an entry; a random cube's
search pushes a million or more. Here an entry is 20 bytes, and a push or pop of a whole batch is a few
numpy passes. The ``front`` holds the lowest entries, sorted, and is popped from its start; the ``back``
holds the rest, unsorted, and is only partitioned when the front runs dry. Every front entry comes before
every back entry, so pops come out in exactly the order of a heap on (f, insertion order).
"""

from __future__ import annotations

import numpy as np

# Entries moved into the front at a time. A refill partitions the whole back, so this bounds how often;
# a front past FRONT_LIMIT times this is cut back (its tail to the back), which bounds each merge.
FRONT_REFILL = 16_384
FRONT_LIMIT = 4


class _Entries:
    """Parallel arrays of f, insertion order and node id."""

    def __init__(self, f=None, tie=None, ids=None):
        self.f = np.empty(0, np.float64) if f is None else f
        self.tie = np.empty(0, np.int32) if tie is None else tie
        self.ids = np.empty(0, np.int64) if ids is None else ids

    def __len__(self) -> int:
        return len(self.f)

    def take(self, index) -> _Entries:
        return _Entries(self.f[index], self.tie[index], self.ids[index])


class _Back:
    """Unsorted entries in growing arrays."""

    def __init__(self, capacity: int = 1 << 16):
        self.f = np.empty(capacity, np.float64)
        self.tie = np.empty(capacity, np.int32)
        self.ids = np.empty(capacity, np.int64)
        self.count = 0

    def append(self, entries: _Entries) -> None:
        end = self.count + len(entries)
        if end > len(self.f):
            self._grow(end)
        self.f[self.count : end], self.tie[self.count : end], self.ids[self.count : end] = (
            entries.f,
            entries.tie,
            entries.ids,
        )
        self.count = end

    def _grow(self, needed: int) -> None:
        size = len(self.f)
        while size < needed:
            size *= 2
        for name in ("f", "tie", "ids"):
            old = getattr(self, name)
            new = np.empty(size, old.dtype)
            new[: self.count] = old[: self.count]
            setattr(self, name, new)

    def take_lowest(self, count: int) -> _Entries:
        """Remove and return the ``count`` lowest entries by (f, insertion order), sorted."""
        f = self.f[: self.count]
        if count >= self.count:
            picked = np.arange(self.count)
        else:
            cut = np.partition(f, count - 1)[count - 1]
            below = np.flatnonzero(f < cut)
            at_cut = np.flatnonzero(f == cut)
            at_cut = at_cut[np.argsort(self.tie[at_cut], kind="stable")[: count - len(below)]]
            picked = np.concatenate([below, at_cut])
        lowest = _Entries(f[picked], self.tie[picked], self.ids[picked])
        keep = np.ones(self.count, dtype=bool)
        keep[picked] = False
        kept = int(keep.sum())
        for name in ("f", "tie", "ids"):
            column = getattr(self, name)
            column[:kept] = column[: self.count][keep]
        self.count = kept
        return lowest.take(np.lexsort((lowest.tie, lowest.f)))


class OpenList:
    """Node ids, popped lowest f first and, among equal f, first pushed first."""

    def __init__(self, refill: int = FRONT_REFILL):
        self.refill = refill
        self.front = _Entries()  # sorted; popped from ``start``
        self.start = 0
        self.back = _Back()
        self.tie = 0

    def __len__(self) -> int:
        return len(self.front) - self.start + self.back.count

    def push(self, f: np.ndarray, ids: np.ndarray) -> None:
        n = len(ids)
        new = _Entries(np.asarray(f, np.float64), np.arange(self.tie, self.tie + n, dtype=np.int32), ids)
        self.tie += n
        if self.start == len(self.front):
            self.back.append(new)
            return
        # A new entry comes after every queued one of equal f, so it joins the front only if below its last.
        ahead = new.f < self.front.f[-1]
        self.back.append(new.take(~ahead))
        if ahead.any():
            self._merge(new.take(np.flatnonzero(ahead)))

    def _merge(self, new: _Entries) -> None:
        new = new.take(np.argsort(new.f, kind="stable"))
        live = self.front.take(slice(self.start, None))
        at = np.searchsorted(live.f, new.f, side="right")
        merged = _Entries(*(np.insert(getattr(live, c), at, getattr(new, c)) for c in ("f", "tie", "ids")))
        if len(merged) > FRONT_LIMIT * self.refill:
            self.back.append(merged.take(slice(self.refill, None)))
            merged = merged.take(slice(None, self.refill))
        self.front, self.start = merged, 0

    def lowest(self) -> float:
        """The lowest f queued (the list must not be empty)."""
        self._refill_if_dry(self.refill)
        return float(self.front.f[self.start])

    def _refill_if_dry(self, count: int) -> None:
        """A front popped to its end takes the lowest ``count`` entries of the back."""
        if self.start == len(self.front):
            self.front, self.start = self.back.take_lowest(count), 0

    def pop(self, batch: int) -> np.ndarray:
        """The ids of up to ``batch`` open entries with the lowest f, removed."""
        parts = []
        while batch > 0 and len(self):
            self._refill_if_dry(max(self.refill, batch))
            end = min(self.start + batch, len(self.front))
            parts.append(self.front.ids[self.start : end])
            batch -= end - self.start
            self.start = end
        return np.concatenate(parts) if parts else np.empty(0, np.int64)
