"""Export the trained network to ONNX with its JSON model card."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np
import onnxruntime
import torch
from onnxruntime.quantization import QuantType, quantize_dynamic

from ...puzzles.cube.batch import Puzzle
from ...puzzles.cube.scramble import random_scrambles
from .checkpoint import load_checkpoint
from .model import CHILD_COST, CostToGo
from .train import Recipe

OPSET = 17


def export(checkpoint: Path, out_dir: Path, quantize: bool = True) -> Path:
    """Write ``cube3.onnx`` (by default with int8 weights, which halves the CPU time per state)
    and update ``cube3.json``."""
    state = load_checkpoint(checkpoint)
    per_child = state.get("kind") == CHILD_COST
    recipe = state["recipe"]
    net = CostToGo(recipe["width"], recipe["blocks"], outputs=12 if per_child else 1)
    net.load_state_dict(state["net"])
    net.eval()
    output = "child_cost" if per_child else "cost"
    onnx_path = out_dir / "cube3.onnx"
    fd, float_path = tempfile.mkstemp(suffix=".onnx", dir=out_dir)
    os.close(fd)
    try:
        example = torch.zeros((2, 20), dtype=torch.int64)
        torch.onnx.export(
            net,
            (example,),
            float_path,
            input_names=["states"],
            output_names=[output],
            dynamic_axes={"states": {0: "n"}, output: {0: "n"}},
            opset_version=OPSET,
            dynamo=False,
        )
        if quantize:
            quantize_dynamic(float_path, str(onnx_path), weight_type=QuantType.QInt8)
            quantization = _quantization_error(Path(float_path), onnx_path)
        else:
            os.replace(float_path, onnx_path)
            quantization = None
    finally:
        Path(float_path).unlink(missing_ok=True)
    card_path = out_dir / "cube3.json"
    card = json.loads(card_path.read_text()) if card_path.exists() else {}
    digest = hashlib.sha256(onnx_path.read_bytes()).hexdigest()
    if card.get("metrics", {}).get("model_sha256") != digest:
        card["metrics"] = {}  # measured on another file: run bench/cube3.py --write-card again
    card.update(
        {
            "model": "cube3",
            "task": "3x3x3 cost-to-go (quarter-turn metric) for neural A*"
            + (", one estimate per quarter-turn child (Q* search)" if per_child else ""),
            "file": onnx_path.name,
            "sha256": digest,
            "opset": OPSET,
            "input": {
                "name": "states",
                "dtype": "int64",
                "shape": ["n", 20],
                "encoding": "solver.puzzles.cube.batch slot values: 8 corners piece*3+twist, 12 edges piece*2+flip",
            },
            "output": _output(per_child),
            **net.describe(),
            "quantization": quantization,
            "training": _distillation(state) if per_child else _value_iteration(state),
        }
    )
    card_path.write_text(json.dumps(card, indent=2) + "\n")
    return onnx_path


def _output(per_child: bool) -> dict:
    if per_child:
        return {
            "name": "child_cost",
            "shape": ["n", 12],
            "meaning": "estimated quarter turns to solved after each quarter turn, in the order of "
            "solver.puzzles.cube.batch Puzzle.quarter_turns; a state's own estimate is 1 + the least",
        }
    return {"name": "cost", "shape": ["n"], "meaning": "estimated quarter turns to solved"}


def _value_iteration(state: dict) -> dict:
    recipe = Recipe(**state["recipe"])
    return {
        "method": "deep approximate value iteration (DeepCubeA), QTM, 12 moves; "
        f"teacher = EMA of the network (decay {recipe.teacher_decay})",
        "data": f"random scrambles of uniformly random depth 0..{recipe.max_depth} quarter turns, "
        f"batch {recipe.batch}; {recipe.hard_fraction:.0%} of each batch from a pool of "
        "states where greedy rollouts stopped improving",
        **_run_record(state),
    }


def _distillation(state: dict) -> dict:
    recipe = state["recipe"]
    teacher = "per-child network" if state["teacher"].get("output") == "child_cost" else "value network"
    return {
        "method": f"distilled from the {teacher} below (its int8 export): the targets are its estimates "
        "of the 12 quarter-turn children of each state; started from its weights where the shapes agree; "
        "mean squared error, Adam",
        "data": f"random scrambles of uniformly random depth 0..{recipe['max_depth']} quarter turns, "
        f"batch {recipe['batch']}",
        **_run_record(state),
        "teacher": state["teacher"],
    }


def _run_record(state: dict) -> dict:
    return {
        "recipe": state["recipe"],
        "steps": state["steps"],
        "hours": round(state["seconds"] / 3600, 3),
        "hardware": state.get("hardware", ""),
        "recipe_changes": [h for h in state["history"] if "recipe_change" in h],
        "last_log": next((h for h in reversed(state["history"]) if "loss" in h), None),
    }


def _quantization_error(float_path: Path, int8_path: Path, count: int = 10_000) -> dict:
    """How far the int8 model's estimates are from the float model's, on scrambles of depth 0..30."""
    rng = np.random.default_rng(0)
    states, _ = random_scrambles(Puzzle.cube3(), rng.integers(0, 31, count), rng, quarter_turns_only=True)
    outputs = []
    for path in (float_path, int8_path):
        session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        outputs.append(session.run(None, {"states": states.astype(np.int64)})[0])
    error = np.abs(outputs[0] - outputs[1])
    return {
        "method": "onnxruntime dynamic quantization: int8 weights, activations quantized per call",
        "states": count,
        "mean_abs_error": round(float(error.mean()), 4),
        "max_abs_error": round(float(error.max()), 4),
    }
