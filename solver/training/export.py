"""Export the trained network to ONNX with its JSON model card."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import torch

from .model import CostToGo
from .train import Recipe

OPSET = 17


def export(checkpoint: Path, out_dir: Path) -> Path:
    state = torch.load(checkpoint, weights_only=False)
    recipe = Recipe(**state["recipe"])
    net = CostToGo(recipe.width, recipe.blocks)
    net.load_state_dict(state["net"])
    net.eval()
    onnx_path = out_dir / "cube3.onnx"
    example = torch.zeros((2, 20), dtype=torch.int64)
    torch.onnx.export(net, (example,), str(onnx_path), input_names=["states"], output_names=["cost"],
                      dynamic_axes={"states": {0: "n"}, "cost": {0: "n"}}, opset_version=OPSET, dynamo=False)
    card_path = out_dir / "cube3.json"
    card = json.loads(card_path.read_text()) if card_path.exists() else {}
    digest = hashlib.sha256(onnx_path.read_bytes()).hexdigest()
    if card.get("metrics", {}).get("model_sha256") != digest:
        card["metrics"] = {}  # measured on another file: run bench/cube3.py --write-card again
    card.update({
        "model": "cube3", "task": "3x3x3 cost-to-go (quarter-turn metric) for neural A*",
        "file": onnx_path.name, "sha256": digest,
        "opset": OPSET, "input": {"name": "states", "dtype": "int64", "shape": ["n", 20],
                                  "encoding": "solver.batch slot values: 8 corners piece*3+twist, "
                                              "12 edges piece*2+flip"},
        "output": {"name": "cost", "shape": ["n"], "meaning": "estimated quarter turns to solved"},
        **net.describe(),
        "training": {"method": "deep approximate value iteration (DeepCubeA), QTM, 12 moves; "
                               f"teacher = EMA of the network (decay {recipe.teacher_decay})",
                     "data": f"random scrambles of uniformly random depth 0..{recipe.max_depth} quarter turns, "
                             f"batch {recipe.batch}; {recipe.hard_fraction:.0%} of each batch from a pool of "
                             "states where greedy rollouts stopped improving",
                     "recipe": state["recipe"], "steps": state["steps"],
                     "hours": round(state["seconds"] / 3600, 3), "hardware": state.get("hardware", ""),
                     "recipe_changes": [h for h in state["history"] if "recipe_change" in h],
                     "last_log": next((h for h in reversed(state["history"]) if "loss" in h), None)},
    })
    card_path.write_text(json.dumps(card, indent=2) + "\n")
    return onnx_path
