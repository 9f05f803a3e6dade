"""Parallel Q-learning on one shared table (solver.research.parallel_q) and the puzzles' stages (twisty)."""

from multiprocessing.shared_memory import SharedMemory

import numpy as np
import pytest

pytest.importorskip("gymnasium", reason="the sub-goals come from solver.learning.envs (extra [rl])")

from solver.learning.envs import sticker_puzzle  # noqa: E402
from solver.learning.envs.rewards import SOLVED_REWARD, SUBGOAL_BONUS, stage  # noqa: E402
from solver.research import parallel_q  # noqa: E402
from solver.research.parallel_q import ParallelSettings, SharedArrays, train, validate, validation_states  # noqa: E402
from solver.research.twisty import _model, stages, sticker_states, twisty_graph  # noqa: E402


def optimal_q(graph) -> np.ndarray:
    """Q* of the research rewards with gamma 1: +100 on the solving move, -1 otherwise, so 100 - d(next)."""
    return (SOLVED_REWARD["research"] - graph.distance[graph.next_state]).astype(np.float32)


def check_stickers(key: str, samples: int) -> None:
    graph = twisty_graph(key)
    stickers = sticker_states(key, graph)
    puzzle, model = sticker_puzzle(key), _model(key)
    picked = np.random.default_rng(0).integers(graph.states, size=samples)
    for index in picked:
        assert (stickers[index] == puzzle.from_letters(model.unrank(int(index)))).all()
    moves = np.array(model.sticker_moves[: graph.moves])
    for move in range(graph.moves):
        assert (stickers[graph.next_state[picked, move]] == stickers[picked][:, moves[move]]).all()
    assert (stages(key, graph)[picked] == stage(puzzle, stickers[picked])).all()


def test_pyraminx_stickers_and_stages_of_every_index_agree_with_the_model():
    check_stickers("pyraminx", 300)
    counts = np.bincount(stages("pyraminx", twisty_graph("pyraminx")))
    # centres oriented: 1 in 81 states; the first layer on top of that: 1 in 81 * 360 * 32 / (3 edges placed)
    assert counts.sum() == 933_120 and counts[1:].sum() == 933_120 // 81 and counts[3] == 1


@pytest.mark.slow
@pytest.mark.parametrize("key", ["pocket", "skewb"])
def test_pocket_and_skewb_stickers_and_stages_agree_with_the_model(key):
    check_stickers(key, 300)


def test_validation_of_the_exact_table_is_perfect():
    graph = twisty_graph("pyraminx")
    scrambles = validation_states(graph, 2000)
    figures = validate(graph, optimal_q(graph), scrambles)
    assert figures["success_rate"] == 1.0 and figures["unnecessary_moves"] == 0.0
    assert figures["optimal_share"] == 1.0 and figures["average_moves"] == figures["optimal_moves"]
    assert figures["average_reward"] == pytest.approx(101 - figures["average_moves"])
    assert figures["all_states"] == {"success_rate": 1.0, "unnecessary_moves": 0.0, "q_score": 1.0}


def test_a_blank_table_fails_every_scramble():
    graph = twisty_graph("pyraminx")
    figures = validate(graph, np.zeros((graph.states, graph.moves), np.float32), validation_states(graph, 500))
    assert figures["success_rate"] < 0.01 and figures["average_reward"] < -99


def test_shared_arrays_are_released_on_exit():
    with SharedArrays() as shared:
        view = shared.put("x", np.arange(10))
        name = shared.specs["x"][0]
        other = SharedMemory(name=name)  # what a worker sees
        assert bytes(other.buf[:8]) == view[:1].tobytes()
        other.close()
    with pytest.raises(FileNotFoundError):
        SharedMemory(name=name)


def test_a_worker_runs_exactly_its_episodes(monkeypatch):
    graph = twisty_graph("pyraminx")
    q = np.zeros((graph.states, graph.moves), np.float32)
    monkeypatch.setattr(
        parallel_q, "_ATTACHED", {"next_state": graph.next_state, "q": q, "solved": np.array([graph.solved])}
    )
    cfg = ParallelSettings(puzzle="pyraminx", agents=64, episode_moves=5, start_moves=1)
    result = parallel_q.run_episodes(cfg, 1000, seed=1)
    # every episode starts one move from solved and takes 1 to 5 moves; unsolved ones take all 5
    unsolved = 1000 - result["solved_episodes"]
    assert 0 < unsolved < 1000 and result["solved_episodes"] + 5 * unsolved <= result["updates"] <= 5 * 1000
    assert (q <= optimal_q(graph)).all() and q.max() == SOLVED_REWARD["research"]


@pytest.mark.parametrize("subgoals", [False, True])
def test_two_workers_on_one_table_learn_the_pyraminx_and_never_overestimate(subgoals):
    """Lock-free writes only lose updates: every entry stays below Q* (plus the sub-goal bonus still to come)."""
    cfg = ParallelSettings(puzzle="pyraminx", subgoals=subgoals, episodes=300_000, rounds=2, workers=2)
    q, history = train(cfg)
    graph = twisty_graph("pyraminx")
    bound = optimal_q(graph)
    if subgoals:
        final = len(sticker_puzzle("pyraminx").subgoals)
        bound = bound + SUBGOAL_BONUS * (final - stages("pyraminx", graph).astype(np.float32))[:, None]
    assert (q <= bound + 1e-4).all()
    assert [row["episodes"] for row in history] == [150_000, 300_000]
    assert history[-1]["success_rate"] > 0.5 and history[-1]["success_rate"] >= history[0]["success_rate"] - 0.05
