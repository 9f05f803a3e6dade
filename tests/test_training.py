"""Training code (runs where the ``train`` extra is installed; skipped otherwise)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from solver.learning.training.__main__ import main  # noqa: E402
from solver.learning.training.checkpoint import load_checkpoint  # noqa: E402
from solver.learning.training.data import DeviceCube, HardPool, bellman_targets, greedy_rollout  # noqa: E402
from solver.learning.training.distill import Distiller, DistillRecipe, student_from  # noqa: E402
from solver.learning.training.distributed import resolve_device  # noqa: E402
from solver.learning.training.export import export  # noqa: E402
from solver.learning.training.model import CostToGo  # noqa: E402
from solver.learning.training.train import Recipe, Trainer  # noqa: E402
from solver.puzzles.cube.batch import Puzzle, apply_all_moves, apply_move, is_solved, solved, state_keys  # noqa: E402
from solver.puzzles.cube.scramble import random_scrambles, random_states  # noqa: E402
from solver.search.heuristic import load_model  # noqa: E402

PUZZLE = Puzzle.cube3()
NO_GPU = not torch.cuda.is_available()


@pytest.fixture(autouse=True)
def one_thread():
    """Small tensors: a second intra-op thread only waits, and on a busy machine waits long."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


class Exact(torch.nn.Module):
    """A stand-in network: 5 everywhere (0 at solved comes from ``evaluate``)."""

    def forward(self, states):
        return torch.full((len(states),), 5.0)


