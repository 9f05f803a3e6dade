import numpy as np
import pytest

import solver.search.closed as closed
from solver.puzzles.cube.batch import KEY_DTYPE
from solver.search.closed import EMPTY, ClosedSet


def keys_of(pairs) -> np.ndarray:
    out = np.zeros(len(pairs), dtype=KEY_DTYPE)
    out["corners"], out["edges"] = np.asarray(pairs, dtype=np.uint64).T
    return out


def reference(batches):
    """What a dict filled child by child gives: (fresh indices, seen ids) per batch."""
    ids, out = {}, []
    for batch in batches:
        before, fresh, seen = dict(ids), [], []
        for i, key in enumerate(map(tuple, batch)):
            seen.append(before.get(key, EMPTY))
            if key not in ids:
                ids[key] = len(ids)
                fresh.append(i)
        out.append((fresh, seen))
    return out


def check(batches, table):
    count = 0
    for batch, (fresh, seen) in zip(batches, reference(batches)):
        got_fresh, got_seen = table.add_batch(keys_of(batch), count)
        assert got_fresh.tolist() == fresh and got_seen.tolist() == seen
        count += len(fresh)
    assert len(table) == count


# Both ways of probing: compiled (closed.c) where this machine compiles it, and numpy.
WAYS = [pytest.param(True, id="compiled"), pytest.param(False, id="numpy")]


@pytest.fixture(params=WAYS)
def compiled(request):
    if request.param and closed.COMPILED.library() is None:
        pytest.skip(f"closed.c not compiled: {closed.COMPILED.status()}")
    return request.param


def test_batches_with_repeats_within_and_across_them_and_growth(compiled):
    rng = np.random.default_rng(0)
    pool = rng.integers(0, 1 << 40, size=(3000, 2), dtype=np.uint64)
    batches = [pool[rng.integers(0, len(pool), 700)] for _ in range(12)]
    table = ClosedSet(capacity_log2=4, compiled=compiled)
    check(batches, table)
    assert table.bits > 4 and 2 * len(table) <= 1 << table.bits


def test_states_sharing_a_hash_stay_apart(monkeypatch, compiled):
    """Every key hashed alike: the table must probe past the others and tell them apart by the whole key."""
    monkeypatch.setattr(closed, "key_hashes", lambda keys: np.full(len(keys), 12345, dtype=np.uint64))
    rng = np.random.default_rng(1)
    pool = rng.integers(0, 1 << 20, size=(60, 2), dtype=np.uint64)
    batches = [pool[rng.integers(0, len(pool), 25)] for _ in range(5)]
    check(batches, ClosedSet(capacity_log2=3, compiled=compiled))


def test_keys_homed_at_the_last_slots_wrap_round_when_the_table_grows(monkeypatch, compiled):
    """Every key's home one of the table's last slots: growing must place the overflow at its start."""
    monkeypatch.setattr(closed, "hash_bits", lambda hashes, bits: ((1 << bits) - 2 + hashes % 2).astype(np.int64))
    rng = np.random.default_rng(2)
    pool = rng.integers(0, 1 << 30, size=(80, 2), dtype=np.uint64)
    batches = [pool[rng.integers(0, len(pool), 30)] for _ in range(6)]
    check(batches, ClosedSet(capacity_log2=2, compiled=compiled))


def test_the_compiled_probing_can_be_turned_off_and_says_so(monkeypatch, tmp_path):
    monkeypatch.setenv("ROBOTD_CLOSED_SET_NATIVE", "0")
    closed.COMPILED.forget()
    try:
        assert closed.COMPILED.library() is None and "ROBOTD_CLOSED_SET_NATIVE=0" in closed.COMPILED.status()
        check([[(1, 2), (3, 4), (1, 2)]], ClosedSet(capacity_log2=2))  # numpy, as asked
    finally:
        monkeypatch.undo()
        closed.COMPILED.forget()
