"""python -m solver.learning.training train --hours H [--resume] | export"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

MODELS = Path(__file__).resolve().parents[3] / "models"


def main(argv: list[str] | None = None) -> int:
    try:
        import torch  # noqa: F401
    except ImportError:
        print("error: training needs torch: pip install -e '.[train]'", file=sys.stderr)
        return 2
    from .export import export
    from .train import Recipe, Trainer

    parser = argparse.ArgumentParser(prog="python -m solver.learning.training")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("train", help="value iteration for a time budget, checkpointing as it goes")
    p.add_argument("--hours", type=float, required=True)
    p.add_argument("--resume", action="store_true", help="continue from the checkpoint")
    p.add_argument("--checkpoint", type=Path, default=MODELS / "cube3-checkpoint.pt")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--teacher-decay", type=float, help="override the recipe's teacher EMA decay")
    p.add_argument("--learning-rate", type=float, help="override the recipe's learning rate")
    p = sub.add_parser("export", help="write models/cube3.onnx and its model card from the checkpoint")
    p.add_argument("--checkpoint", type=Path, default=MODELS / "cube3-checkpoint.pt")
    p.add_argument("--out", type=Path, default=MODELS)
    args = parser.parse_args(argv)
    if args.command == "train":
        if args.hours <= 0:
            parser.error("--hours must be positive")
        if args.threads:
            torch.set_num_threads(args.threads)
        if not args.resume and args.checkpoint.exists():
            parser.error(f"{args.checkpoint} exists: pass --resume to continue it, or move it away")
        args.checkpoint.parent.mkdir(parents=True, exist_ok=True)
        overrides = {
            k: v
            for k, v in (("teacher_decay", args.teacher_decay), ("learning_rate", args.learning_rate))
            if v is not None
        }
        Trainer(args.checkpoint, Recipe(), args.resume, overrides).run(args.hours)
    else:
        if not args.checkpoint.exists():
            parser.error(f"no checkpoint at {args.checkpoint}: train first")
        print(export(args.checkpoint, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
