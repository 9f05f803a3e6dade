"""The cost-to-go network: cubie one-hot input, an MLP with residual blocks, one output per state or one
per quarter-turn child of the state (``outputs=12``, see ``solver.learning.training.distill``).

Input is a batch state (N, 20) of slot values (see ``solver.puzzles.cube.batch``). The
first layer is a linear map of the 480-wide one-hot encoding, computed as a
sum of 20 embedding rows, which costs 20 look-ups instead of a 480-wide
product (in torch one ``embedding_bag``); the exported ONNX graph does the same
with a Gather and a sum.
"""

from __future__ import annotations

import torch
from torch import nn

SLOTS, VALUES = 20, 24
CHILD_COST = "child_cost"  # the ``kind`` of a per-child network's checkpoint (a value network's has none)


class ResidualBlock(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.first = nn.Linear(width, width)
        self.first_norm = nn.LayerNorm(width)
        self.second = nn.Linear(width, width)
        self.second_norm = nn.LayerNorm(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.first_norm(self.first(x)))
        return torch.relu(x + self.second_norm(self.second(h)))


class CostToGo(nn.Module):
    offsets: torch.Tensor  # a buffer: each slot's first row in the embedding

    def __init__(self, width: int = 512, blocks: int = 2, outputs: int = 1):
        super().__init__()
        self.width, self.blocks_count, self.outputs = width, blocks, outputs
        self.embed = nn.Embedding(SLOTS * VALUES, width)
        self.embed_bias = nn.Parameter(torch.zeros(width))
        self.register_buffer("offsets", torch.arange(SLOTS, dtype=torch.int64) * VALUES, persistent=False)
        self.input_norm = nn.LayerNorm(width)
        self.blocks = nn.ModuleList(ResidualBlock(width) for _ in range(blocks))
        self.out = nn.Linear(width, outputs)

    def forward(self, states: torch.Tensor) -> torch.Tensor:
        rows = states + self.offsets
        if torch.onnx.is_in_onnx_export():
            x = self.embed(rows).sum(dim=1)  # a Gather and a ReduceSum, which onnxruntime runs well
        else:  # the same sum without the (N, 20, width) intermediate: most of a CPU training step otherwise
            x = nn.functional.embedding_bag(rows, self.embed.weight, mode="sum")
        x = x + self.embed_bias
        x = torch.relu(self.input_norm(x))
        for block in self.blocks:
            x = block(x)
        out = self.out(x)
        return out.squeeze(-1) if self.outputs == 1 else out

    def describe(self) -> dict:
        return {
            "input": "cubie one-hot, 20 slots x 24 values (480), as embedding sum",
            "architecture": f"MLP: 480->{self.width}, {self.blocks_count} residual blocks of two "
            f"{self.width}x{self.width} linear layers with LayerNorm and ReLU, ->{self.outputs}",
            "width": self.width,
            "blocks": self.blocks_count,
            "parameters": sum(p.numel() for p in self.parameters()),
        }
