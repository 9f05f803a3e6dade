import heapq

import numpy as np
import pytest

from solver.search.open_list import OpenList


def heap_order(pushes_and_pops):
    """What a heap on (f, insertion order) pops for the same calls."""
    heap, tie, out = [], 0, []
    for kind, value in pushes_and_pops:
        if kind == "push":
            f, ids = value
            for entry in zip(f.tolist(), range(tie, tie + len(ids)), ids.tolist()):
                heapq.heappush(heap, entry)
            tie += len(ids)
        else:
            out.append([heapq.heappop(heap)[2] for _ in range(min(value, len(heap)))])
    return out


def open_list_order(pushes_and_pops, refill):
    open_list, out = OpenList(refill=refill), []
    for kind, value in pushes_and_pops:
        if kind == "push":
            open_list.push(*value)
        else:
            out.append(open_list.pop(value).tolist())
    return out, len(open_list)


def a_search_like_run(seed, rounds=60, coarse=True):
    """Batches of pushes and pops as a search makes them; coarse f values give many ties."""
    rng, calls, next_id = np.random.default_rng(seed), [], 0
    for _ in range(rounds):
        n = int(rng.integers(0, 900))
        f = rng.integers(0, 40, n) * 0.5 if coarse else rng.random(n) * 20
        calls.append(("push", (f, np.arange(next_id, next_id + n))))
        next_id += n
        calls.append(("pop", int(rng.integers(1, 300))))
    return calls


@pytest.mark.parametrize("refill", [1, 7, 64, 5000])
@pytest.mark.parametrize("coarse", [True, False])
def test_pops_come_out_as_from_a_heap_on_f_then_insertion_order(refill, coarse):
    calls = a_search_like_run(seed=refill, coarse=coarse)
    calls.append(("pop", 10**6))
    got, left = open_list_order(calls, refill)
    assert got == heap_order(calls)
    assert left == 0


def test_an_id_pushed_twice_comes_out_twice_in_order():
    open_list = OpenList(refill=2)
    open_list.push(np.array([3.0, 1.0]), np.array([7, 8]))
    open_list.push(np.array([1.0, 0.5]), np.array([7, 9]))
    assert open_list.pop(10).tolist() == [9, 8, 7, 7]


def test_an_empty_list_pops_nothing():
    open_list = OpenList()
    assert open_list.pop(5).tolist() == [] and len(open_list) == 0
    open_list.push(np.array([]), np.array([], dtype=np.int64))
    assert len(open_list) == 0
