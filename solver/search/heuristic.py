"""The shipped 3x3x3 cost-to-go network, run with onnxruntime (no torch at run time), and the A* heuristics.

``load_heuristic(name)`` is the one way to pick the 3x3x3 A*'s heuristic:
``"network"`` (the network's estimate) or ``"wcd"`` (the weighted
convolutional distance over it, ``solver.search.wcd``).
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path

import numpy as np

from ..errors import InvalidState
from ..puzzles.cube.batch import Puzzle, is_solved, solved
from .wcd import WeightedConvolution

MODEL_NAME = "cube3"
HEURISTICS = ("network", "wcd")
DEFAULT_HEURISTIC = "network"


def model_dir() -> Path:
    """``$ROBOTD_MODEL_DIR``, else the ``models/`` folder beside the packages."""
    return Path(os.environ.get("ROBOTD_MODEL_DIR") or Path(__file__).resolve().parents[2] / "models")


class CostToGo:
    """Estimated quarter turns to solved for batches of 3x3 states (``solver.puzzles.cube.batch`` rows).

    The network gives either one estimate per state (output ``cost``) or, in one call, an estimate for each
    state's 12 quarter-turn children (output ``child_cost``, in the order of ``Puzzle.quarter_turns``), so
    that A* needs one evaluation per expanded node instead of one per generated child (Q* search,
    Agostinelli et al. 2024). A state's own estimate is then 1 + its best child's.
    """

    def __init__(self, onnx_path: Path, card: dict):
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        # Searches call the network with every batch size up to EVAL_CHUNK; a memory pattern per size, which
        # onnxruntime keeps by default, grew the daemon by 40 MB over a few refined runs, and saves no time here.
        options.enable_mem_pattern = False
        self.session = onnxruntime.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        self.card = card
        self.input_name = self.session.get_inputs()[0].name
        self.per_child = self.session.get_outputs()[0].name == "child_cost"
        self.puzzle = Puzzle.cube3()

    def warm_up(self, count: int) -> None:
        """Run the network once on ``count`` states, so the first search does not pay for its set-up."""
        self(solved(self.puzzle, count))

    def _run(self, states: np.ndarray) -> np.ndarray:
        (cost,) = self.session.run(None, {self.input_name: states.astype(np.int64)})
        return np.maximum(cost.astype(np.float32), 0.0)

    def __call__(self, states: np.ndarray) -> np.ndarray:
        if not len(states):
            return np.zeros(0, dtype=np.float32)
        cost = 1.0 + self._run(states).min(axis=1) if self.per_child else self._run(states)
        cost[is_solved(self.puzzle, states)] = 0.0
        return cost

    def children(self, states: np.ndarray) -> np.ndarray:
        """(N, 12): the estimate of each state after each quarter turn (``Puzzle.quarter_turns`` order).
        Only for a per-child network; a solved child may get a small positive estimate."""
        if not len(states):
            return np.zeros((0, len(self.puzzle.quarter_turns)), dtype=np.float32)
        return self._run(states)


@cache
def load_model(directory: str | None = None) -> CostToGo:
    """Load ``cube3.onnx`` after checking it against the sha256 in its model card."""
    folder = Path(directory) if directory else model_dir()
    onnx_path, card_path = folder / f"{MODEL_NAME}.onnx", folder / f"{MODEL_NAME}.json"
    if not onnx_path.exists() or not card_path.exists():
        raise InvalidState(
            f"the 3x3x3 model is missing: expected {onnx_path} and {card_path} "
            "(set ROBOTD_MODEL_DIR to the folder that holds them)"
        )
    card = json.loads(card_path.read_text())
    digest = hashlib.sha256(onnx_path.read_bytes()).hexdigest()
    if digest != card.get("sha256"):
        raise InvalidState(
            f"{onnx_path} does not match its model card {card_path} "
            f"(sha256 {digest[:12]}... instead of {str(card.get('sha256'))[:12]}...): "
            "the file is damaged or from another model; reinstall or re-export it"
        )
    return CostToGo(onnx_path, card)


def check_heuristic(name: str) -> str:
    """``name`` if it is one of ``HEURISTICS``; raises InvalidState otherwise."""
    if name not in HEURISTICS:
        raise InvalidState(f"unknown heuristic {name!r}: use {' or '.join(map(repr, HEURISTICS))}")
    return name


@cache
def load_heuristic(name: str = DEFAULT_HEURISTIC, directory: str | None = None) -> CostToGo | WeightedConvolution:
    """The 3x3x3 A* heuristic called ``name`` (see ``HEURISTICS``), over the shipped network."""
    check_heuristic(name)
    network = load_model() if directory is None else load_model(directory)  # one cached network, as elsewhere
    return network if name == "network" else WeightedConvolution(network)
