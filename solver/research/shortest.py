"""Exact baselines for distances to solved: Dijkstra and a linear program, checked against breadth-first search.

``dijkstra`` runs scipy's sparse-graph Dijkstra (a binary heap in C) on the
move graph with unit weights, from solved over the reversed edges.
``heap_dijkstra`` is the textbook algorithm in pure Python with ``heapq``,
kept only to time what a Python Dijkstra costs (the paper's took days).

``lp_distances`` solves shortest paths as a min-cost flow with HiGHS: every
state but solved supplies one unit, solved absorbs them all, each move is an
arc of cost 1::

    minimise  sum_e x_e  subject to  out(v) - in(v) = 1  (v != solved),  x >= 0

Its dual is the potential form ``maximise sum d(v) subject to d(u) - d(v) <= 1
for each arc u -> v, d(solved) = 0``, whose unique optimum is the distance
table, so the distances are the duals of the flow rows. The flow form is
solved, not the potential form: it has one row per state (3.7 M) instead of
one per arc (22 M), which is what an interior-point method factorises (the
flow form was 2-2.5x faster than the potential form on slices of 160 k-520 k
states). ``certify`` checks a distance table on its own (Bellman's
conditions), so an LP answer is exact without trusting tolerances.
"""

from __future__ import annotations

import heapq
import warnings

import numpy as np
from scipy import sparse
from scipy.optimize import OptimizeWarning, linprog
from scipy.sparse.csgraph import dijkstra as csgraph_dijkstra

from .graphs import StateGraph


def reversed_arcs(graph: StateGraph) -> sparse.csr_matrix:
    """Unit-weight sparse graph with an arc v -> u for every move u -> v (paths from solved = paths to it)."""
    heads = graph.next_state.ravel()
    tails = np.repeat(np.arange(graph.states, dtype=np.int32), graph.moves)
    weights = np.ones(len(heads), dtype=np.float32)
    return sparse.csr_matrix((weights, (heads, tails)), shape=(graph.states, graph.states))


def dijkstra(graph: StateGraph, arcs: sparse.csr_matrix | None = None) -> np.ndarray:
    """Distance to solved of every state by scipy's Dijkstra (float64; inf where unreachable)."""
    arcs = reversed_arcs(graph) if arcs is None else arcs
    return csgraph_dijkstra(arcs, directed=True, indices=graph.solved)


def heap_dijkstra(graph: StateGraph) -> np.ndarray:
    """The same by a pure-Python Dijkstra with a binary heap (slow on purpose: a timing reference)."""
    predecessors = reversed_arcs(graph)
    indptr, indices = predecessors.indptr.tolist(), predecessors.indices.tolist()
    distance = [float("inf")] * graph.states
    distance[graph.solved] = 0
    heap = [(0, graph.solved)]
    while heap:
        d, u = heapq.heappop(heap)
        if d > distance[u]:
            continue
        for v in indices[indptr[u] : indptr[u + 1]]:
            if d + 1 < distance[v]:
                distance[v] = d + 1
                heapq.heappush(heap, (d + 1, v))
    return np.array(distance)


def flow_problem(graph: StateGraph, keep: np.ndarray | None = None) -> tuple[sparse.csc_matrix, np.ndarray]:
    """Rows ``out(v) - in(v)`` for the kept states but solved, over the arcs between kept states.

    Returns (matrix, the state index of each row). Arcs out of solved are left
    out (they could only carry flow away from where it must end), and solved
    has no row (its balance follows from the others'). Built column by
    column: an arc is +1 at its tail's row and -1 at its head's.
    """
    keep = np.ones(graph.states, dtype=bool) if keep is None else keep.copy()
    keep[graph.solved] = False
    rows = np.flatnonzero(keep)
    renumber = np.full(graph.states, -1, dtype=np.int64)
    renumber[rows] = np.arange(len(rows))
    heads = graph.next_state[rows]
    inside = keep[heads] | (heads == graph.solved)
    tails = np.broadcast_to(np.arange(len(rows))[:, None], heads.shape)[inside]
    heads = renumber[heads[inside]]
    entries = np.stack([tails, heads], axis=1)
    values = np.broadcast_to(np.array([1.0, -1.0]), entries.shape)
    counted = entries >= 0  # an arc into solved has no -1 entry
    indptr = np.concatenate([[0], np.cumsum(counted.sum(axis=1))])
    matrix = sparse.csc_matrix((values[counted], entries[counted], indptr), shape=(len(rows), len(tails)))
    return matrix, rows


def lp_distances(
    graph: StateGraph,
    keep: np.ndarray | None = None,
    method: str = "highs-ipm",
    time_limit: float | None = None,
    log: bool = False,
) -> tuple[np.ndarray, dict]:
    """Distance to solved of each kept state (over arcs between kept states) from the flow LP's duals.

    HiGHS runs without presolve (it cannot shrink the whole graph, every row
    has 12 entries, and on all states it peaked at 18 GB and 7 minutes) and
    without crossover (an interior point is enough: the duals are rounded
    and ``certify`` decides). ``log`` prints HiGHS's progress. Returns
    (distances, -1 where not kept; facts).
    """
    matrix, rows = flow_problem(graph, keep)
    options = {"presolve": False, "time_limit": time_limit, "run_crossover": "off", "disp": log}
    with warnings.catch_warnings():  # scipy passes run_crossover on to HiGHS, warning that it does not know it
        warnings.filterwarnings("ignore", "Unrecognized options", OptimizeWarning)
        result = linprog(
            np.ones(matrix.shape[1]),
            A_eq=matrix,
            b_eq=np.ones(matrix.shape[0]),
            bounds=(0, None),
            method=method,
            options={k: v for k, v in options.items() if v is not None},
        )
    if result.status != 0:
        raise RuntimeError(f"HiGHS did not solve the flow LP: {result.message}")
    duals = result.eqlin.marginals
    distance = np.full(graph.states, -1, dtype=np.int64)
    distance[graph.solved] = 0
    distance[rows] = np.rint(duals)
    facts = {
        "states": int(matrix.shape[0]) + 1,
        "arcs": int(matrix.shape[1]),
        "objective": float(result.fun),
        "iterations": int(result.nit),
        "largest_rounding": float(np.abs(duals - np.rint(duals)).max()),
    }
    return distance, facts


def certify(graph: StateGraph, distance: np.ndarray, keep: np.ndarray | None = None) -> bool:
    """Bellman's conditions on the kept states: d(solved) = 0 and every other state's closest kept
    neighbour is exactly one closer (so no move shortens d by more than 1, and some move shortens
    it by 1). Only exact distances pass."""
    kept = np.arange(graph.states) if keep is None else np.flatnonzero(keep)
    d = distance.astype(np.int32)
    following = d[graph.next_state[kept]]
    if keep is not None:
        following[~keep[graph.next_state[kept]]] = np.iinfo(np.int32).max
    closest = following.min(axis=1)
    others = kept != graph.solved
    return bool(
        d[graph.solved] == 0 and (closest[others] == d[kept[others]] - 1).all() and (closest[~others] >= -1).all()
    )
