"""``python -m solver.research <experiment> [--quick]``: rerun an experiment and print its figures as JSON.

    python -m solver.research list
    python -m solver.research pocket-exact --quick

Experiments are modules of ``solver.research.experiments``, named in ``EXPERIMENTS``.
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import import_module

# name -> module under solver.research.experiments (imported only when run)
EXPERIMENTS = {
    "pocket-exact": "pocket_exact",
    "pocket-tabular": "pocket_tabular",
    "twisty-parallel-q": "twisty_parallel",
    "cube3-wcd": "cube3_wcd",
}


def experiment(name: str):
    return import_module(f".experiments.{EXPERIMENTS[name]}", __package__)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m solver.research", description=__doc__.splitlines()[0])
    parser.add_argument("experiment", choices=[*EXPERIMENTS, "list"])
    parser.add_argument("--quick", action="store_true", help="a smaller run (about a minute) for a smoke test")
    parser.add_argument("--out", help="also write the JSON figures to this file")
    args = parser.parse_args(argv)
    if args.experiment == "list":
        for name in EXPERIMENTS:
            print(f"{name}: {experiment(name).DESCRIPTION}")
        return 0
    figures = experiment(args.experiment).run(quick=args.quick)
    text = json.dumps(figures, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as out:
            out.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
