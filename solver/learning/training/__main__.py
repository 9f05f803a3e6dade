"""python -m solver.learning.training train --hours H [--device D] [--world-size N] [--resume]
| distill --hours H [--resume] | export [--checkpoint C]"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

MODELS = Path(__file__).resolve().parents[3] / "models"
RESUMABLE = ("teacher_decay", "learning_rate", "batch")  # recipe fields a resumed run may change
SHAPE = ("width", "blocks")  # fixed by the checkpoint


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m solver.learning.training")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("train", help="value iteration for a time budget, checkpointing as it goes")
    p.add_argument("--hours", type=float, required=True)
    p.add_argument("--steps", type=int, help="stop after this many steps, if the hours last that long")
    p.add_argument("--resume", action="store_true", help="continue from the checkpoint")
    p.add_argument("--checkpoint", type=Path, default=MODELS / "cube3-checkpoint.pt")
    p.add_argument(
        "--device",
        default="auto",
        choices=("cpu", "cuda", "auto"),
        help="cpu, cuda, or auto (cuda when torch sees a GPU)",
    )
    p.add_argument("--world-size", type=int, default=1, help="data-parallel processes to spawn (one per GPU)")
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads per process (0: torch's default)")
    p.add_argument("--width", type=int, help="network width of a new run (default: the recipe's)")
    p.add_argument("--blocks", type=int, help="residual blocks of a new run (default: the recipe's)")
    p.add_argument("--batch", type=int, help="override the recipe's states per step and process")
    p.add_argument("--teacher-decay", type=float, help="override the recipe's teacher EMA decay")
    p.add_argument("--learning-rate", type=float, help="override the recipe's learning rate")
    p = sub.add_parser("distill", help="a per-child network from a trained network, on the CPU (see distill.py)")
    p.add_argument("--hours", type=float, required=True)
    p.add_argument("--resume", action="store_true", help="continue from the checkpoint")
    p.add_argument(
        "--teacher", type=Path, default=MODELS / "cube3-checkpoint.pt", help="a value or per-child network's checkpoint"
    )
    p.add_argument("--width", type=int, help="the student's width (default: the teacher's)")
    p.add_argument("--blocks", type=int, help="the student's residual blocks (default: the teacher's)")
    p.add_argument("--checkpoint", type=Path, default=MODELS / "cube3-child-checkpoint.pt")
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    p.add_argument("--learning-rate", type=float, help="override the recipe's learning rate")
    p = sub.add_parser("export", help="write models/cube3.onnx and its model card from a checkpoint of either kind")
    p.add_argument(
        "--checkpoint",
        type=Path,
        default=MODELS / "cube3-child-checkpoint.pt",
        help="default: the distilled per-child network, which robotd ships; the value network exports too",
    )
    p.add_argument("--out", type=Path, default=MODELS)
    return parser


def _check_train(parser: argparse.ArgumentParser, args: argparse.Namespace, torchrun: bool) -> None:
    if args.hours <= 0:
        parser.error("--hours must be positive")
    if args.steps is not None and args.steps <= 0:
        parser.error("--steps must be positive")
    if args.world_size < 1:
        parser.error("--world-size must be at least 1")
    if torchrun and args.world_size != 1:
        parser.error("--world-size spawns processes itself: leave it out under torchrun")
    if args.resume and any(getattr(args, k) is not None for k in SHAPE):
        parser.error("--width and --blocks are fixed by the checkpoint: leave them out with --resume")
    if not args.resume and args.checkpoint.exists():
        parser.error(f"{args.checkpoint} exists: pass --resume to continue it, or move it away")


def main(argv: list[str] | None = None) -> int:
    try:
        import torch  # noqa: F401
    except ImportError:
        print("error: training needs torch: pip install -e '.[train]'", file=sys.stderr)
        return 2
    from . import distributed
    from .export import export
    from .train import Run

    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "export":
        if not args.checkpoint.exists():
            parser.error(f"no checkpoint at {args.checkpoint}: train (and distill) first, or pass --checkpoint")
        args.out.mkdir(parents=True, exist_ok=True)
        print(export(args.checkpoint, args.out))
        return 0
    if args.command == "distill":
        return _distill(parser, args)
    torchrun = distributed.under_torchrun()
    _check_train(parser, args, torchrun)
    args.checkpoint.parent.mkdir(parents=True, exist_ok=True)
    run = Run(
        args.checkpoint,
        args.resume,
        args.hours,
        args.steps,
        args.threads,
        {k: getattr(args, k) for k in SHAPE if getattr(args, k) is not None},
        {k: getattr(args, k) for k in RESUMABLE if getattr(args, k) is not None},
    )
    try:
        if args.world_size > 1:
            distributed.spawn(run, args.device, args.world_size)
        else:
            distributed.run_here(run, args.device)
    except distributed.DeviceError as error:
        parser.error(str(error))
    return 0


def _distill(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    import torch

    from .distill import Distiller

    if args.hours <= 0:
        parser.error("--hours must be positive")
    if not args.teacher.exists():
        parser.error(f"no teacher checkpoint at {args.teacher}: train (or distill) one first")
    if args.resume and not args.checkpoint.exists():
        parser.error(f"--resume: no checkpoint at {args.checkpoint}")
    if args.resume and any(getattr(args, k) is not None for k in SHAPE):
        parser.error("--width and --blocks are fixed by the checkpoint: leave them out with --resume")
    if not args.resume and args.checkpoint.exists():
        parser.error(f"{args.checkpoint} exists: pass --resume to continue it, or move it away")
    if args.threads:
        torch.set_num_threads(args.threads)
    changes = {k: getattr(args, k) for k in ("learning_rate", *SHAPE)}
    overrides = {k: v for k, v in changes.items() if v is not None}
    Distiller(args.checkpoint, args.teacher, args.resume, overrides).run(args.hours)
    return 0


if __name__ == "__main__":
    sys.exit(main())
