"""``python -m solver``: solve, scramble, apply moves, build the 2x2, Skewb and Pyraminx tables."""

from __future__ import annotations

import argparse
import json
import sys

from . import api
from .errors import InvalidState
from .puzzles import PUZZLES, get_puzzle
from .puzzles.cube.notation import METRICS
from .search.astar import DEFAULT_BATCH, DEFAULT_BUDGET_S, DEFAULT_WEIGHT
from .search.heuristic import DEFAULT_HEURISTIC, HEURISTICS
from .search.perimeter import DEFAULT_DEPTH, MAX_DEPTH


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m solver", description="robotd cube solver")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("solve", help="solve a facelet string (54 letters: 3x3x3, 24: 2x2x2; or --puzzle)")
    p.add_argument("--state", required=True, help="facelets in order U R F D L B, any six colour letters")
    p.add_argument("--puzzle", choices=PUZZLES, help="solve a Skewb or Pyraminx state optimally (docs/solver.md)")
    p.add_argument("--metric", choices=METRICS, default="htm")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--budget-s",
        type=float,
        default=DEFAULT_BUDGET_S,
        help=f"3x3x3: neural A* time budget in seconds (default {DEFAULT_BUDGET_S:g}, as the daemon)",
    )
    p.add_argument(
        "--fallback",
        choices=(*api.FALLBACKS, "none"),
        default=api.DEFAULT_FALLBACK,
        help="3x3x3: solver used when A* finds nothing in its budget (default two-phase)",
    )
    p.add_argument(
        "--fallback-budget-s",
        type=float,
        default=api.DEFAULT_FALLBACK_BUDGET_S,
        help=f"3x3x3: the fallback's time budget (default {api.DEFAULT_FALLBACK_BUDGET_S:g})",
    )
    p.add_argument("--max-nodes", type=int, default=10_000_000, help="3x3x3: budget of generated nodes")
    p.add_argument("--weight", type=float, default=DEFAULT_WEIGHT, help="3x3x3: weight of g in f = w*g + h")
    p.add_argument("--batch", type=int, default=DEFAULT_BATCH, help="3x3x3: nodes expanded per iteration")
    p.add_argument(
        "--perimeter",
        type=int,
        default=DEFAULT_DEPTH,
        help=f"3x3x3: depth of the exact table around solved, 0 to {MAX_DEPTH} (0: none; 7 takes 83 MB)",
    )
    p.add_argument(
        "--heuristic",
        choices=HEURISTICS,
        default=DEFAULT_HEURISTIC,
        help="3x3x3: A* estimate, the network's or its weighted convolutional distance (docs/solver.md)",
    )
    p = sub.add_parser("scramble", help="print a seeded random scramble and its state as JSON")
    p.add_argument("--puzzle", choices=("2", "3", *PUZZLES), required=True)
    p.add_argument("--seed", type=int)
    p.add_argument("--moves", type=int, help="number of random moves (default: a random state, except 3x3: 25 moves)")
    p = sub.add_parser("apply", help="apply moves to a facelet string and print the result")
    p.add_argument("--state", required=True)
    p.add_argument("--moves", required=True, help='e.g. "R U2 F\'"')
    p.add_argument("--puzzle", choices=PUZZLES, help="a Skewb or Pyraminx state (default: a cube)")
    p = sub.add_parser("table", help="build or load a distance table and print its statistics")
    p.add_argument("--puzzle", choices=("2", *PUZZLES), default="2")
    p.add_argument("--metric", choices=METRICS, default="htm", help="2x2 only")
    return parser


def _run(args: argparse.Namespace) -> int:
    if getattr(args, "puzzle", None) in PUZZLES:
        return _run_puzzle(args)
    if args.command == "solve":
        solution = api.solve(
            args.state,
            args.metric,
            budget_s=args.budget_s,
            weight=args.weight,
            batch=args.batch,
            max_nodes=args.max_nodes,
            perimeter=args.perimeter,
            fallback=None if args.fallback == "none" else args.fallback,
            fallback_budget_s=args.fallback_budget_s,
            heuristic=args.heuristic,
        )
        if args.json:
            print(json.dumps(solution.as_dict()))
        elif solution.found:
            print(solution.text or "(already solved)")
            print(f"{solution.length} moves ({args.metric.upper()})")
        if not solution.found:
            fallback = "" if args.fallback == "none" else f", nor by {args.fallback} in {args.fallback_budget_s:g} s"
            print(
                f"error: no solution within the budget ({args.budget_s:g} s, {args.max_nodes} nodes{fallback}): "
                "raise --budget-s or --weight",
                file=sys.stderr,
            )
            return 1
    elif args.command == "scramble":
        print(json.dumps(api.scramble(int(args.puzzle), args.seed, args.moves)))
    elif args.command == "apply":
        print(api.apply(args.state, args.moves))
    elif args.command == "table":
        from .puzzles.pocket import model
        from .tables.exact import load_table

        load_table.cache_clear()
        table = load_table(model(args.metric))
        print(
            json.dumps(
                {
                    "metric": args.metric,
                    "counts": table.counts,
                    "build_s": round(table.build_s, 3),
                    "cached": table.cached,
                }
            )
        )
    return 0


def _run_puzzle(args: argparse.Namespace) -> int:
    """The subcommands for a puzzle of ``solver.puzzles`` (Skewb, Pyraminx)."""
    from .tables import exact, solving

    if args.command == "solve":
        solution = solving.solve(args.puzzle, args.state)
        if args.json:
            print(json.dumps(solution.as_dict()))
            return 0
        print(solution.text or "(already solved)")
        name = solution.untracked_name
        split = f" ({solution.tracked} without {name} + {solution.untracked} {name})" if name else ""
        print(f"{solution.length} moves{split}")
    elif args.command == "scramble":
        print(json.dumps(solving.scramble(args.puzzle, args.seed, args.moves)))
    elif args.command == "apply":
        print(solving.apply(args.puzzle, args.state, args.moves))
    elif args.command == "table":
        exact.load_table.cache_clear()
        table = exact.load_table(get_puzzle(args.puzzle))
        print(
            json.dumps(
                {
                    "puzzle": args.puzzle,
                    "states": sum(table.counts),
                    "gods_number": table.gods_number,
                    "counts": table.counts,
                    "build_s": round(table.build_s, 3),
                    "cached": table.cached,
                }
            )
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except InvalidState as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
