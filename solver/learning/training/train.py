"""The time-budgeted, resumable value-iteration loop, on one device, alone or data-parallel."""

from __future__ import annotations

import copy
import json
import platform
import signal
import time
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import torch
from torch.nn.parallel import DistributedDataParallel

from ...puzzles.cube.scramble import random_scrambles
from .checkpoint import load_checkpoint, save_checkpoint
from .data import PUZZLE, DeviceCube, HardPool, bellman_targets, greedy_rollout
from .distributed import Place, any_rank, mean_over_ranks
from .model import CostToGo

EVAL_DEPTHS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 15)
CONTROL_EVERY = 10  # steps between the ranks' agreement on whether to stop


@dataclass
class Recipe:
    width: int = 384
    blocks: int = 2
    batch: int = 1000  # states per step and process
    max_depth: int = 30
    learning_rate: float = 1e-3
    teacher_decay: float = 0.995  # EMA of the network weights
    hard_fraction: float = 0.1  # share of each batch drawn from the hard-example pool
    mining_every: int = 50  # steps between greedy-rollout mining rounds
    mining_states: int = 200
    mining_steps: int = 40
    pool_size: int = 100_000
    log_every: int = 200
    checkpoint_every_s: float = 600.0
    seed: int = 0


def held_out_solve_rate(net: torch.nn.Module, cube: DeviceCube | None = None) -> dict[str, float]:
    """Greedy-walk solve rate by scramble depth on a fixed, seeded set (40 states a depth)."""
    cube = cube or DeviceCube()
    rng = np.random.default_rng(12345)
    rates = {}
    for depth in EVAL_DEPTHS:
        states, _ = random_scrambles(PUZZLE, np.full(40, depth), rng, quarter_turns_only=True)
        solved, _ = greedy_rollout(net, cube, cube.tensor(states), steps=2 * depth + 4)
        rates[str(depth)] = round(float(solved.float().mean()), 3)
    return rates


