"""The three puzzles of the parallel Q-learning paper as move graphs, with the stage of every state.

``twisty_graph("pocket" | "skewb" | "pyraminx")`` is a ``StateGraph`` over
the solver's own table numbering: the 2x2x2 in the quarter-turn metric (6
moves, DLB fixed), the Skewb in fixed-corner notation (8 moves, 3,149,280
states) and the Pyraminx without tips (8 moves, 933,120 states).

``stages(key, graph)`` is, for every state index, how many leading
sub-goals of the puzzle's human method it meets: the sticker masks of
``solver.learning.envs`` (``StickerPuzzle.subgoals``), the one definition
the environments use too. Stickers of every state are recovered without
unranking: layer by layer out from solved, each state takes the stickers
of a neighbour one move closer and undoes that move's permutation.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..learning.envs.puzzles import StickerPuzzle, sticker_puzzle
from ..learning.envs.rewards import stage
from ..puzzles import PuzzleModel, get_puzzle
from ..puzzles.pocket import model as pocket_model
from ..tables.exact import coordinates
from .graphs import StateGraph, from_coordinates, pocket_graph

PUZZLES = ("pocket", "skewb", "pyraminx")


def _model(key: str) -> PuzzleModel:
    if key not in PUZZLES:
        raise ValueError(f"unknown puzzle {key!r}: use {', '.join(map(repr, PUZZLES))}")
    return pocket_model("qtm") if key == "pocket" else get_puzzle(key)


@lru_cache(maxsize=3)
def twisty_graph(key: str) -> StateGraph:
    """The move graph of a puzzle over its table's state indices (tracked moves only: no Pyraminx tips)."""
    model = _model(key)
    if key == "pocket":
        return pocket_graph("qtm")
    return from_coordinates(model.name, coordinates(model), model.move_names[: model.tracked_moves])


def sticker_states(key: str, graph: StateGraph) -> np.ndarray:
    """(states, stickers) int8 face indices of every state index, in the environments' sticker order."""
    model, puzzle = _model(key), sticker_puzzle(key)
    perms = np.array(model.sticker_moves[: graph.moves], dtype=np.intp)
    undo = np.argsort(perms, axis=1)  # new = old[perm], so old = new[undo]
    stickers = np.empty((graph.states, puzzle.stickers), dtype=np.int8)
    stickers[graph.solved] = puzzle.solved
    for depth in range(1, int(graph.distance.max()) + 1):
        layer = np.flatnonzero(graph.distance == depth)
        closer = graph.distance[graph.next_state[layer]] == depth - 1
        move = closer.argmax(axis=1)
        parents = graph.next_state[layer, move]
        stickers[layer] = np.take_along_axis(stickers[parents], undo[move], axis=1)
    return stickers


def stages(key: str, graph: StateGraph, chunk: int = 1 << 19) -> np.ndarray:
    """(states,) uint8: sub-goals of the human method met by each state (all of them when solved)."""
    puzzle: StickerPuzzle = sticker_puzzle(key)
    stickers = sticker_states(key, graph)
    out = np.empty(graph.states, dtype=np.uint8)
    for low in range(0, graph.states, chunk):
        out[low : low + chunk] = stage(puzzle, stickers[low : low + chunk])
    return out
