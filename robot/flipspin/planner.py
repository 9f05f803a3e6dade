"""The optimal flip/spin planner: the quickest op sequence that performs a solver move sequence.

The search space is the rig's pose (orientation x spinner x cover, 144
states). Between two solver moves the cube only needs to be re-posed, so
the plan is a layered shortest path: layer i holds the cheapest way to be
in each pose just after solver move i. Inside a layer a multi-source
Dijkstra runs over (pose, quarter turns of the move done so far): free ops
(flip, spin, hold, release) re-pose the cube, held turns of the move's face
(on the spinner) count towards the move, and reaching its full turn ends
the layer. So a half turn may be one ``turn±2``, two quarter turns in a
row, or two quarter turns with a re-grip between, whichever is quicker.
Costs are time first and robot moves second, in whole microseconds, so
ties are exact.

On a 2x2x2 (``either_layer``) a move may also be made by turning the
opposite layer: with cube face X on top and its opposite on the spinner,
``turn q`` leaves the cube as X^q would, seen in a frame turned q quarter
turns clockwise from below, the same as ``spin q`` turns it (the held part
with X's layer stays, the rest of the cube turns with the base). So that
turn counts towards the move and carries the pose's orientation along
(``carried_turn``). A 3x3x3's centres would show the difference.

Moves on one axis commute (``U D = D U``): each run of such moves is
planned in every order and, for every pose it can end in, the cheapest
order is kept, so the choice is made with the rest of the plan in view.
The plan ends with the cover open.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import permutations

from solver.puzzles.cube.geometry import FACES
from solver.puzzles.cube.notation import move_face, move_turns

from ..errors import RobotError
from .pose import HOLD, N_STATES, SPIN_TABLE, Op, Pose, free_ops, turn_ops
from .steps import RigStep, make_step, with_tail
from .timing import FlipSpinTiming

Costs = list  # per pose index: int cost, or None where unreachable
MAX_ORDERED_RUN = 4  # longer runs on one axis (never in a simplified solution) keep their order


@dataclass(frozen=True)
class _Graph:
    free: tuple[tuple[tuple[int, int, Op], ...], ...]  # per pose: (next pose, cost, op)
    turns: tuple[tuple[tuple[int, int, Op], ...], ...]  # per pose: the layer turns, same form
    carried: tuple[tuple[tuple[int, int, Op], ...], ...]  # per pose: the layer turns as moves of the top face
    bottom: tuple[int, ...]  # per pose: index of the cube face on the spinner
    top: tuple[int, ...]  # per pose: index of the cube face at world U


def carried_turn(pose: Pose, op: Op) -> Pose:
    """The pose after ``op`` (a ``turn``) made as a move of the top face: the frame turns with the base.

    On a 2x2x2, ``turn q`` with cube face X on top is X^q in this pose's
    frame (see the module's docstring).
    """
    after = pose.apply(op)
    return after._replace(orientation=int(SPIN_TABLE[pose.orientation, op.quarters % 4]))


@lru_cache(maxsize=16)
def _graph(timing: FlipSpinTiming) -> _Graph:
    free, turns, carried, bottom, top = [], [], [], [], []
    for index in range(N_STATES):
        pose = Pose.from_index(index)
        free.append(tuple((pose.apply(op).number, timing.cost(op), op) for op in free_ops(pose, timing.half_spins)))
        held = tuple(turn_ops(pose.spinner)) if pose.cover == HOLD else ()
        turns.append(tuple((pose.apply(op).number, timing.cost(op), op) for op in held))
        carried.append(tuple((carried_turn(pose, op).number, timing.cost(op), op) for op in held))
        bottom.append(FACES.index(pose.bottom))
        top.append(FACES.index(pose.cube_face("U")))
    return _Graph(tuple(free), tuple(turns), tuple(carried), tuple(bottom), tuple(top))


@dataclass
class _Layer:
    """One Dijkstra: node ``done * N_STATES + pose`` is a pose with ``done`` quarter turns of the move made."""

    move: int | None  # None: re-pose only (the tail of a plan)
    ends: Costs  # per pose: cost with the move complete (the tail: cost re-posed)
    parent: dict  # node -> (previous node, op); sources have none


def _layer(graph: _Graph, sources: Costs, move: int | None, either_layer: bool = False) -> _Layer:
    face = None if move is None else move_face(move)
    target = 0 if move is None else move_turns(move)
    done_end = target * N_STATES
    finished = range(done_end, done_end + N_STATES) if move is not None else range(0)
    best: dict[int, int] = {index: cost for index, cost in enumerate(sources) if cost is not None}
    parent: dict[int, tuple[int, Op]] = {}
    heap = [(cost, node) for node, cost in best.items()]
    heapq.heapify(heap)
    while heap:
        cost, node = heapq.heappop(heap)
        if cost > best[node] or node in finished:
            continue  # stale, or the move is complete: the next layer goes on from there
        done, index = divmod(node, N_STATES)
        edges = [(done * N_STATES + after, step, op) for after, step, op in graph.free[index]]
        if graph.bottom[index] == face:
            edges += _turn_edges(done, graph.turns[index])
        elif either_layer and graph.top[index] == face:
            edges += _turn_edges(done, graph.carried[index])
        for nxt, step, op in edges:
            if nxt not in best or cost + step < best[nxt]:
                best[nxt], parent[nxt] = cost + step, (node, op)
                heapq.heappush(heap, (cost + step, nxt))
    ends = [best.get(done_end + index) for index in range(N_STATES)]
    return _Layer(move, ends, parent)


def _turn_edges(done: int, turns: tuple[tuple[int, int, Op], ...]) -> list[tuple[int, int, Op]]:
    return [((done + op.quarters) % 4 * N_STATES + after, step, op) for after, step, op in turns]


def _walk(layer: _Layer, node: int) -> tuple[list[Op], int]:
    """The ops that led to ``node`` inside a layer (in order) and the pose the layer was entered at."""
    ops: list[Op] = []
    while node in layer.parent:
        node, op = layer.parent[node]
        ops.append(op)
    ops.reverse()
    return ops, node


def axis_runs(moves: Sequence[int]) -> list[tuple[int, ...]]:
    """Split into runs of consecutive moves on one axis (U/D, R/L, F/B), which commute."""
    runs: list[list[int]] = []
    for move in moves:
        if runs and move_face(runs[-1][-1]) % 3 == move_face(move) % 3:
            runs[-1].append(move)
        else:
            runs.append([move])
    return [tuple(run) for run in runs]


def _orders(run: tuple[int, ...]) -> list[tuple[int, ...]]:
    if len(run) > MAX_ORDERED_RUN:
        return [run]
    return list(dict.fromkeys(permutations(run)))


def check_moves(moves: Sequence[int]) -> list[int]:
    moves = list(moves)
    for k, move in enumerate(moves):
        if isinstance(move, bool) or not isinstance(move, int) or not 0 <= move < 18:
            raise RobotError(f"move {k + 1} ({move!r}) is not a solver move id 0..17")
    return moves


def plan_optimal(
    moves: Sequence[int], start: Pose, timing: FlipSpinTiming, either_layer: bool = False
) -> tuple[list[RigStep], Pose]:
    """The quickest plan for ``moves`` from ``start`` (ties: fewer robot moves), and the pose it ends in.

    One step per solver move, in the order performed (a run of moves on one
    axis may be reordered); the end pose has the cover open. ``either_layer``
    (2x2x2 only) lets a move turn the opposite layer; the end pose's
    orientation then says where the solver's frame has gone.
    """
    moves = check_moves(moves)
    if not moves:
        return [], start
    graph = _graph(timing)
    costs: Costs = [None] * N_STATES
    costs[start.number] = 0
    history = []
    for run in axis_runs(moves):
        trails = []
        for order in _orders(run):
            layers, layer_costs = [], costs
            for move in order:
                layers.append(_layer(graph, layer_costs, move, either_layer))
                layer_costs = layers[-1].ends
            trails.append(layers)
        costs, choice = _cheapest([trail[-1].ends for trail in trails])
        history.append((choice, trails))
    tail = _layer(graph, costs, None)
    end = min(
        (i for i in range(N_STATES) if tail.ends[i] is not None and Pose.from_index(i).cover != HOLD),
        key=lambda i: tail.ends[i],
    )
    tail_ops, index = _walk(tail, end)
    steps = _unwind(history, index, timing)
    steps[-1] = with_tail(steps[-1], tail_ops, timing)
    return steps, Pose.from_index(end)


def _cheapest(ends: list[Costs]) -> tuple[Costs, list]:
    """Per pose, the cheapest of the orders' costs and which order gave it (the first on a tie)."""
    best: list[int | None] = [None] * N_STATES
    choice: list[int | None] = [None] * N_STATES
    for k, costs in enumerate(ends):
        for index, cost in enumerate(costs):
            current = best[index]
            if cost is not None and (current is None or cost < current):
                best[index], choice[index] = cost, k
    return best, choice


def _unwind(history: list, index: int, timing: FlipSpinTiming) -> list[RigStep]:
    """Follow the parents back from the pose after the last turn; the steps in the order performed."""
    steps: list[RigStep] = []
    for choice, trails in reversed(history):
        for layer in reversed(trails[choice[index]]):
            ops, node = _walk(layer, move_turns(layer.move) * N_STATES + index)
            index = node % N_STATES
            steps.append(make_step(ops, layer.move, timing))
    steps.reverse()
    return steps
