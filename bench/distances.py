"""Distance distributions of the puzzles with exact tables; prints one JSON object and draws a PNG.

    python bench/distances.py [--out docs/img/solver-distances.png]

For the 2x2x2 (face-turn and quarter-turn metric), the Skewb and the
Pyraminx (tips aside): how many states lie at each optimal distance, read
from the exact tables (``solver.tables.exact``, built or loaded from the
cache). The plot needs matplotlib (the ``research`` extra); without it the
JSON is printed and the plot is skipped with a note.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[0] = str(REPO)  # as a script this folder comes first, and bench/serial.py would shadow pyserial

from solver.puzzles import get_puzzle  # noqa: E402
from solver.puzzles.pocket import model  # noqa: E402
from solver.research.report import save_plot  # noqa: E402
from solver.tables.exact import load_table  # noqa: E402

PANELS = (
    ("2x2x2, face turns (HTM)", lambda: model("htm")),
    ("2x2x2, quarter turns (QTM)", lambda: model("qtm")),
    ("Skewb", lambda: get_puzzle("skewb")),
    ("Pyraminx (tips aside)", lambda: get_puzzle("pyraminx")),
)


def distributions() -> dict[str, list[int]]:
    """Per panel title: the number of states at each distance from solved."""
    return {title: load_table(make()).counts for title, make in PANELS}


def draw_counts(counts: dict[str, list[int]]):
    """A ``save_plot`` drawing: one log-scale bar chart per puzzle."""

    def draw(axes) -> None:
        for ax, (title, row) in zip(axes, counts.items()):
            ax.bar(range(len(row)), row, color="#3465a4")
            ax.set_yscale("log")
            ax.set_title(f"{title}\n{sum(row):,} states, God's number {len(row) - 1}", fontsize=9)
            ax.set_xlabel("optimal moves", fontsize=8)
            ax.set_xticks(range(0, len(row), 2))
            ax.tick_params(labelsize=7)
        axes[0].set_ylabel("states (log scale)", fontsize=8)

    return draw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "img" / "solver-distances.png")
    args = parser.parse_args()
    counts = distributions()
    report: dict = {
        "distributions": {t: {"states": sum(c), "gods_number": len(c) - 1, "counts": c} for t, c in counts.items()}
    }
    report["plot"] = save_plot("distances", draw_counts(counts), size=(12, 2.8), panels=len(counts), out=args.out)
    if report["plot"] is None:
        report["note"] = "matplotlib is not installed (pip install -e '.[research]'): no plot drawn"
    print(json.dumps(report))


if __name__ == "__main__":
    main()
