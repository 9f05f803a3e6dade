"""Exact baselines on the 2x2x2 (QTM, all 3,674,160 states): BFS, Dijkstra and the network-flow LP.

Every method's distances are compared with the BFS table state by state;
the LP's also pass ``certify`` (Bellman's conditions) on their own. The
quick run solves the LP on the states within 8 moves of solved (159,120)
and skips the pure-Python Dijkstra.
"""

from __future__ import annotations

import numpy as np

from ..graphs import StateGraph, pocket_graph, time_bfs
from ..report import machine, timed
from ..shortest import certify, dijkstra, heap_dijkstra, lp_distances, reversed_arcs

DESCRIPTION = "2x2x2 QTM distances of all states by BFS, Dijkstra (scipy, heapq) and the flow LP (HiGHS)"
# the published times: 1.3 min, 12 min, 2.7 days
PAPER = {"machine": "3.4 GHz desktop, Python", "bfs_s": 78, "lp_gurobi_s": 720, "dijkstra_s": 233_280}
QUICK_LP_DEPTH = 8


def run(quick: bool = False) -> dict:
    """Time each method over all states (the LP: a slice when quick) and check it against BFS."""
    graph = pocket_graph("qtm")
    bfs_runs = [time_bfs("qtm") for _ in range(3)]
    arcs, arcs_s, _ = timed(reversed_arcs, graph)
    found, dijkstra_s, runs = timed(dijkstra, graph, arcs, repeats=3)
    figures = {
        "experiment": "pocket-exact",
        "machine": machine(),
        "paper": PAPER,
        "states": graph.states,
        "bfs": {"seconds": round(float(np.median(bfs_runs)), 3), "runs": [round(s, 3) for s in bfs_runs]},
        "dijkstra_scipy": {
            "seconds": round(dijkstra_s, 3),
            "runs": runs,
            "graph_build_s": round(arcs_s, 3),
            "equals_bfs": bool(np.array_equal(found, graph.distance)),
        },
    }
    if not quick:
        found, heap_s, _ = timed(heap_dijkstra, graph)
        figures["dijkstra_heapq"] = {
            "seconds": round(heap_s, 2),
            "equals_bfs": bool(np.array_equal(found, graph.distance)),
        }
    figures["lp_highs"] = lp_figures(graph, QUICK_LP_DEPTH if quick else None)
    return figures


def lp_figures(graph: StateGraph, depth: int | None, log: bool = False) -> dict:
    """Solve the flow LP on the states within ``depth`` moves (None: all) and check the answer."""
    keep = None if depth is None else graph.distance <= depth
    (found, facts), seconds, _ = timed(lambda: lp_distances(graph, keep, log=log))
    kept = np.ones(graph.states, bool) if keep is None else keep
    return {
        "seconds": round(seconds, 2),
        "depth_limit": depth,
        **facts,
        "equals_bfs": bool(np.array_equal(found[kept], graph.distance[kept])),
        "certified": certify(graph, found, keep),
    }
