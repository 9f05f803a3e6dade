"""Value iteration and Q-learning on the 2x2x2 (QTM, all 3,674,160 states) to an optimal table.

Each run stops when every unsolved state's greedy move is optimal (Q-score
1), then the greedy policy is replayed from every state (100-move limit)
for the success rate and unnecessary moves. The learning curves go to
docs/img/research-pocket-tabular.png. The quick run caps Q-learning at a
few tens of millions of updates (it does not reach Q-score 1 then) and
draws no plot.
"""

from __future__ import annotations

import sys
from dataclasses import asdict

from ..graphs import StateGraph, pocket_graph
from ..metrics import evaluate, greedy
from ..report import machine, save_plot
from ..tabular import QSettings, q_learning, value_iteration

DESCRIPTION = "2x2x2 QTM value iteration and Q-learning to Q-score 1, with the papers' metrics"
PAPER = {
    "machine": "3.4 GHz desktop, Python",
    "q_learning_hours": 7.3,
    "epsilon": 0.9,
    "alpha": 1,
    "gamma": 1,
    "success_rate": 1.0,
    "unnecessary_moves": 0.0,
}
RUNS = {
    "epsilon 0.9, Q0 = 0 (paper)": QSettings(),
    "epsilon 0.9, Q0 = -50": QSettings(initial=-50),
    "epsilon 0.1, Q0 = 0": QSettings(epsilon=0.1),  # "epsilon 0.9" read as the probability of the greedy move
}
CHECK_EVERY = 10_000_000
MAX_UPDATES = {True: 30_000_000, False: 4_000_000_000}


def run(quick: bool = False) -> dict:
    """Value iteration, then each Q-learning run; their figures and the learning-curve plot."""
    graph = pocket_graph("qtm")
    q, sweeps = value_iteration(graph)
    figures = {
        "experiment": "pocket-tabular",
        "machine": machine(),
        "paper": PAPER,
        "states": graph.states,
        "value_iteration": {
            **first_perfect(sweeps),
            "sweeps_run": len(sweeps),
            "seconds": round(sweeps[-1]["seconds"], 2),
            **evaluate(graph, greedy(q)),
            "curve_sweep_q_score": [[r["sweep"], round(r["q_score"], 6)] for r in sweeps],
        },
    }
    curves = {}
    for name, settings in RUNS.items():
        figures[name], curves[name] = q_learning_figures(graph, settings, MAX_UPDATES[quick])
    if not quick:  # a quick run's curves would overwrite the documented plot
        figures["plot"] = save_plot("pocket-tabular", lambda axes: draw(axes, sweeps, curves), panels=2)
    return figures


def q_learning_figures(graph: StateGraph, settings: QSettings, max_updates: int) -> tuple[dict, list[dict]]:
    learner, history = q_learning(graph, settings, max_updates, CHECK_EVERY, on_check=progress)
    last = history[-1]
    return {
        "settings": asdict(settings),
        "table": str(learner.q.dtype),
        **first_perfect(history),
        "updates_run": last["updates"],
        "episodes_run": last["episodes"],
        "seconds_run": round(last["seconds"], 1),
        "updates_per_s": round(last["updates"] / last["seconds"]),
        **evaluate(graph, greedy(learner.q)),
        "curve_updates_seconds_q_score": [
            [r["updates"], round(r["seconds"], 1), round(r["q_score"], 6)] for r in thin(history)
        ],
    }, history


def progress(row: dict) -> None:
    """One line per Q-score check on stderr (stdout is for the JSON figures)."""
    print(f"  {row['updates']:>13,} updates  {row['seconds']:7.1f} s  Q-score {row['q_score']:.6f}", file=sys.stderr)


def thin(rows: list[dict], most: int = 50) -> list[dict]:
    """About ``most`` evenly spaced rows, the last one always among them."""
    step = -(-len(rows) // most)
    return rows[::step] + ([rows[-1]] if (len(rows) - 1) % step else [])


def first_perfect(history: list[dict]) -> dict:
    """The first history row with Q-score 1, renamed ``..._to_q_score_1`` (None when never reached)."""
    row = next((r for r in history if r["q_score"] == 1.0), None)
    keys = [k for k in history[0] if k != "q_score"]
    return {f"{k}_to_q_score_1": (round(row[k], 2) if row else None) for k in keys}


def draw(axes, sweeps: list[dict], curves: dict[str, list[dict]]) -> None:
    left, right = axes
    for name, history in curves.items():
        left.plot([r["seconds"] / 60 for r in history], [r["q_score"] for r in history], label=f"Q-learning, {name}")
    left.set(
        xlabel="learning time (minutes; numpy, one process)",
        ylabel="Q-score",
        ylim=(0, 1.02),
        title=f"Q-learning (paper: {PAPER['q_learning_hours']} h to Q-score 1)",
    )
    left.legend(loc="lower right")
    right.plot([r["sweep"] for r in sweeps], [r["q_score"] for r in sweeps], marker="o")
    right.set(xlabel="sweep", ylabel="Q-score", ylim=(0, 1.02), title="value iteration")
    for ax in axes:
        ax.grid(alpha=0.3)
