"""Distillation into a per-child network: one call estimates all 12 children of a state.

Neural A* evaluates every new child it generates: about nine network evaluations per expanded node, most of
its time. A network that, given a state, estimates the cost to go after each of its 12 quarter turns
needs one evaluation per expanded node instead (Q* search: Agostinelli et al., "Q* Search: Heuristic Search
with Deep Q-Networks", 2024). It is trained here by distillation on the CPU: the targets are a trained
network's estimates of the 12 children (int8, as robotd runs it), on the value training's own data (random
scrambles of uniformly random depth). The teacher is a value network (12 calls per state) or a per-child
network (one call per state), and the student may have another shape, e.g. a smaller network for a Pi
core taught by a larger one. The student starts with every teacher weight whose name and shape it shares;
from a value network of its shape, its 12 outputs all from the teacher's one, so it starts as "every child
costs what the parent costs" and learns the difference.
"""

from __future__ import annotations

import json
import signal
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import torch

from ...search.heuristic import CostToGo as ValueNetwork
from .checkpoint import load_checkpoint, save_checkpoint
from .data import MOVES, SLOTS, DeviceCube
from .model import CHILD_COST, CostToGo


@dataclass
class DistillRecipe:
    width: int = 384  # the student's shape: the teacher's unless a new run asks for another
    blocks: int = 2
    batch: int = 1000
    max_depth: int = 30
    learning_rate: float = 1e-3
    held_out: int = 4000  # seeded scrambles the progress is measured on
    log_every: int = 200
    checkpoint_every_s: float = 300.0
    seed: int = 0


class Teacher:
    """The value network's estimates of states' children, run as robotd runs it (int8 ONNX)."""

    def __init__(self, checkpoint: Path):
        from .export import export  # the value network's own export, into a scratch folder

        self.checkpoint = checkpoint
        self.cube = DeviceCube("cpu")
        with tempfile.TemporaryDirectory() as folder:
            onnx_path = export(checkpoint, Path(folder))
            self.card = json.loads((Path(folder) / "cube3.json").read_text())
            self.network = ValueNetwork(onnx_path, self.card)  # robotd's own wrapper, as its search calls it

    def children(self, states: torch.Tensor) -> torch.Tensor:
        """(N, 12) float32: the teacher's estimate of each quarter-turn child, 0 for a solved one."""
        kids = self.cube.apply_all(states).view(-1, SLOTS)
        if not self.network.per_child:  # a value network: one call per child
            return torch.from_numpy(self.network(kids.numpy())).view(len(states), MOVES)
        estimates = torch.from_numpy(self.network.children(states.numpy()))  # one call per state
        return torch.where(self.cube.is_solved(kids).view(len(states), MOVES), 0.0, estimates)

    def describe(self) -> dict:
        card = self.card
        return {
            "checkpoint": self.checkpoint.name,
            "sha256": card["sha256"],
            "output": card["output"]["name"],
            "architecture": card["architecture"],
            "training": card["training"],
        }


def student_from(teacher_net: dict, recipe: DistillRecipe) -> CostToGo:
    """A per-child network of the recipe's shape holding every teacher weight of the same name and shape (all of
    them where the shapes agree); a value network's one output is copied to each of the 12, so a student of its
    shape starts as "each child costs what its parent costs". Weights the teacher lacks start as torch's."""
    net = CostToGo(recipe.width, recipe.blocks, outputs=MOVES)
    own = net.state_dict()
    for name, weight in teacher_net.items():
        if name.startswith("out.") and weight.shape[0] == 1:
            weight = weight.expand(MOVES, *weight.shape[1:])
        if name in own and own[name].shape == weight.shape:
            own[name] = weight.clone()
    net.load_state_dict(own)
    return net


class Distiller:
    """The time-budgeted, resumable distillation loop."""

    def __init__(self, checkpoint: Path, teacher_checkpoint: Path, resume: bool, overrides: dict | None = None):
        self.checkpoint = checkpoint
        saved = load_checkpoint(checkpoint) if resume else None
        teacher_state = load_checkpoint(teacher_checkpoint)
        shape = {k: teacher_state["recipe"][k] for k in ("width", "blocks")}  # a new student's, unless overridden
        recipe = DistillRecipe(**saved["recipe"]) if saved else DistillRecipe(**shape)
        self.recipe = replace(recipe, **(overrides or {}))
        self.teacher = Teacher(teacher_checkpoint)
        self.net = student_from(teacher_state["net"], self.recipe)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=self.recipe.learning_rate)
        self.steps, self.seconds, self.history = 0, 0.0, []
        if saved:
            self.net.load_state_dict(saved["net"])
            self.optimizer.load_state_dict(saved["optimizer"])
            for group in self.optimizer.param_groups:
                group["lr"] = self.recipe.learning_rate
            self.steps, self.seconds, self.history = saved["steps"], saved["seconds"], saved["history"]
        if overrides:
            self.history.append({"step": self.steps, "recipe_change": overrides})
        self.cube = self.teacher.cube
        self.generator = torch.Generator().manual_seed(self.recipe.seed * 1_000_003 + self.steps)
        held = self.cube.scrambles(self.recipe.held_out, self.recipe.max_depth, torch.Generator().manual_seed(99))
        self.held_out = (held, self.teacher.children(held))

    def step(self) -> float:
        states = self.cube.scrambles(self.recipe.batch, self.recipe.max_depth, self.generator)
        loss = torch.nn.functional.mse_loss(self.net(states), self.teacher.children(states))
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.steps += 1
        return float(loss.detach())

    @torch.no_grad()
    def held_out_error(self) -> dict:
        """RMS and mean absolute error against the teacher, and how often the best child is the teacher's."""
        states, targets = self.held_out
        estimates = self.net(states)
        error = estimates - targets
        same_best = (estimates.argmin(dim=1) == targets.argmin(dim=1)).float().mean()
        return {
            "rms": round(float(error.pow(2).mean().sqrt()), 4),
            "mean_abs": round(float(error.abs().mean()), 4),
            "same_best_child": round(float(same_best), 4),
        }

    def run(self, hours: float) -> None:
        started, base, last_save = time.time(), self.seconds, time.time()
        stop: list[bool] = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.append(True))
        losses: list[float] = []
        while time.time() - started < hours * 3600 and not stop:
            losses.append(self.step())
            self.seconds = base + time.time() - started
            if self.steps % self.recipe.log_every == 0:
                self._log(float(np.mean(losses)))
                losses.clear()
            if time.time() - last_save > self.recipe.checkpoint_every_s:
                self.save()
                last_save = time.time()
        self.save()
        print(f"done: {self.steps} steps, {self.seconds / 3600:.2f} h in all -> {self.checkpoint}", flush=True)

    def _log(self, loss: float) -> None:
        hours = round(self.seconds / 3600, 3)
        entry = {"step": self.steps, "hours": hours, "loss": round(loss, 4), "held_out": self.held_out_error()}
        self.history.append(entry)
        print(json.dumps(entry), flush=True)

    def save(self) -> None:
        save_checkpoint(
            self.checkpoint,
            {
                "kind": CHILD_COST,
                "recipe": asdict(self.recipe),
                "teacher": self.teacher.describe(),
                "net": self.net.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "steps": self.steps,
                "seconds": self.seconds,
                "history": self.history,
                "hardware": f"CPU, {torch.get_num_threads()} threads, fp32, torch {torch.__version__}",
            },
        )
