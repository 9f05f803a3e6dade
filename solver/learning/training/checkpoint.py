"""Checkpoint files: tensors kept on the CPU, so a run resumes on either device."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch


def _write(path: Path, state: dict) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def _on_cpu(value: Any) -> Any:
    """Tensors moved to the CPU inside nested dicts and lists, so a checkpoint loads on any device."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, dict):
        return {k: _on_cpu(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_on_cpu(v) for v in value)
    return value


def load_checkpoint(path: Path) -> dict:
    return torch.load(path, map_location="cpu", weights_only=False)


def save_checkpoint(path: Path, state: dict) -> None:
    """Write ``state`` with every tensor on the CPU, replacing the file only once it is whole."""
    _write(path, _on_cpu(state))
