"""Minimum-cost perfect matching of a small square cost matrix (Hungarian method).

The classifier matches at most 12 pieces to 12 slots, so a plain
shortest-augmenting-path implementation with row and column potentials is
fast enough; numpy does the inner loop over columns.
"""

from __future__ import annotations

import numpy as np


def min_cost_assignment(cost: np.ndarray) -> np.ndarray:
    """Column chosen for each row of a square matrix so that the summed cost is least.

    Returns ``cols`` with ``cols[row]`` the column matched to ``row``; every
    column is used once. Costs must be finite.
    """
    cost = np.asarray(cost, dtype=np.float64)
    n = cost.shape[0]
    if cost.shape != (n, n):
        raise ValueError(f"the cost matrix must be square, got shape {cost.shape}")
    u = np.zeros(n + 1)
    v = np.zeros(n + 1)
    row_of = np.zeros(n + 1, dtype=np.intp)   # row_of[col]: 1-based row matched to col (0: none)
    way = np.zeros(n + 1, dtype=np.intp)
    for row in range(1, n + 1):
        row_of[0] = row
        col0 = 0
        min_slack = np.full(n + 1, np.inf)
        used = np.zeros(n + 1, dtype=bool)
        while True:
            used[col0] = True
            r = row_of[col0]
            slack = cost[r - 1] - u[r] - v[1:]
            free = ~used[1:]
            better = free & (slack < min_slack[1:])
            min_slack[1:][better] = slack[better]
            way[1:][better] = col0
            candidates = np.where(free, min_slack[1:], np.inf)
            col1 = int(np.argmin(candidates)) + 1
            delta = candidates[col1 - 1]
            u[row_of[used]] += delta
            v[used] -= delta
            min_slack[~used] -= delta
            col0 = col1
            if row_of[col0] == 0:
                break
        while col0:
            col1 = way[col0]
            row_of[col0] = row_of[col1]
            col0 = col1
    cols = np.empty(n, dtype=np.intp)
    cols[row_of[1:] - 1] = np.arange(n)
    return cols