class Trainer:
    def __init__(
        self,
        checkpoint: Path,
        recipe: Recipe,
        resume: bool,
        overrides: dict | None = None,
        place: Place | None = None,
        bf16: bool | None = None,
    ):
        self.checkpoint = checkpoint
        self.place = place or Place(torch.device("cpu"))
        device = self.place.device
        self.bf16 = device.type == "cuda" if bf16 is None else bf16
        saved = load_checkpoint(checkpoint) if resume and checkpoint.exists() else None
        self.recipe = replace(Recipe(**saved["recipe"]) if saved else recipe, **(overrides or {}))
        self.net = CostToGo(self.recipe.width, self.recipe.blocks).to(device)
        self.teacher = copy.deepcopy(self.net)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=self.recipe.learning_rate)
        self.steps, self.seconds, self.history = 0, 0.0, []
        if saved:
            self._restore(saved)
        if overrides:
            self.history.append(
                {"step": self.steps, "hours": round(self.seconds / 3600, 3), "recipe_change": overrides}
            )
        # DDP starts every rank from rank 0's weights; the teacher is set from the same weights on each
        self.model: torch.nn.Module = self.net
        if self.place.distributed:
            self.model = DistributedDataParallel(self.net, device_ids=[device] if device.type == "cuda" else None)
            if not saved:
                self.teacher.load_state_dict(self.net.state_dict())
        self.cube = DeviceCube(device)
        seed = np.random.SeedSequence([self.recipe.seed, self.steps, self.place.rank]).generate_state(1)[0]
        self.generator = torch.Generator(device=device).manual_seed(int(seed))
        self.pool = HardPool(self.recipe.pool_size, device)

    def _restore(self, state: dict) -> None:
        self.net.load_state_dict(state["net"])
        self.teacher.load_state_dict(state["teacher"])
        self.optimizer.load_state_dict(state["optimizer"])
        for group in self.optimizer.param_groups:
            group["lr"] = self.recipe.learning_rate
        self.steps, self.seconds, self.history = state["steps"], state["seconds"], state["history"]
        self._say(f"resumed from {self.checkpoint}: {self.steps} steps, {self.seconds / 3600:.2f} h")

    def _say(self, line: str) -> None:
        if self.place.leads:
            print(line, flush=True)

    def _autocast(self) -> AbstractContextManager:
        return torch.autocast(self.place.device.type, dtype=torch.bfloat16, enabled=self.bf16)

    def hardware(self) -> str:
        device = self.place.device
        where = (
            torch.cuda.get_device_name(device)
            if device.type == "cuda"
            else f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} threads"
        )
        ranks = f" x {self.place.world_size} processes" if self.place.distributed else ""
        precision = "bf16 autocast" if self.bf16 else "fp32"
        return f"{where}{ranks}, {precision}, torch {torch.__version__}"

    def save(self) -> None:
        """Write the checkpoint (rank 0 only), with every tensor on the CPU."""
        if not self.place.leads:
            return
        state = {
            "recipe": asdict(self.recipe),
            "net": self.net.state_dict(),
            "teacher": self.teacher.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "steps": self.steps,
            "seconds": self.seconds,
            "history": self.history,
            "hardware": self.hardware(),
        }
        save_checkpoint(self.checkpoint, state)

    def _batch(self) -> torch.Tensor:
        r = self.recipe
        hard = self.pool.sample(int(r.batch * r.hard_fraction), self.generator)
        fresh = self.cube.scrambles(r.batch - len(hard), r.max_depth, self.generator)
        return torch.cat([fresh, hard])

    def step(self) -> torch.Tensor:
        """One optimizer step; returns the loss as a tensor on the device (no host round trip)."""
        states = self._batch()
        with self._autocast():
            targets = bellman_targets(self.teacher, self.cube, states)
            prediction = self.model(states).float()
        loss = torch.nn.functional.mse_loss(prediction, targets)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        with torch.no_grad():
            decay = self.recipe.teacher_decay
            for t, s in zip(self.teacher.parameters(), self.net.parameters(), strict=True):
                t.lerp_(s, 1 - decay)
        self.steps += 1
        return loss.detach()

    def mine(self) -> int:
        r = self.recipe
        start = self.cube.scrambles(r.mining_states, r.max_depth, self.generator)
        with self._autocast():
            _, hard = greedy_rollout(self.net, self.cube, start, r.mining_steps)
        self.pool.add(hard)
        return len(hard)

    def run(self, hours: float, steps: int | None = None) -> None:
        """Train for ``hours`` of wall time (and at most ``steps`` steps), checkpointing as it goes."""
        r = self.recipe
        started, base, first = time.time(), self.seconds, self.steps
        last_save, mined, count = started, 0, 0
        losses = torch.zeros((), device=self.place.device)
        stop: list[bool] = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.append(True))
        while steps is None or self.steps - first < steps:
            if self.steps % CONTROL_EVERY == 0:
                out_of_time = time.time() - started >= hours * 3600 or bool(stop)
                if any_rank(self.place, out_of_time):  # every rank stops at the same step
                    break
            losses += self.step()
            count += 1
            if self.steps % r.mining_every == 0:
                mined += self.mine()
            self.seconds = base + time.time() - started
            if self.steps % r.log_every == 0:
                self._log(float(mean_over_ranks(self.place, losses)) / count, mined)
                losses.zero_()
                mined, count = 0, 0
            if time.time() - last_save > r.checkpoint_every_s:
                self.save()
                last_save = time.time()
        self.save()
        self._say(f"done: {self.steps} steps, {self.seconds / 3600:.2f} h in all -> {self.checkpoint}")

    def _log(self, loss: float, mined: int) -> None:
        if not self.place.leads:
            return
        with self._autocast():
            rates = held_out_solve_rate(self.net, self.cube)
        entry = {
            "step": self.steps,
            "hours": round(self.seconds / 3600, 3),
            "loss": round(loss, 4),
            "mined": mined,
            "pool": self.pool.size,
            "greedy_solved": rates,
        }
        self.history.append(entry)
        print(json.dumps(entry), flush=True)


@dataclass(frozen=True)
class Run:
    """One ``train`` command, callable in each of its processes (picklable, for the spawned ones)."""

    checkpoint: Path
    resume: bool
    hours: float
    steps: int | None = None
    threads: int = 0
    shape: dict = field(default_factory=dict)  # width, blocks of a new network
    overrides: dict = field(default_factory=dict)  # recipe changes recorded in the history

    def __call__(self, place: Place) -> None:
        if self.threads:
            torch.set_num_threads(self.threads)
        trainer = Trainer(self.checkpoint, Recipe(**self.shape), self.resume, self.overrides, place)
        trainer.run(self.hours, self.steps)
