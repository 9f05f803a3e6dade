"""Tabular value iteration and Q-learning over every state of a ``StateGraph``, vectorised with numpy.

Rewards as in the papers: -1 per move, solved is terminal (worth 0). With
gamma 1 the optimal Q-value of a move is minus (1 + the distance it leads
to), so a greedy policy on an exact table is an optimal solver.

``value_iteration`` backs up every state at once per sweep (synchronous
Bellman updates on the state values). ``q_learning`` runs many episodes side
by side: each step every agent picks an epsilon-greedy move (epsilon is the
probability of a uniformly random move), the table entry of that move is
updated towards ``reward + gamma * max Q(next)``, and an agent whose episode
ends (solved, or out of moves) starts again from a uniformly random unsolved
state. With alpha 1, gamma 1 and integer rewards every table value is an
integer, so the table is int8 (22 MB for the 2x2x2; values below -127,
which no run here comes near, would be held there); otherwise float32.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .graphs import StateGraph
from .metrics import greedy, q_score, row_max

Progress = Callable[[dict], None]


def backup(graph: StateGraph, value: np.ndarray, reward: float, gamma: float) -> np.ndarray:
    """Q-values (states, moves) of one synchronous Bellman backup of the state values (solved's is 0)."""
    q = value[graph.next_state]
    q *= gamma
    q += reward
    return q


def value_iteration(
    graph: StateGraph, reward: float = -1.0, gamma: float = 1.0, max_sweeps: int = 100, on_sweep: Progress | None = None
) -> tuple[np.ndarray, list[dict]]:
    """Sweep until the values stop changing; returns (final Q-values, one history row per sweep)."""
    value = np.zeros(graph.states, dtype=np.float32)
    history: list[dict] = []
    start = time.perf_counter()
    for sweep in range(1, max_sweeps + 1):
        q = backup(graph, value, reward, gamma)
        policy = greedy(q)
        updated = np.take_along_axis(q, policy[:, None].astype(np.intp), axis=1)[:, 0]
        updated[graph.solved] = 0
        row = {"sweep": sweep, "seconds": time.perf_counter() - start, "q_score": q_score(graph, policy)}
        history.append(row)
        if on_sweep:
            on_sweep(row)
        if np.array_equal(updated, value):
            break
        value = updated
    return q, history


@dataclass(frozen=True)
class QSettings:
    """Q-learning settings; the defaults are the paper's (epsilon 0.9, alpha 1, gamma 1)."""

    epsilon: float = 0.9  # probability of a random move
    alpha: float = 1.0  # learning rate
    gamma: float = 1.0  # discount
    reward: float = -1.0  # per move
    initial: float = 0.0  # every table entry before learning
    agents: int = 1 << 18  # episodes run side by side
    episode_moves: int = 100  # an episode ends at solved or after this many moves
    seed: int = 0

    def table_dtype(self) -> type:
        whole = all(float(x).is_integer() for x in (self.reward, self.initial))
        return np.int8 if whole and self.alpha == 1 and self.gamma == 1 and -100 <= self.initial <= 0 else np.float32


class QLearner:
    """A Q-table and the agents that fill it."""

    def __init__(self, graph: StateGraph, settings: QSettings) -> None:
        self.graph, self.settings = graph, settings
        self.q: np.ndarray = np.full((graph.states, graph.moves), settings.initial, dtype=settings.table_dtype())
        self.rng = np.random.default_rng(settings.seed)
        self.where = self._starts(settings.agents)
        self.moves_made = np.zeros(settings.agents, dtype=np.int32)
        self.updates = self.episodes = 0

    def _starts(self, count: int) -> np.ndarray:
        """Uniformly random unsolved states."""
        drawn = self.rng.integers(self.graph.states - 1, size=count)
        return drawn + (drawn >= self.graph.solved)

    def step(self) -> None:
        """Every agent makes one epsilon-greedy move and updates the table entry of it.

        Rows are gathered with ``np.take`` and entries addressed by flat
        index: several times faster than 2D fancy indexing here.
        """
        s, graph, cfg, table = self.where, self.graph, self.settings, self.q.reshape(-1)
        action = greedy(np.take(self.q, s, axis=0)).astype(np.int64)
        draw = self.rng.random(len(s), dtype=np.float32)  # below epsilon: explore, and draw / epsilon picks the move
        explore = draw < cfg.epsilon
        random_move = np.minimum(draw * (graph.moves / max(cfg.epsilon, 1e-9)), graph.moves - 1).astype(np.int64)
        action = np.where(explore, random_move, action)
        entry = s * graph.moves + action
        following = np.take(graph.next_state.reshape(-1), entry)
        done = following == graph.solved
        best = row_max(np.take(self.q, following, axis=0)).astype(np.float32)
        best[done] = 0
        target = cfg.reward + cfg.gamma * best
        if cfg.alpha != 1:
            current = np.take(table, entry)
            target = current + cfg.alpha * (target - current)
        table[entry] = np.maximum(target, -127) if table.dtype == np.int8 else target
        self.moves_made += 1
        ended = done | (self.moves_made >= cfg.episode_moves)
        following[ended] = self._starts(int(ended.sum()))
        self.where = following
        self.moves_made[ended] = 0
        self.updates += len(s)
        self.episodes += int(ended.sum())


def q_learning(
    graph: StateGraph, settings: QSettings, max_updates: int, check_every: int, on_check: Progress | None = None
) -> tuple[QLearner, list[dict]]:
    """Learn until the greedy policy's Q-score is 1 or ``max_updates`` table updates are made.

    The Q-score is checked every ``check_every`` updates; ``seconds`` in the
    history counts learning only, not the checks.
    """
    learner = QLearner(graph, settings)
    history: list[dict] = []
    learning = 0.0
    while learner.updates < max_updates:
        start = time.perf_counter()
        target = min(learner.updates + check_every, max_updates)
        while learner.updates < target:
            learner.step()
        learning += time.perf_counter() - start
        row = {
            "updates": learner.updates,
            "episodes": learner.episodes,
            "seconds": learning,
            "q_score": q_score(graph, greedy(learner.q)),
        }
        history.append(row)
        if on_check:
            on_check(row)
        if row["q_score"] == 1.0:
            break
    return learner, history