def scrambled(depth: int, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return random_scrambles(PUZZLE, np.full(count, depth), rng, quarter_turns_only=True)[0]


def test_device_moves_match_the_batch_cube_model():
    cube = DeviceCube()
    states = random_states(PUZZLE, 300, np.random.default_rng(0))
    turns = np.asarray(PUZZLE.quarter_turns)
    assert np.array_equal(cube.apply_all(cube.tensor(states)).numpy(), apply_all_moves(PUZZLE, states, tuple(turns)))
    picks = np.random.default_rng(1).integers(0, 12, len(states))
    moved = cube.apply(cube.tensor(states), torch.as_tensor(picks)).numpy()
    assert np.array_equal(moved, apply_move(PUZZLE, states, turns[picks]))
    assert cube.is_solved(cube.tensor(np.concatenate([solved(PUZZLE), states[:2]]))).tolist() == [True, False, False]


def test_device_scrambles_stay_within_their_depth_and_reach_it():
    layers = [solved(PUZZLE)]
    for _ in range(3):
        layers.append(apply_all_moves(PUZZLE, layers[-1], PUZZLE.quarter_turns).reshape(-1, 20))
    within = set(state_keys(np.concatenate(layers)).tolist())
    closer = set(state_keys(np.concatenate(layers[:3])).tolist())
    made = DeviceCube().scrambles(2000, 3, torch.Generator().manual_seed(0)).numpy().astype(np.uint8)
    keys = state_keys(made).tolist()
    assert all(k in within for k in keys)
    assert sum(k not in closer for k in keys) > 300  # about a quarter drew depth 3, nearly all at distance 3
    assert is_solved(PUZZLE, made).mean() > 0.15  # depth 0 (a quarter), and depth 2 back to solved never


def test_bellman_targets_are_zero_at_solved_and_one_next_to_it():
    cube = DeviceCube()
    states = cube.scrambles(200, 3, torch.Generator().manual_seed(0))
    targets = bellman_targets(Exact(), cube, states).numpy()
    at_solved = cube.is_solved(states).numpy()
    assert (targets[at_solved] == 0).all()
    assert set(np.unique(targets[~at_solved])) <= {1.0, 6.0} and 1.0 in targets and 6.0 in targets


def test_greedy_rollout_solves_one_move_and_keeps_where_it_stalls():
    cube = DeviceCube()
    one, three = cube.tensor(scrambled(1, 20, 2)), cube.tensor(scrambled(3, 20, 3))
    done, stuck = greedy_rollout(Exact(), cube, one, steps=1)
    assert done.all() and len(stuck) == 0
    done, stuck = greedy_rollout(Exact(), cube, three, steps=4)  # all neighbours look alike: no progress
    assert not done.any() and torch.equal(stuck, three)


def test_hard_pool_wraps():
    rows = torch.arange(9 * 20).view(9, 20) % 24
    pool = HardPool(5)
    pool.add(rows[:7])  # more than it holds: the last 5 are kept
    assert pool.size == 5 and torch.equal(pool.states, rows[2:7])
    pool.add(rows[7:])
    assert pool.next == 2 and torch.equal(pool.states[:2], rows[7:]) and torch.equal(pool.states[2:], rows[4:7])
    assert len(pool.sample(3, torch.Generator().manual_seed(0))) == 3


def test_bf16_autocast_steps_train(tmp_path):
    trainer = Trainer(
        tmp_path / "ck.pt", Recipe(width=16, blocks=1, batch=32, mining_states=8, mining_steps=3), False, bf16=True
    )
    before = [p.detach().clone() for p in trainer.net.parameters()]
    losses = [float(trainer.step()) for _ in range(3)]
    assert all(np.isfinite(losses)) and trainer.mine() >= 0
    assert all(p.dtype == torch.float32 for p in trainer.net.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(before, trainer.net.parameters()))


def test_train_resume_export_round_trip(tmp_path):
    checkpoint = tmp_path / "ck.pt"
    recipe = Recipe(width=16, blocks=1, batch=64, mining_every=2, mining_states=8, mining_steps=3, log_every=2)
    trainer = Trainer(checkpoint, recipe, resume=False)
    trainer.run(hours=1, steps=3)
    assert load_checkpoint(checkpoint)["history"][0]["step"] == 2
    resumed = Trainer(checkpoint, Recipe(), resume=True)
    assert resumed.steps == 3 and resumed.recipe.width == 16
    assert all(torch.equal(a, b) for a, b in zip(trainer.net.parameters(), resumed.net.parameters()))
    export(checkpoint, tmp_path, quantize=False)
    model = load_model(str(tmp_path))
    states = random_states(PUZZLE, 50, np.random.default_rng(1))
    with torch.no_grad():
        expected = np.maximum(resumed.net(torch.from_numpy(states.astype(np.int64))).numpy(), 0)
    assert np.allclose(model(states), expected, atol=1e-4) and model.card["quantization"] is None
    (tmp_path / "int8").mkdir()
    export(checkpoint, tmp_path / "int8")  # a folder of its own: the first one's model stays cached as it was
    quantized = load_model(str(tmp_path / "int8"))
    error = quantized.card["quantization"]
    assert 0 <= error["mean_abs_error"] <= error["max_abs_error"] < 0.5
    assert np.abs(quantized(states) - expected).mean() < 0.5
    assert model.card["parameters"] == sum(p.numel() for p in CostToGo(16, 1).parameters())
    assert "fp32" in model.card["training"]["hardware"]


def test_cli_trains_a_new_network_of_the_given_shape_on_auto(tmp_path, capsys):
    checkpoint = tmp_path / "ck.pt"
    args = ["train", "--hours", "1", "--steps", "2", "--width", "8", "--blocks", "1", "--batch", "32"]
    assert main([*args, "--checkpoint", str(checkpoint)]) == 0
    state = load_checkpoint(checkpoint)
    assert state["steps"] == 2 and state["recipe"]["width"] == 8 and state["recipe"]["batch"] == 32
    with pytest.raises(SystemExit):
        main(["train", "--hours", "1", "--resume", "--width", "8", "--checkpoint", str(checkpoint)])
    assert "fixed by the checkpoint" in capsys.readouterr().err


@pytest.mark.skipif(not NO_GPU, reason="torch sees a GPU here")
def test_cuda_without_a_gpu_is_a_clear_error(tmp_path, capsys):
    assert resolve_device("auto") == torch.device("cpu")
    with pytest.raises(SystemExit) as stop:
        main(["train", "--hours", "1", "--device", "cuda", "--checkpoint", str(tmp_path / "ck.pt")])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "torch sees no GPU" in err and "--device cpu" in err and "Traceback" not in err
    assert not (tmp_path / "ck.pt").exists()


def test_distilled_per_child_network_round_trip(tmp_path):
    teacher_checkpoint, checkpoint = tmp_path / "value.pt", tmp_path / "child.pt"
    Trainer(teacher_checkpoint, Recipe(width=16, blocks=1, batch=32, mining_states=8, mining_steps=3), False).run(
        hours=1, steps=2
    )
    small = {"batch": 32, "held_out": 64, "log_every": 2}
    distiller = Distiller(checkpoint, teacher_checkpoint, resume=False, overrides=small)
    states = torch.from_numpy(random_states(PUZZLE, 20, np.random.default_rng(2)).astype(np.int64))
    value = CostToGo(16, 1)
    value.load_state_dict(load_checkpoint(teacher_checkpoint)["net"])
    with torch.no_grad():  # it starts as the teacher: each child costs what its parent does
        assert torch.allclose(distiller.net(states), value(states)[:, None].expand(-1, 12), atol=1e-5)
    losses = [distiller.step() for _ in range(3)]
    assert all(np.isfinite(losses)) and set(distiller.held_out_error()) == {"rms", "mean_abs", "same_best_child"}
    distiller.save()
    resumed = Distiller(checkpoint, teacher_checkpoint, resume=True)
    assert resumed.steps == 3 and resumed.recipe.batch == 32
    export(checkpoint, tmp_path, quantize=False)
    model = load_model(str(tmp_path))
    assert model.per_child and model.card["output"]["name"] == "child_cost"
    assert model.card["training"]["teacher"]["checkpoint"] == "value.pt"
    rows = np.concatenate([solved(PUZZLE), states.numpy().astype(np.uint8)])
    with torch.no_grad():
        expected = np.maximum(resumed.net(torch.from_numpy(rows.astype(np.int64))).numpy(), 0)
    assert model.children(rows).shape == (21, 12) and np.allclose(model.children(rows), expected, atol=1e-4)
    assert model(rows)[0] == 0 and np.allclose(model(rows)[1:], 1 + expected[1:].min(axis=1), atol=1e-4)


def test_a_smaller_student_learns_from_a_per_child_teacher(tmp_path):
    value_checkpoint, child_checkpoint, checkpoint = tmp_path / "value.pt", tmp_path / "child.pt", tmp_path / "small.pt"
    Trainer(value_checkpoint, Recipe(width=16, blocks=2, batch=32, mining_states=8, mining_steps=3), False).run(
        hours=1, steps=1
    )
    first = Distiller(child_checkpoint, value_checkpoint, False, {"batch": 32, "held_out": 64})
    first.step()
    first.save()
    student = Distiller(checkpoint, child_checkpoint, False, {"batch": 32, "held_out": 64, "blocks": 1})
    assert (student.recipe.width, student.recipe.blocks) == (16, 1)
    teacher_net = load_checkpoint(child_checkpoint)["net"]
    own = student.net.state_dict()  # one block fewer: every weight it has is the teacher's
    assert all(torch.equal(own[name], teacher_net[name]) for name in own)
    cube = DeviceCube()
    states = cube.tensor(scrambled(1, 20, 6))
    targets = student.teacher.children(states)  # one call per state, 0 for the child that solves
    solves = cube.is_solved(cube.apply_all(states).view(-1, 20)).view(-1, 12)
    estimates = torch.from_numpy(student.teacher.network.children(states.numpy()))
    assert (targets[solves] == 0).all() and torch.equal(targets[~solves], estimates[~solves])
    assert np.isfinite([student.step() for _ in range(2)]).all()
    student.save()
    export(checkpoint, tmp_path, quantize=False)
    card = load_model(str(tmp_path)).card
    assert card["blocks"] == 1 and card["training"]["teacher"]["checkpoint"] == "child.pt"
    narrow = student_from(teacher_net, DistillRecipe(width=8, blocks=1))  # nothing of the teacher's fits
    assert narrow(states).shape == (20, 12)
    with pytest.raises(SystemExit):
        main(["distill", "--hours", "1", "--resume", "--width", "8", "--teacher", str(child_checkpoint),
              "--checkpoint", str(checkpoint)])  # fmt: skip


def test_cli_distill_needs_a_teacher(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(
            ["distill", "--hours", "1", "--teacher", str(tmp_path / "none.pt"), "--checkpoint", str(tmp_path / "c.pt")]
        )
    assert "no teacher checkpoint" in capsys.readouterr().err
