"""Tabular learning (solver.research.tabular) and the papers' metrics (solver.research.metrics)."""

import numpy as np
import pytest

from solver.research import report
from solver.research.experiments.pocket_tabular import first_perfect, thin
from solver.research.graphs import pocket_graph, torus
from solver.research.metrics import evaluate, greedy, q_score, replay
from solver.research.tabular import QLearner, QSettings, q_learning, value_iteration


@pytest.fixture(scope="module")
def graph():
    return pocket_graph("qtm")


def optimal_policy(graph):
    """A move to the closest neighbour of every state, from the BFS distances."""
    return greedy(-graph.distance[graph.next_state].astype(np.int16))


def test_metrics_of_the_optimal_policy(graph):
    assert evaluate(graph, optimal_policy(graph)) == {"success_rate": 1.0, "unnecessary_moves": 0.0, "q_score": 1.0}


def test_metrics_of_always_turning_u(graph):
    """U four times is no move at all: only U, U2 and U' from solved get home, in 3, 2 and 1 moves."""
    policy = np.zeros(graph.states, dtype=np.int8)
    moves = replay(graph, policy)
    assert sorted(moves[moves > 0].tolist()) == [1, 2, 3]
    figures = evaluate(graph, policy)
    assert figures["success_rate"] == 3 / (graph.states - 1)
    assert figures["unnecessary_moves"] == pytest.approx((0 + 0 + 2) / 3)  # a U is undone by U U U instead of U'
    assert 0 < figures["q_score"] < 1


def test_replay_counts_moves_and_the_limit():
    grid = torus(1, 7)  # a ring: from 3 steps right, always stepping right takes 4 moves
    right = np.full(grid.states, 3, dtype=np.int8)
    assert replay(grid, right).tolist() == [0, 6, 5, 4, 3, 2, 1]
    assert replay(grid, right, limit=3).tolist() == [0, -1, -1, -1, 3, 2, 1]
    figures = evaluate(grid, right)
    assert figures["unnecessary_moves"] == pytest.approx((5 + 3 + 1 + 0 + 0 + 0) / 6)
    assert q_score(grid, right) == pytest.approx(3 / 6)


@pytest.mark.parametrize(
    "make, gods_number",
    [(lambda: torus(8, 12), 4 + 6), pytest.param(lambda: pocket_graph("qtm"), 14, marks=pytest.mark.slow)],
    ids=["torus", "pocket-qtm"],
)
def test_value_iteration_finds_an_optimal_table(make, gods_number):
    """On a graph where no move keeps the distance (even sides, quarter turns), every layer is right after
    God's number of sweeps: the 2x2x2's 3.7 million states take a while, a torus shows the same in no time."""
    graph = make()
    q, sweeps = value_iteration(graph)
    scores = [row["q_score"] for row in sweeps]
    assert scores.index(1.0) + 1 == gods_number
    assert evaluate(graph, greedy(q)) == {"success_rate": 1.0, "unnecessary_moves": 0.0, "q_score": 1.0}
    reachable = q[np.arange(graph.states), greedy(q)]
    assert np.array_equal(-reachable[graph.distance > 0], graph.distance[graph.distance > 0])


@pytest.mark.parametrize(
    "settings", [QSettings(agents=64), QSettings(agents=64, initial=-50), QSettings(agents=64, epsilon=0.1, alpha=0.5)]
)
def test_q_learning_reaches_q_score_1_on_a_small_graph(settings):
    grid = torus(9, 12)
    learner, history = q_learning(grid, settings, max_updates=2_000_000, check_every=1000)
    assert history[-1]["q_score"] == 1.0
    assert evaluate(grid, greedy(learner.q)) == {"success_rate": 1.0, "unnecessary_moves": 0.0, "q_score": 1.0}
    assert history[-1]["episodes"] > 0
    assert learner.q.dtype == (np.float32 if settings.alpha != 1 else np.int8)


def test_q_learning_updates_towards_the_target():
    grid = torus(1, 5)
    learner = QLearner(grid, QSettings(agents=1, epsilon=0.0, initial=-50, seed=3))
    learner.where = np.array([1])
    learner.step()  # greedy on a tie: the first move, "up", which on one row stays put
    assert learner.q[1, 0] == -51 and learner.where.tolist() == [1]
    learner.q[1, 2] = 0
    learner.step()  # now "left" looks best: it reaches solved, a terminal worth 0
    assert learner.q[1, 2] == -1 and learner.updates == 2 and learner.episodes == 1


def test_plots_are_saved_as_png_when_matplotlib_is_there(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "IMAGE_DIR", tmp_path)
    path = report.save_plot("check", lambda axes: axes.plot([0, 1], [0, 1]))
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert path is None
    else:
        assert path == str(tmp_path / "research-check.png")
        assert (tmp_path / "research-check.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_learning_curves_are_thinned_and_read():
    rows = [{"updates": k, "q_score": min(1.0, k / 100)} for k in range(1, 121)]
    kept = thin(rows)
    assert len(kept) <= 51 and kept[0] is rows[0] and kept[-1] is rows[-1]
    assert first_perfect(rows) == {"updates_to_q_score_1": 100}
    assert first_perfect(rows[:50]) == {"updates_to_q_score_1": None}
