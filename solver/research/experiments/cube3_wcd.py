"""The 3x3x3 A* with the network's estimate against its weighted convolutional distance (WCD).

Both heuristics run the same batched weighted A* (``solver.search.astar``,
the product's weight 0.05, a batch of 100 nodes per iteration instead of
the product's 1000, so that the nodes generated follow the heuristic rather
than the batch) on the same seeded cubes:

- scrambles of 4, 6, ..., 12 random quarter turns (no turn of the face just
  turned), with no perimeter, so the heuristic alone guides the search (the
  WCD paper's setting, scrambles of up to 12 moves); their proven optimal
  lengths come from meeting the depth-7 perimeter table;
- uniformly random states, with the product's perimeter (depth 6).

Per heuristic and set: solved %, mean solution length (QTM), the share
that is optimal, mean nodes generated and median seconds per cube.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np

from ...puzzles.cube.batch import Puzzle, to_cubie
from ...puzzles.cube.cubie import apply_moves_cubie
from ...puzzles.cube.scramble import random_scrambles, random_states
from ...search.astar import DEFAULT_WEIGHT, search
from ...search.heuristic import HEURISTICS, load_heuristic
from ...search.perimeter import DEFAULT_DEPTH, MAX_DEPTH, Perimeter, exact_distance, load_perimeter
from ...search.wcd import DEFAULT_HOPS, DEFAULT_MU, DEFAULT_TEMPERATURE, Estimate
from ..report import machine

DESCRIPTION = "3x3x3 A*: network heuristic against weighted convolutional distance, short scrambles and random states"
DEPTHS = (4, 6, 8, 10, 12)


@dataclass(frozen=True)
class Size:
    per_depth: int  # scrambles of each depth
    random: int  # uniformly random states
    scramble_budget_s: float  # A* time budget per cube
    random_budget_s: float


SIZES = {False: Size(10, 6, 20.0, 60.0), True: Size(2, 1, 10.0, 20.0)}
BATCH = 100
PAPER = {
    "source": "Yao and Lee, arXiv:2408.07945 (2024)",
    "scrambles": "up to 12 moves",
    "finding": "fewer nodes than DeepCubeA's heuristic, sometimes shorter solutions, more time per node",
}


def run(quick: bool = False) -> dict:
    size = SIZES[quick]
    rng = np.random.default_rng(20260419)
    puzzle = Puzzle.cube3()
    sets = {
        f"scramble {d}": random_scrambles(puzzle, np.full(size.per_depth, d), rng, quarter_turns_only=True)[0]
        for d in DEPTHS
    }
    sets["random"] = random_states(puzzle, size.random, rng)
    table = load_perimeter(MAX_DEPTH)
    optimal = {
        name: [exact_distance(s, table, max_forward=5) for s in states]
        for name, states in sets.items()
        if name != "random"
    }
    perimeter = load_perimeter(DEFAULT_DEPTH)
    figures: dict = {
        "experiment": "cube3-wcd",
        "machine": machine(),
        "paper": PAPER,
        "search": {
            "weight": DEFAULT_WEIGHT,
            "batch": BATCH,
            "scramble_perimeter": 0,
            "random_perimeter": DEFAULT_DEPTH,
            **asdict(size),
        },
        "wcd_settings": {"mu": DEFAULT_MU, "temperature": DEFAULT_TEMPERATURE, "hops": DEFAULT_HOPS},
    }
    for name in HEURISTICS:
        heuristic = load_heuristic(name)
        heuristic.warm_up(1024)
        figures[name] = {
            key: solve_set(states, heuristic, *_limits(key, size, perimeter), optimal.get(key))
            for key, states in sets.items()
        }
    return figures


def _limits(key: str, size: Size, perimeter: Perimeter) -> tuple[float, Perimeter | None]:
    """(time budget, perimeter) of a set: random states get the product's perimeter, scrambles none."""
    if key == "random":
        return size.random_budget_s, perimeter
    return size.scramble_budget_s, None


def solve_set(
    states: np.ndarray, heuristic: Estimate, budget_s: float, perimeter: Perimeter | None, optimal: list | None
) -> dict:
    """Search every state; solved %, mean QTM length (and optimal share), nodes and time."""
    rows = np.array([_solve(state, heuristic, budget_s, perimeter) for state in states], dtype=float)
    found, length, nodes, seconds = rows.T
    solved = found == 1
    out = {
        "cubes": len(states),
        "solved_pct": round(100 * float(solved.mean()), 1),
        "mean_qtm": _round(length[solved]),
        "mean_nodes": round(float(nodes.mean())),
        "median_s": round(float(np.median(seconds)), 3),
        "mean_s": round(float(seconds.mean()), 3),
    }
    if optimal is not None:
        best = np.array([np.nan if o is None else o for o in optimal], dtype=float)
        out |= {
            "optimal_mean_qtm": _round(best),
            "optimal_pct": round(100 * float((length == best)[solved].mean()), 1) if solved.any() else None,
        }
    return out


def _solve(
    state: np.ndarray, heuristic: Estimate, budget_s: float, perimeter: Perimeter | None
) -> tuple[int, int, int, float]:
    cube = to_cubie(state)
    start = time.perf_counter()
    result = search(cube, heuristic, batch=BATCH, budget_s=budget_s, perimeter=perimeter)
    seconds = time.perf_counter() - start
    ok = result.found and apply_moves_cubie(cube, result.moves).is_solved()
    return int(ok), len(result.moves) if ok else -1, result.nodes_generated, seconds


def _round(values: np.ndarray) -> float | None:
    return round(float(np.nanmean(values)), 2) if len(values) else None
