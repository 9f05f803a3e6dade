"""Data-parallel training: two CPU processes over gloo (skipped where torch is not installed).

Most of its time is start-up: each spawned process starts its own Python and imports
torch, and DistributedDataParallel imports torch._dynamo.
"""

from functools import partial
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from solver.learning.training import train  # noqa: E402
from solver.learning.training.__main__ import main  # noqa: E402
from solver.learning.training.checkpoint import load_checkpoint  # noqa: E402
from solver.learning.training.distributed import Place, spawn  # noqa: E402

RECIPE = train.Recipe(width=16, blocks=1, batch=48, mining_every=2, mining_states=8, mining_steps=3, log_every=2)


def _rank(folder: Path, place: Place) -> None:
    """One rank: train 4 steps, record the checkpoint writes it made and the weights it ended with."""
    torch.set_num_threads(1)
    writes = folder / f"writes-{place.rank}"
    write = train.save_checkpoint

    def counted(path: Path, state: dict) -> None:
        with writes.open("a") as log:
            log.write(f"{state['steps']}\n")
        write(path, state)

    train.save_checkpoint = counted
    trainer = train.Trainer(folder / "ck.pt", RECIPE, resume=False, place=place)
    trainer.run(hours=1, steps=4)
    torch.save({"net": trainer.net.state_dict(), "teacher": trainer.teacher.state_dict()}, folder / f"{place.rank}.pt")


def test_two_gloo_processes_agree_write_once_and_resume_in_one(tmp_path):
    spawn(partial(_rank, tmp_path), "cpu", 2)
    ends = [torch.load(tmp_path / f"{rank}.pt") for rank in (0, 1)]
    for part in ("net", "teacher"):
        assert ends[0][part].keys() == ends[1][part].keys()
        assert all(torch.equal(ends[0][part][k], ends[1][part][k]) for k in ends[0][part])
    net, teacher = ends[0]["net"], ends[0]["teacher"]
    assert not all(torch.equal(net[k], teacher[k]) for k in net)  # it trained: the EMA teacher lags the network
    assert (tmp_path / "writes-0").read_text() == "4\n" and not (tmp_path / "writes-1").exists()
    checkpoint = load_checkpoint(tmp_path / "ck.pt")
    assert all(torch.equal(checkpoint["net"][k], ends[0]["net"][k]) for k in checkpoint["net"])
    assert "x 2 processes" in checkpoint["hardware"] and [h["step"] for h in checkpoint["history"]] == [2, 4]

    args = ["train", "--hours", "1", "--steps", "2", "--resume", "--device", "cpu", "--threads", "1"]
    threads = torch.get_num_threads()
    try:
        assert main([*args, "--checkpoint", str(tmp_path / "ck.pt")]) == 0  # one process continues the two's run
    finally:
        torch.set_num_threads(threads)
    resumed = load_checkpoint(tmp_path / "ck.pt")
    assert resumed["steps"] == 6 and resumed["recipe"]["width"] == 16 and resumed["history"][-1]["step"] == 6
