"""Where a training process runs: its device, and its place among data-parallel processes.

One process trains alone; ``--world-size N`` spawns N local processes
(torch.multiprocessing), and under ``torchrun`` each process reads RANK,
WORLD_SIZE and LOCAL_RANK. Processes talk over gloo on the CPU and NCCL on
GPUs; rank 0 alone writes checkpoints and logs.
"""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.distributed as dist


class DeviceError(ValueError):
    """A device that this machine cannot train on (the message names the fix)."""


def resolve_device(name: str, local_rank: int = 0) -> torch.device:
    """``cpu``, ``cuda`` or ``auto`` (cuda when torch sees a GPU) as this process's device."""
    if name not in ("cpu", "cuda", "auto"):
        raise DeviceError(f"--device {name!r}: expected cpu, cuda or auto")
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        build = f"torch {torch.__version__}" + ("" if torch.version.cuda else ", a build without CUDA")
        raise DeviceError(
            f"--device cuda: torch sees no GPU ({build}); train with --device cpu, "
            "or install a CUDA build of torch on a machine with an NVIDIA driver"
        )
    if local_rank >= torch.cuda.device_count():
        raise DeviceError(
            f"--device cuda: process {local_rank} needs GPU {local_rank}, "
            f"but torch sees {torch.cuda.device_count()}; use fewer processes"
        )
    return torch.device("cuda", local_rank)


@dataclass(frozen=True)
class Place:
    device: torch.device
    rank: int = 0
    world_size: int = 1

    @property
    def leads(self) -> bool:
        """Whether this process writes checkpoints and logs."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1


def under_torchrun() -> bool:
    return "RANK" in os.environ and "WORLD_SIZE" in os.environ


def join(device_name: str, rank: int, world_size: int, local_rank: int, address: str = "env://") -> Place:
    """Join the process group (when there is more than one process) and pick this process's device."""
    device = resolve_device(device_name, local_rank)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    if world_size > 1:
        backend = "nccl" if device.type == "cuda" else "gloo"
        dist.init_process_group(backend, init_method=address, rank=rank, world_size=world_size)
    return Place(device, rank, world_size)


def leave(place: Place) -> None:
    if place.distributed and dist.is_initialized():
        dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spawn(train: Callable[[Place], None], device_name: str, world_size: int) -> None:
    """Run ``train`` in ``world_size`` local processes, each with its rank's place."""
    resolve_device(device_name, world_size - 1)  # a clear error here rather than one per child
    address = f"tcp://127.0.0.1:{free_port()}"
    # Ctrl-C reaches the children too: they stop together and rank 0 saves, while this process waits for them
    interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        torch.multiprocessing.spawn(_spawned, (train, device_name, world_size, address), nprocs=world_size)
    finally:
        signal.signal(signal.SIGINT, interrupt)


def _spawned(rank: int, train: Callable[[Place], None], device_name: str, world_size: int, address: str) -> None:
    place = join(device_name, rank, world_size, rank, address)
    try:
        train(place)
    finally:
        leave(place)


def run_here(train: Callable[[Place], None], device_name: str) -> None:
    """Run ``train`` in this process: alone, or as one rank under torchrun."""
    if under_torchrun():
        env = os.environ
        place = join(device_name, int(env["RANK"]), int(env["WORLD_SIZE"]), int(env.get("LOCAL_RANK", 0)))
    else:
        place = join(device_name, 0, 1, 0)
    try:
        train(place)
    finally:
        leave(place)


def any_rank(place: Place, flag: bool) -> bool:
    """True on every rank when ``flag`` is true on any one of them."""
    if not place.distributed:
        return flag
    value = torch.tensor([float(flag)], device=place.device)
    dist.all_reduce(value, op=dist.ReduceOp.MAX)
    return bool(value.item())


def mean_over_ranks(place: Place, value: torch.Tensor) -> torch.Tensor:
    if place.distributed:
        value = value.clone()
        dist.all_reduce(value)
        value /= place.world_size
    return value
