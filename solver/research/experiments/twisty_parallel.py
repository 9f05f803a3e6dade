"""Parallel Q-learning with a shared table on the 2x2x2, Skewb and Pyraminx, with and without sub-goals.

Two worker processes share one Q-table (``solver.research.parallel_q``).
Each puzzle gets the paper's episode budget (2x2x2 and Skewb 3 M,
Pyraminx 700 k; a tenth with ``--quick``), split into rounds; after each
round the greedy policy is validated on the same 10,000 uniformly random
scrambles (100-move limit) and on every state against the exact distances.
The learning curves go to docs/img/research-parallel-q.png.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict

from ..parallel_q import ParallelSettings, summary, train
from ..report import machine, save_plot
from ..twisty import PUZZLES

DESCRIPTION = "2x2x2, Skewb and Pyraminx: parallel Q-learning on one shared table, with and without sub-goals"
# The paper's table (Hukmani, Kolekar, Vobugari 2021): success on 10,000 scrambles and average moves.
# Sub-goals, there: "slowed learning".
PAPER: dict[str, dict] = {
    "pocket": {"episodes": 3_000_000, "success_rate": 0.998, "average_moves": 21, "hours": "< 6"},
    "skewb": {"episodes": 3_000_000, "success_rate": 0.9988, "average_moves": 19},
    "pyraminx": {"episodes": 700_000, "success_rate": 0.975, "average_moves": 25},
}
ROUNDS = 6
NAMES = {"pocket": "2x2x2", "skewb": "Skewb", "pyraminx": "Pyraminx"}


def run(quick: bool = False) -> dict:
    """Every puzzle with and without sub-goals; the figures of each run's last round and the plot."""
    figures: dict = {
        "experiment": "twisty-parallel-q",
        "machine": machine(),
        "paper": PAPER,
        "settings": asdict(ParallelSettings()),
    }
    curves: dict[str, dict[str, list[dict]]] = {}
    for puzzle in PUZZLES:
        episodes = PAPER[puzzle]["episodes"] // (10 if quick else 1)
        for subgoals in (False, True):
            cfg = ParallelSettings(puzzle=puzzle, subgoals=subgoals, episodes=episodes, rounds=ROUNDS)
            _, history = train(cfg)
            name = f"{puzzle}, {'sub-goals' if subgoals else 'plain'}"
            figures[name] = {**summary(cfg, history), "curve": [_point(row) for row in history]}
            curves.setdefault(puzzle, {})[name] = history
    figures["scaling"] = scaling(PAPER["pocket"]["episodes"] // (30 if quick else 3))
    figures["plot"] = save_plot("parallel-q", lambda axes: draw(axes, curves), size=(13, 4), panels=3)
    return figures


def scaling(episodes: int, repeats: int = 3) -> dict:
    """Training time on the 2x2x2 with 1 and with 2 workers, alternated ``repeats`` times; medians and ratio."""
    runs: dict[int, list[dict]] = {1: [], 2: []}
    for _ in range(repeats):
        for workers in runs:
            _, history = train(ParallelSettings(puzzle="pocket", episodes=episodes, rounds=1, workers=workers))
            runs[workers].append(history[-1])
    out: dict = {"episodes": episodes, "repeats": repeats}
    for workers, rows in runs.items():
        seconds = statistics.median(r["seconds"] for r in rows)
        out[f"{workers} workers"] = {
            "median_seconds": round(seconds, 2),
            "updates_per_s": round(statistics.median(r["updates"] for r in rows) / seconds),
            "success_rate": statistics.median(r["success_rate"] for r in rows),
        }
    out["speedup"] = round(out["1 workers"]["median_seconds"] / out["2 workers"]["median_seconds"], 2)
    return out


def _point(row: dict) -> dict:
    keys = ("episodes", "seconds", "success_rate", "average_moves", "unnecessary_moves")
    return {k: round(row[k], 4) for k in keys} | {"q_score": round(row["all_states"]["q_score"], 4)}


def draw(axes, curves: dict[str, dict[str, list[dict]]]) -> None:
    for ax, (puzzle, runs) in zip(axes, curves.items()):
        for name, history in runs.items():
            ax.plot(
                [r["episodes"] / 1e6 for r in history],
                [r["success_rate"] for r in history],
                marker="o",
                label=name.split(", ")[1],
            )
        paper = PAPER[puzzle]
        ax.axhline(paper["success_rate"], color="grey", linestyle=":", label="paper, at its budget")
        ax.set(
            xlabel="episodes (millions)",
            ylabel="success on 10,000 scrambles",
            ylim=(0, 1.02),
            title=f"{NAMES[puzzle]} (paper: {paper['success_rate']:.2%} at {paper['episodes']:,})",
        )
        ax.legend(loc="lower right")
        ax.grid(alpha=0.3)
