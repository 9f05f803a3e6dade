"""The papers' metrics for a policy on a ``StateGraph``, over every state at once.

- success rate: the share of states from which replaying the policy reaches
  solved within the move limit (100 in the papers);
- unnecessary moves: moves used minus the optimal number, averaged over the
  states that were solved;
- Q-score: the share of states whose policy move is an optimal move.

All three count every state but solved (3,674,159 for the 2x2x2). A policy
is an int array ``action[state]``: for a Q-table, its greedy moves.
"""

from __future__ import annotations

from functools import reduce

import numpy as np

from .graphs import StateGraph

MOVE_LIMIT = 100


def row_max(q: np.ndarray) -> np.ndarray:
    """Largest entry of each row (column by column: numpy's reduction along a short axis is far slower)."""
    return reduce(np.maximum, (q[:, k] for k in range(1, q.shape[1])), q[:, 0])


def greedy(q: np.ndarray) -> np.ndarray:
    """The greedy move of every row of a Q-table (the first best one on ties)."""
    best = row_max(q)
    action = np.zeros(len(q), dtype=np.int8)
    for k in range(q.shape[1] - 1, 0, -1):
        action = np.where(q[:, k] == best, np.int8(k), action)
    return np.where(q[:, 0] == best, np.int8(0), action)


def q_score(graph: StateGraph, policy: np.ndarray) -> float:
    """Share of unsolved states whose policy move is optimal."""
    states = np.arange(graph.states)
    good = graph.optimal(states, policy)
    return float((good.sum() - good[graph.solved]) / (graph.states - 1))


def replay(graph: StateGraph, policy: np.ndarray, limit: int = MOVE_LIMIT) -> np.ndarray:
    """Moves the policy takes from every state to solved; -1 where it does not get there within ``limit``.

    By binary lifting: the policy's successor function is composed with
    itself into 1, 2, 4, ... 64-move jumps (solved stays put), and each
    state takes the longest jumps that still miss solved. That costs about
    two dozen passes over the states, however bad the policy is.
    """
    jump = graph.next_state[np.arange(graph.states), policy]
    jump[graph.solved] = graph.solved
    jumps = [jump]
    while 1 << len(jumps) <= limit:
        jumps.append(jumps[-1][jumps[-1]])
    where = np.arange(graph.states)
    missed = np.zeros(graph.states, dtype=np.int16)  # moves made without reaching solved
    for power in reversed(range(len(jumps))):
        ahead = jumps[power][where]
        go = (ahead != graph.solved) & (missed + (1 << power) <= limit)
        where[go] = ahead[go]
        missed[go] += 1 << power
    moves = np.where(missed < limit, missed + 1, -1).astype(np.int16)
    moves[graph.solved] = 0
    return moves


def evaluate(graph: StateGraph, policy: np.ndarray, limit: int = MOVE_LIMIT) -> dict:
    """Success rate, unnecessary moves and Q-score of a policy, from every unsolved state."""
    moves = replay(graph, policy, limit)
    unsolved = np.arange(graph.states) != graph.solved
    solved = unsolved & (moves >= 0)
    extra = moves[solved].astype(np.int64) - graph.distance[solved]
    return {
        "success_rate": float(solved.sum() / unsolved.sum()),
        "unnecessary_moves": float(extra.mean()) if len(extra) else None,
        "q_score": q_score(graph, policy),
    }
