"""Weighted convolutional distance (WCD): the network's estimates convolved over each state's neighbourhood.

From Shunyu Yao and Mitchy Lee, "Solving a Rubik's Cube Using its Local
Graph Structure" (arXiv:2408.07945, 2024). With ``f`` a cost-to-go estimate,
``N(s)`` the 12 quarter-turn neighbours of ``s`` and ``p(s)`` a probability
over the moves of ``s`` (attention-like weights)::

    d0(s)     = f(s)
    dk+1(s)   = mu * dk(s) + (1 - mu) * sum over moves a of p_a(s) * dk(s after a)

and the heuristic is ``dK`` for ``K`` hops. The paper takes ``p`` from a
policy network trained beside the distance network. robotd ships no policy
network, so ``p(s)`` here is the Boltzmann policy of the distance network
itself, ``softmax(-f(s after a) / temperature)``: moves the network thinks
lead closer get the weight, as a trained policy's would.

``K`` hops cost ``1 + 12 + ... + 12**K`` network evaluations per state
(13 for one hop), all in one batch per call. Like the network, WCD is not
admissible (it averages estimates that themselves may overestimate); near
solved it tends to underestimate, since a neighbour that is solved weighs
in with 0. A solved state gets 0.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..puzzles.cube.batch import Puzzle, apply_all_moves, is_solved

Estimate = Callable[[np.ndarray], np.ndarray]
DEFAULT_MU = 0.5
DEFAULT_TEMPERATURE = 1.0
DEFAULT_HOPS = 1


class WeightedConvolution:
    """WCD over a cost-to-go estimate, for batches of 3x3 states (``solver.puzzles.cube.batch`` rows)."""

    def __init__(
        self,
        estimate: Estimate,
        mu: float = DEFAULT_MU,
        temperature: float = DEFAULT_TEMPERATURE,
        hops: int = DEFAULT_HOPS,
    ) -> None:
        if not 0 <= mu <= 1:
            raise ValueError(f"mu weighs a state against its neighbours: it must be in [0, 1], got {mu}")
        if not temperature > 0:
            raise ValueError(f"the softmax temperature must be positive, got {temperature}")
        if hops < 0:
            raise ValueError(f"hops must be 0 or more, got {hops}")
        self.estimate, self.mu, self.temperature, self.hops = estimate, mu, temperature, hops
        self.puzzle = Puzzle.cube3()
        self.turns = self.puzzle.quarter_turns

    def warm_up(self, count: int) -> None:
        """Warm the underlying network (``CostToGo.warm_up``), if it has one."""
        warm = getattr(self.estimate, "warm_up", None)
        if warm is not None:
            warm(count)

    def __call__(self, states: np.ndarray) -> np.ndarray:
        if not len(states):
            return np.zeros(0, dtype=np.float32)
        levels = self._levels(states)
        values = [self.estimate(level).astype(np.float32) for level in levels]
        out = self._fold(values)
        out[is_solved(self.puzzle, states)] = 0.0
        return out

    def _levels(self, states: np.ndarray) -> list[np.ndarray]:
        """The states, their neighbours, the neighbours' neighbours...: level j has 12**j rows per state."""
        levels = [states]
        for _ in range(self.hops):
            levels.append(apply_all_moves(self.puzzle, levels[-1], self.turns).reshape(-1, self.puzzle.slots))
        return levels

    def weights(self, neighbour_values: np.ndarray) -> np.ndarray:
        """(n, 12) attention weights of each state's moves from its neighbours' estimates (rows sum to 1)."""
        logits = -neighbour_values / self.temperature
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        return e / e.sum(axis=1, keepdims=True)

    def _fold(self, values: list[np.ndarray]) -> np.ndarray:
        """d_K at level 0 from the estimates of every level, folding the deepest level in first."""
        moves = len(self.turns)
        # d[j] holds d_m at level j for the current m, for every level j still needed
        d = list(values)
        attention = [self.weights(values[j + 1].reshape(-1, moves)) for j in range(self.hops)]
        for m in range(self.hops):
            for j in range(self.hops - m):
                neighbours = (attention[j] * d[j + 1].reshape(-1, moves)).sum(axis=1)
                d[j] = self.mu * d[j] + (1 - self.mu) * neighbours
        return d[0].astype(np.float32)
