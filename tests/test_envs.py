"""Gymnasium environments (solver.learning.envs): API conformance, moves, rewards, limits, rendering, vector form."""

import dataclasses

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium", reason="gymnasium is the optional extra [rl]")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from solver import apply as cube_apply  # noqa: E402
from solver.learning.envs import ENV_IDS, MAX_EPISODE_STEPS, PuzzleEnv, PuzzleVectorEnv, sticker_puzzle  # noqa: E402
from solver.learning.envs.rewards import SUBGOAL_BONUS, check_scheme  # noqa: E402
from solver.puzzles import get_puzzle  # noqa: E402
from solver.puzzles.cube.notation import format_moves  # noqa: E402

PUZZLES = tuple(ENV_IDS)


@pytest.mark.parametrize("puzzle", PUZZLES)
@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_check_env_passes(puzzle, mode):
    check_env(gymnasium.make(ENV_IDS[puzzle], render_mode=mode).unwrapped, skip_render_check=False)


def _model_apply(puzzle: str, state: str, moves: list[int]) -> str:
    if puzzle in ("pocket", "cube3"):
        return cube_apply(state, format_moves(moves))
    return get_puzzle(puzzle).apply(state, moves)


@pytest.mark.parametrize("puzzle", PUZZLES)
def test_moves_match_the_puzzle_model(puzzle):
    env = PuzzleEnv(puzzle)
    rng = np.random.default_rng(7)
    for seed in range(5):
        obs, _ = env.reset(seed=seed)
        start = env.puzzle.to_letters(obs)
        moves = [int(m) for m in rng.integers(env.action_space.n, size=30)]
        for m in moves:
            obs, *_ = env.step(m)
        assert env.puzzle.to_letters(obs) == _model_apply(puzzle, start, moves)


@pytest.mark.parametrize("puzzle", PUZZLES)
def test_undoing_the_scramble_solves_with_100(puzzle):
    env = PuzzleEnv(puzzle)
    rng = np.random.default_rng(3)
    moves = [int(m) for m in rng.integers(env.action_space.n, size=12)]
    env.reset(seed=0, options={"scramble_moves": 0})
    for m in moves:
        env.step(m)
    names = env.puzzle.move_names
    inverse = [names.index(_invert(names[m])) for m in reversed(moves)]
    rewards = [env.step(m)[1:4] for m in inverse]
    assert rewards[-1] == (100.0, True, False)
    assert all(r == -1.0 for r, done, _ in rewards[:-1] if not done)


def _invert(name: str) -> str:
    return name if name.endswith("2") else name[:-1] if name.endswith("'") else name + "'"


def test_plain_reward_is_one_on_solving_else_zero():
    env = PuzzleEnv("pocket", reward="plain")
    env.reset(seed=0, options={"scramble_moves": 0})
    assert env.step(0)[1:3] == (0.0, False)  # U
    assert env.step(2)[1:3] == (1.0, True)  # U' solves


def test_subgoal_bonus_and_undo_penalty_on_the_2x2():
    env = PuzzleEnv("pocket", subgoals=True)
    env.reset(seed=0, options={"scramble_moves": 0})
    # stages: first (D) layer, then the U face, then solved; R breaks all three, R' restores them
    assert env.step(3)[1] == -1.0 - 3 * SUBGOAL_BONUS
    assert env.step(5)[1] == 100.0 + 3 * SUBGOAL_BONUS
    env.reset(seed=0, options={"scramble_moves": 0})
    assert env.step(0)[1] == -1.0 - SUBGOAL_BONUS  # U keeps the D layer and the U face: only "solved" is lost


def test_subgoals_refused_where_none_are_defined():
    bare = dataclasses.replace(sticker_puzzle("skewb"), subgoals=())
    with pytest.raises(ValueError, match="sub-goals"):
        check_scheme("research", True, bare)


