"""Parallel Q-learning with one shared Q-table ("constant-share RL"), for the 2x2x2, Skewb and Pyraminx.

Several worker processes update one Q-table in shared memory
(``multiprocessing.shared_memory`` with a numpy view), without locks: two
workers writing the same entry at once keep one of the writes, which is the
scheme's premise (updates are frequent and each is a small correction). The
move graph and the sub-goal stage of every state are shared read-only the
same way, so workers start with ``spawn`` and copy nothing.

Each worker steps a batch of episodes at once with numpy: every step, all
of its agents pick an epsilon-greedy move, read the next state from the
successor array and update ``Q[s, a]`` towards ``r + gamma * max Q(s')``.
Rewards are the research scheme of ``solver.learning.envs.rewards`` (+100 on
the solving move, -1 otherwise), with the human-method sub-goal bonus
(+10 per stage gained, -10 per stage lost) when asked. An episode starts
from a uniformly random unsolved state and ends when solved or after
``episode_moves`` moves.

Training runs in rounds: each round every worker runs its share of the
round's episodes, then the greedy policy is validated (``validate``) on
fixed uniformly random scrambles with the papers' 100-move limit, and on
every state with ``solver.research.metrics`` (success rate, unnecessary
moves against the exact distances, Q-score).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from multiprocessing import get_context
from multiprocessing.shared_memory import SharedMemory

import numpy as np

from ..learning.envs.rewards import SOLVED_REWARD, rewards
from .graphs import StateGraph
from .metrics import MOVE_LIMIT, evaluate, greedy, replay
from .twisty import stages, twisty_graph

SCHEME = "research"
Spec = tuple[str, tuple[int, ...], str]  # shared-memory block name, array shape, dtype


@dataclass(frozen=True)
class ParallelSettings:
    """One training run; the defaults are those of docs/research.md (epsilon, alpha, gamma as the papers').

    An episode is one start state, as the paper counts them.
    """

    puzzle: str = "pocket"
    subgoals: bool = False
    episodes: int = 1_000_000
    workers: int = 2
    rounds: int = 10  # validations along the way (a learning curve)
    epsilon: float = 0.9  # probability of a uniformly random move
    alpha: float = 1.0  # learning rate (the moves are deterministic)
    gamma: float = 1.0
    episode_moves: int = 30  # an episode ends when solved or after this many moves
    start_moves: int = 20  # episodes start k random moves from solved, k uniform in 1..20; 0: uniform states
    agents: int = 8192  # episodes stepped at once by each worker
    seed: int = 0


class SharedArrays:
    """Numpy arrays in shared memory blocks; the creator unlinks them on ``close``."""

    def __init__(self) -> None:
        self.blocks: list[SharedMemory] = []
        self.specs: dict[str, Spec] = {}

    def put(self, key: str, array: np.ndarray) -> np.ndarray:
        """A shared copy of ``array`` (its view in this process)."""
        block = SharedMemory(create=True, size=max(array.nbytes, 1))
        self.blocks.append(block)
        view: np.ndarray = np.ndarray(array.shape, dtype=array.dtype, buffer=block.buf)
        view[...] = array
        self.specs[key] = (block.name, array.shape, array.dtype.str)
        return view

    def close(self) -> None:
        for block in self.blocks:
            block.close()
            block.unlink()
        self.blocks.clear()

    def __enter__(self) -> SharedArrays:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_ATTACHED: dict[str, np.ndarray] = {}
_BLOCKS: list[SharedMemory] = []


def _attach(specs: dict[str, Spec]) -> None:
    """Worker initialiser: numpy views of the shared blocks (kept open for the worker's life)."""
    for key, (name, shape, dtype) in specs.items():
        block = SharedMemory(name=name)
        _BLOCKS.append(block)
        _ATTACHED[key] = np.ndarray(shape, dtype=np.dtype(dtype), buffer=block.buf)


def _starts(rng: np.random.Generator, states: int, solved: int, count: int) -> np.ndarray:
    """Uniformly random unsolved states."""
    drawn = rng.integers(states - 1, size=count)
    return drawn + (drawn >= solved)


def _scrambles(rng: np.random.Generator, next_state: np.ndarray, solved: int, count: int, most: int) -> np.ndarray:
    """States ``k`` random moves from solved, ``k`` uniform in 1..most (a random walk: may end nearer)."""
    length = rng.integers(1, most + 1, size=count)
    where = np.full(count, solved, dtype=next_state.dtype)
    for step in range(most):
        walking = np.flatnonzero(length > step)
        where[walking] = next_state[where[walking], rng.integers(next_state.shape[1], size=len(walking))]
    return where


def _fresh(cfg: ParallelSettings, rng: np.random.Generator, count: int) -> np.ndarray:
    """Start states of ``count`` new episodes."""
    next_state, solved = _ATTACHED["next_state"], int(_ATTACHED["solved"][0])
    if cfg.start_moves:
        return _scrambles(rng, next_state, solved, count, cfg.start_moves)
    return _starts(rng, len(next_state), solved, count)


def _step(
    arrays: dict[str, np.ndarray], cfg: ParallelSettings, where: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """One epsilon-greedy move and table update for every agent: (next states, solved)."""
    q, following_of = arrays["q"], arrays["next_state"]
    solved = int(arrays["solved"][0])
    action = q[where].argmax(axis=1)
    explore = rng.random(len(where)) < cfg.epsilon
    action[explore] = rng.integers(q.shape[1], size=int(explore.sum()))
    following = following_of[where, action]
    done = following == solved
    gain = None
    if cfg.subgoals:
        gain = arrays["stage"][following].astype(np.int16) - arrays["stage"][where]
    best = q[following].max(axis=1)
    best[done] = 0
    target = rewards(SCHEME, done, gain) + cfg.gamma * best
    if cfg.alpha != 1:
        current = q[where, action]
        target = current + cfg.alpha * (target - current)
    # One read, one plain write: a race with another worker loses an update, never adds one twice
    # (``q[...] += ...`` reads the entry again when it writes, so it would add the other's change).
    q[where, action] = target
    return following, done


def run_episodes(cfg: ParallelSettings, episodes: int, seed: int) -> dict:
    """A worker's share of a round: ``episodes`` episodes, ``cfg.agents`` at a time, on the attached table."""
    arrays, rng = _ATTACHED, np.random.default_rng(seed)
    started = min(cfg.agents, episodes)
    where = _fresh(cfg, rng, started)
    moves = np.zeros(started, dtype=np.int32)
    updates = solved_episodes = 0
    while len(where):
        where, done = _step(arrays, cfg, where, rng)
        moves += 1
        updates += len(where)
        solved_episodes += int(done.sum())
        ended = done | (moves >= cfg.episode_moves)
        fresh = min(int(ended.sum()), episodes - started)
        started += fresh
        where = np.concatenate([where[~ended], _fresh(cfg, rng, fresh)])
        moves = np.concatenate([moves[~ended], np.zeros(fresh, dtype=np.int32)])
    return {"updates": updates, "solved_episodes": solved_episodes}


def validation_states(graph: StateGraph, count: int = 10_000, seed: int = 12345) -> np.ndarray:
    """``count`` uniformly random unsolved states (fixed by ``seed``, apart from the training seeds)."""
    return _starts(np.random.default_rng(seed), graph.states, graph.solved, count)


def validate(graph: StateGraph, q: np.ndarray, scrambles: np.ndarray) -> dict:
    """The greedy policy on the scrambles (100-move limit) and on every state, against the exact distances."""
    policy = greedy(q)
    moves = replay(graph, policy, MOVE_LIMIT)[scrambles].astype(np.int64)
    solved = moves >= 0
    used = moves[solved]
    extra = used - graph.distance[scrambles[solved]]
    reward = np.where(solved, SOLVED_REWARD[SCHEME] - (moves - 1), -MOVE_LIMIT)  # -1 a move, +100 solving
    everyone = evaluate(graph, policy)
    return {
        "success_rate": float(solved.mean()),
        "average_moves": _mean(used),
        "average_reward": float(reward.mean()),
        "unnecessary_moves": _mean(extra),
        "optimal_share": float((extra == 0).sum() / len(scrambles)),
        "optimal_moves": float(graph.distance[scrambles].mean()),
        "all_states": everyone,
    }


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if len(values) else float("nan")


def _share_puzzle(shared: SharedArrays, cfg: ParallelSettings, graph: StateGraph) -> np.ndarray:
    """Put the graph (and stages) and a zeroed table in shared memory; returns the table's view."""
    shared.put("next_state", graph.next_state)
    shared.put("solved", np.array([graph.solved], dtype=np.int64))
    if cfg.subgoals:
        shared.put("stage", stages(cfg.puzzle, graph))
    return shared.put("q", np.zeros((graph.states, graph.moves), dtype=np.float32))


def train(cfg: ParallelSettings, on_round: Callable[[dict], None] | None = None) -> tuple[np.ndarray, list[dict]]:
    """Run the rounds; returns (a private copy of the final Q-table, one history row per round).

    ``seconds`` in a row counts training only (not set-up or validation).
    """
    start = time.perf_counter()
    graph = twisty_graph(cfg.puzzle)
    scrambles = validation_states(graph)
    with SharedArrays() as shared:
        q = _share_puzzle(shared, cfg, graph)
        setup = time.perf_counter() - start
        with ProcessPoolExecutor(
            cfg.workers, mp_context=get_context("spawn"), initializer=_attach, initargs=(shared.specs,)
        ) as pool:
            list(pool.map(_ready, range(cfg.workers)))  # start every worker before timing
            history: list[dict] = []
            for round_ in range(1, cfg.rounds + 1):
                last = history[-1] if history else {"episodes": 0, "updates": 0, "seconds": 0.0}
                row = _round(pool, cfg, round_, last) | {"setup_seconds": setup, **validate(graph, q, scrambles)}
                history.append(row)
                if on_round:
                    on_round(row)
        final = q.copy()
    return final, history


def _round(pool: ProcessPoolExecutor, cfg: ParallelSettings, round_: int, last: dict) -> dict:
    """Every worker runs its share of the round's episodes; running totals after it."""
    target = cfg.episodes * round_ // cfg.rounds
    shares = np.diff(np.linspace(last["episodes"], target, cfg.workers + 1).astype(np.int64)).tolist()
    seeds = [cfg.seed * 1_000_003 + round_ * 1009 + w for w in range(cfg.workers)]
    start = time.perf_counter()
    results = list(pool.map(run_episodes, [cfg] * cfg.workers, shares, seeds))
    return {
        "round": round_,
        "episodes": target,
        "seconds": last["seconds"] + time.perf_counter() - start,
        "updates": last["updates"] + sum(r["updates"] for r in results),
    }


def _ready(_: int) -> bool:
    return bool(_ATTACHED)


def summary(cfg: ParallelSettings, history: list[dict]) -> dict:
    """The run's settings and its last validation, flat, for the report."""
    last = history[-1]
    return {
        **asdict(cfg),
        **{k: v for k, v in last.items() if k != "all_states"},
        "all_states": last["all_states"],
        "episodes_per_s": last["episodes"] / last["seconds"],
        "updates_per_s": last["updates"] / last["seconds"],
    }
