"""Exact baselines (solver.research.shortest) give exactly the BFS distances of the 2x2x2."""

import numpy as np
import pytest

from solver.research.__main__ import EXPERIMENTS, experiment, main
from solver.research.experiments.pocket_exact import lp_figures
from solver.research.graphs import pocket_graph, torus
from solver.research.shortest import certify, dijkstra, heap_dijkstra, lp_distances

QTM_COUNTS = [1, 6, 27, 120, 534, 2256, 8969, 33058, 114149, 360508, 930588, 1350852, 782536, 90280, 276]


@pytest.fixture(scope="module")
def graph():
    return pocket_graph("qtm")


def test_graph_is_the_pocket_cube_in_qtm(graph):
    assert graph.states == 3_674_160 and graph.moves == 6
    assert np.bincount(graph.distance).tolist() == QTM_COUNTS
    assert graph.move_names == ("U", "U'", "R", "R'", "F", "F'")


def test_dijkstra_equals_bfs_on_all_states(graph):
    assert np.array_equal(dijkstra(graph), graph.distance)


def test_lp_equals_bfs_on_the_states_within_7_moves(graph):
    keep = graph.distance <= 7
    found, facts = lp_distances(graph, keep)
    assert facts["states"] == int(keep.sum()) == 44_971
    assert np.array_equal(found[keep], graph.distance[keep])
    assert (found[~keep] == -1).all()
    assert certify(graph, found, keep)
    assert facts["objective"] == pytest.approx(graph.distance[keep].sum())


def test_lp_figures_report_exactness(graph):
    figures = lp_figures(graph, 5)
    assert figures["equals_bfs"] and figures["certified"] and figures["depth_limit"] == 5


def test_certify_accepts_only_exact_distances(graph):
    assert certify(graph, graph.distance.astype(np.int64))
    wrong = graph.distance.astype(np.int64)
    wrong[np.flatnonzero(graph.distance == 14)[0]] = 13
    assert not certify(graph, wrong)
    assert not certify(graph, graph.distance.astype(np.int64) + 1)


def test_small_graph_by_every_method():
    grid = torus(5, 8)
    assert np.array_equal(heap_dijkstra(grid), grid.distance)
    assert np.array_equal(dijkstra(grid), grid.distance)
    found, _ = lp_distances(grid, method="highs-ds")
    assert np.array_equal(found, grid.distance)


def test_every_experiment_is_registered_and_listed(capsys):
    assert main(["list"]) == 0
    listed = capsys.readouterr().out
    for name in EXPERIMENTS:
        module = experiment(name)
        assert callable(module.run) and module.DESCRIPTION in listed