@pytest.mark.parametrize("puzzle", ["skewb", "pyraminx"])
def test_skewb_and_pyraminx_subgoals_are_nested(puzzle):
    """Their human methods: Skewb first layer, corners, solved; Pyraminx centres, first layer, solved."""
    masks = sticker_puzzle(puzzle).subgoals
    assert len(masks) == 3 and masks[-1].all()
    assert all((inner <= outer).all() and inner.sum() < outer.sum() for inner, outer in zip(masks, masks[1:]))
    env = PuzzleEnv(puzzle, subgoals=True)
    env.reset(seed=0, options={"scramble_moves": 0})
    # every turn of a Skewb corner moves a D corner, every big Pyraminx turn twists a centre: all stages lost
    assert env.step(0)[1] == -1.0 - 3 * SUBGOAL_BONUS
    assert env.step(1)[1] == 100.0 + 3 * SUBGOAL_BONUS


@pytest.mark.parametrize("puzzle", PUZZLES)
def test_step_limit_truncates_at_250(puzzle):
    env = gymnasium.make(ENV_IDS[puzzle])
    env.reset(seed=1)
    for step in range(1, MAX_EPISODE_STEPS + 1):
        # two turns of one face or vertex: only start x that turn, never solved for this seed
        _, _, terminated, truncated, info = env.step(step % 2)
        assert not terminated and truncated == (step == MAX_EPISODE_STEPS)
    assert info == {"solved": False, "moves": 250}


@pytest.mark.parametrize("puzzle", PUZZLES)
def test_render_modes(puzzle):
    env = PuzzleEnv(puzzle, render_mode="rgb_array")
    env.reset(seed=0)
    image = env.render()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    colours = {tuple(c) for c in image.reshape(-1, 3)}
    assert set(env.puzzle.net.colours) <= colours
    env = PuzzleEnv(puzzle, render_mode="ansi")
    env.reset(seed=0, options={"scramble_moves": 0})
    text = env.render()
    assert text.count("\x1b[48;2;") == env.puzzle.stickers
    assert PuzzleEnv(puzzle).render() is None


@pytest.mark.parametrize("puzzle", PUZZLES)
def test_vector_env_matches_single_envs(puzzle):
    count = 6
    vector = PuzzleVectorEnv(count, puzzle, max_episode_steps=20)
    singles = [PuzzleEnv(puzzle) for _ in range(count)]
    obs, _ = vector.reset(seed=5, options={"scramble_moves": 2})
    for env, row in zip(singles, obs):
        env.reset()
        env.state = row.copy()
    rng = np.random.default_rng(0)
    for _ in range(1, 20):
        actions = rng.integers(len(vector.puzzle.move_names), size=count)
        obs, reward, terminated, truncated, info = vector.step(actions)
        expected = [env.step(a) for env, a in zip(singles, actions)]
        ended = info.get("_final_obs", np.zeros(count, dtype=bool))
        final = np.where(ended[:, None], info.get("final_obs", obs), obs)
        assert np.array_equal(final, [e[0] for e in expected])
        assert np.array_equal(reward, [e[1] for e in expected])
        assert np.array_equal(terminated, [e[2] for e in expected])
        assert not truncated.any()
        for env, row, done in zip(singles, obs, ended):
            if done:
                env.reset()
                env.state = row.copy()


def test_vector_env_truncates_and_restarts():
    vector = PuzzleVectorEnv(3, "skewb", max_episode_steps=4)
    vector.reset(seed=0)
    for _ in range(3):
        _, _, _, truncated, info = vector.step(np.zeros(3, dtype=int))
        assert not truncated.any()
    _, _, _, truncated, info = vector.step(np.ones(3, dtype=int))
    assert truncated.all() and info["_final_obs"].all()
    assert (vector.moves == 0).all()


def test_make_vec_uses_the_numpy_vector_env():
    envs = gymnasium.make_vec(ENV_IDS["pocket"], num_envs=4, vectorization_mode="vector_entry_point")
    assert isinstance(envs.unwrapped, PuzzleVectorEnv)
    obs, _ = envs.reset(seed=0)
    assert obs.shape == (4, 24) and obs.dtype == np.int8


def test_sticker_puzzles_are_consistent():
    for key in PUZZLES:
        puzzle = sticker_puzzle(key)
        assert (np.sort(puzzle.moves, axis=1) == np.arange(puzzle.stickers)).all()
        assert len(puzzle.move_names) == len(puzzle.moves) == len(set(puzzle.move_names))
        assert (np.bincount(puzzle.solved) == puzzle.stickers // len(puzzle.faces)).all()
