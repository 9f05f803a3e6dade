"""The time-budgeted, resumable value-iteration loop."""

from __future__ import annotations

import copy
import json
import os
import platform
import signal
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import torch

from ...puzzles.cube.batch import Puzzle
from ...puzzles.cube.scramble import random_scrambles
from .data import HardPool, bellman_targets, greedy_rollout, scrambled_states
from .model import CostToGo

EVAL_DEPTHS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 15)


@dataclass
class Recipe:
    width: int = 384
    blocks: int = 2
    batch: int = 1000
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


def _save(path: Path, state: dict) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def held_out_solve_rate(net: torch.nn.Module) -> dict[str, float]:
    """Greedy-walk solve rate by scramble depth on a fixed, seeded set (40 states a depth)."""
    rng = np.random.default_rng(12345)
    rates = {}
    for depth in EVAL_DEPTHS:
        states, _ = random_scrambles(Puzzle.cube3(), np.full(40, depth), rng, quarter_turns_only=True)
        solved, _ = greedy_rollout(net, states, steps=2 * depth + 4)
        rates[str(depth)] = round(float(solved.mean()), 3)
    return rates


class Trainer:
    def __init__(self, checkpoint: Path, recipe: Recipe, resume: bool, overrides: dict | None = None):
        self.checkpoint = checkpoint
        saved = torch.load(checkpoint, weights_only=False) if resume and checkpoint.exists() else None
        self.recipe = replace(Recipe(**saved["recipe"]) if saved else recipe, **(overrides or {}))
        self.net = CostToGo(self.recipe.width, self.recipe.blocks)
        self.teacher = copy.deepcopy(self.net)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=self.recipe.learning_rate)
        self.steps, self.seconds, self.history = 0, 0.0, []
        if saved:
            self._restore(saved)
        if overrides:
            self.history.append(
                {"step": self.steps, "hours": round(self.seconds / 3600, 3), "recipe_change": overrides}
            )
        self.rng = np.random.default_rng(self.recipe.seed + self.steps)
        self.pool = HardPool(self.recipe.pool_size)

    def _restore(self, state: dict) -> None:
        self.net.load_state_dict(state["net"])
        self.teacher.load_state_dict(state["teacher"])
        self.optimizer.load_state_dict(state["optimizer"])
        for group in self.optimizer.param_groups:
            group["lr"] = self.recipe.learning_rate
        self.steps, self.seconds, self.history = state["steps"], state["seconds"], state["history"]
        print(f"resumed from {self.checkpoint}: {self.steps} steps, {self.seconds / 3600:.2f} h", flush=True)

    def save(self) -> None:
        _save(
            self.checkpoint,
            {
                "recipe": asdict(self.recipe),
                "net": self.net.state_dict(),
                "teacher": self.teacher.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "steps": self.steps,
                "seconds": self.seconds,
                "history": self.history,
                "hardware": f"{platform.processor() or platform.machine()}, "
                f"{torch.get_num_threads()} threads, torch {torch.__version__}",
            },
        )

    def _batch(self) -> np.ndarray:
        r = self.recipe
        hard = self.pool.sample(int(r.batch * r.hard_fraction), self.rng)
        fresh = scrambled_states(r.batch - len(hard), r.max_depth, self.rng)
        return np.concatenate([fresh, hard])

    def step(self) -> float:
        states = self._batch()
        targets = torch.from_numpy(bellman_targets(self.teacher, states))
        prediction = self.net(torch.from_numpy(states.astype(np.int64)))
        loss = torch.nn.functional.mse_loss(prediction, targets)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        with torch.no_grad():
            decay = self.recipe.teacher_decay
            for t, s in zip(self.teacher.parameters(), self.net.parameters()):
                t.mul_(decay).add_(s, alpha=1 - decay)
        self.steps += 1
        return float(loss.detach())

    def mine(self) -> int:
        r = self.recipe
        start = scrambled_states(r.mining_states, r.max_depth, self.rng)
        _, hard = greedy_rollout(self.net, start, r.mining_steps)
        self.pool.add(hard)
        return len(hard)

    def run(self, hours: float) -> None:
        r = self.recipe
        started, base = time.time(), self.seconds
        last_save, losses, mined = started, [], 0
        stop = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.append(True))
        while time.time() - started < hours * 3600 and not stop:
            losses.append(self.step())
            if self.steps % r.mining_every == 0:
                mined += self.mine()
            self.seconds = base + time.time() - started
            if self.steps % r.log_every == 0:
                self._log(losses, mined)
                losses, mined = [], 0
            if time.time() - last_save > r.checkpoint_every_s:
                self.save()
                last_save = time.time()
        self.save()
        print(f"done: {self.steps} steps, {self.seconds / 3600:.2f} h in all -> {self.checkpoint}", flush=True)

    def _log(self, losses: list[float], mined: int) -> None:
        entry = {
            "step": self.steps,
            "hours": round(self.seconds / 3600, 3),
            "loss": round(float(np.mean(losses)), 4),
            "mined": mined,
            "pool": self.pool.size,
            "greedy_solved": held_out_solve_rate(self.net),
        }
        self.history.append(entry)
        print(json.dumps(entry), flush=True)
