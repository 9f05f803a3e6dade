"""Training code (runs where the ``train`` extra is installed; skipped otherwise)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from solver.learning.training.data import HardPool, bellman_targets, greedy_rollout, scrambled_states  # noqa: E402
from solver.learning.training.export import export  # noqa: E402
from solver.learning.training.model import CostToGo  # noqa: E402
from solver.learning.training.train import Recipe, Trainer  # noqa: E402
from solver.puzzles.cube.batch import Puzzle, is_solved  # noqa: E402
from solver.puzzles.cube.scramble import random_states  # noqa: E402
from solver.search.heuristic import load_model  # noqa: E402


class Exact(torch.nn.Module):
    """A stand-in teacher: 0 at solved, 5 elsewhere."""

    def forward(self, states):
        return torch.full((len(states),), 5.0)


def test_bellman_targets_are_zero_at_solved_and_one_next_to_it():
    rng = np.random.default_rng(0)
    states = scrambled_states(200, 3, rng)
    targets = bellman_targets(Exact(), states)
    solved = is_solved(Puzzle.cube3(), states)
    assert (targets[solved] == 0).all()
    assert set(np.unique(targets[~solved])) <= {1.0, 6.0}


def test_hard_pool_wraps():
    pool = HardPool(5)
    pool.add(np.arange(7 * 20, dtype=np.uint8).reshape(7, 20) % 24)
    assert pool.size == 5 and len(pool.sample(3, np.random.default_rng(0))) == 3


def test_train_resume_export_round_trip(tmp_path):
    checkpoint = tmp_path / "ck.pt"
    recipe = Recipe(width=16, blocks=1, batch=64, mining_every=2, mining_states=8, mining_steps=3, log_every=1000)
    trainer = Trainer(checkpoint, recipe, resume=False)
    for _ in range(3):
        trainer.step()
    assert trainer.mine() >= 0
    trainer.save()
    resumed = Trainer(checkpoint, Recipe(), resume=True)
    assert resumed.steps == 3 and resumed.recipe.width == 16
    export(checkpoint, tmp_path, quantize=False)
    model = load_model(str(tmp_path))
    states = random_states(Puzzle.cube3(), 50, np.random.default_rng(1))
    with torch.no_grad():
        expected = np.maximum(resumed.net(torch.from_numpy(states.astype(np.int64))).numpy(), 0)
    assert np.allclose(model(states), expected, atol=1e-4) and model.card["quantization"] is None
    export(checkpoint, tmp_path)
    load_model.cache_clear()
    quantized = load_model(str(tmp_path))
    error = quantized.card["quantization"]
    assert 0 <= error["mean_abs_error"] <= error["max_abs_error"] < 0.5
    assert np.abs(quantized(states) - expected).mean() < 0.5
    solved, _ = greedy_rollout(resumed.net, states[:4], 2)
    assert solved.shape == (4,)
    assert model.card["parameters"] == sum(p.numel() for p in CostToGo(16, 1).parameters())
