"""Checks shared by the tests of the puzzles with exact tables (tests/test_skewb.py, tests/test_pyraminx.py)."""

from __future__ import annotations

import json
import operator
import subprocess
import sys

import numpy as np

from solver.puzzles import PuzzleModel, get_puzzle
from solver.tables.exact import ExactTable


def facelet_layers(puzzle: PuzzleModel, depth: int | None = None) -> list[int]:
    """States at each distance, by breadth-first search over facelet strings with the table's moves.

    It knows nothing of the numbering: states are the sticker strings
    themselves (bytes in a set), moved by the sticker permutations.
    """
    moves = [operator.itemgetter(*source) for source in puzzle.sticker_moves[: puzzle.tracked_moves]]
    start = puzzle.solved.encode()
    seen, frontier, layers = {start}, [start], [1]
    while frontier and (depth is None or len(layers) <= depth):
        reached = []
        for state in frontier:
            for move in moves:
                after = bytes(move(state))
                if after not in seen:
                    seen.add(after)
                    reached.append(after)
        frontier = reached
        if reached:
            layers.append(len(reached))
    return layers


def all_states_consistent(table: ExactTable) -> bool:
    """Every state's stored move leads one closer, and no move leads two or more closer."""
    coords = table.coords
    codes = np.frombuffer(table.codes, dtype=np.uint8)
    distance, stored = (codes >> 4).astype(np.int64), codes & 15
    everyone = np.arange(coords.states, dtype=np.int64)
    closest = np.full(coords.states, 99, dtype=np.int64)
    via_stored = np.full(coords.states, -1, dtype=np.int64)
    for m in range(coords.moves):
        after = distance[coords.neighbours(everyone, m)]
        np.minimum(closest, after, out=closest)
        via_stored[stored == m] = after[stored == m]
    others = distance > 0
    return bool((closest[others] == distance[others] - 1).all() and (via_stored[others] == distance[others] - 1).all())


def moves_match_table(puzzle: PuzzleModel, table: ExactTable, states: int, seed: int) -> bool:
    """Turning the stickers and stepping the table's move tables agree, for random states and every move."""
    rng = np.random.default_rng(seed)
    for _ in range(states):
        state = puzzle.random_state(rng)
        index = np.array([puzzle.rank(state)])
        for m in range(len(puzzle.move_names)):
            expected = table.coords.neighbours(index, m)[0] if m < puzzle.tracked_moves else index[0]
            if puzzle.rank(puzzle.apply(state, [m])) != expected:
                return False
    return True


class Stickers:
    """Edit states by sticker names (face letter and reading position, e.g. ``F3``)."""

    def __init__(self, faces: str, per_face: int) -> None:
        self.faces, self.per_face = faces, per_face

    def index(self, name: str) -> int:
        return self.faces.index(name[0]) * self.per_face + int(name[1:]) - 1

    def set(self, state: str, **colours: str) -> str:
        out = list(state)
        for name, colour in colours.items():
            out[self.index(name)] = colour
        return "".join(out)

    def swap(self, state: str, a: str, b: str) -> str:
        return self.set(state, **{a: state[self.index(b)], b: state[self.index(a)]})


def cli(*args: str) -> subprocess.CompletedProcess:
    """``python -m solver`` with these arguments (the session's private table cache is inherited)."""
    return subprocess.run([sys.executable, "-m", "solver", *args], capture_output=True, text=True, timeout=120)


def round_trips(puzzle: PuzzleModel, count: int, seed: int) -> bool:
    """unrank then rank gives the index back, and unrank gives a valid state in face letters."""
    rng = np.random.default_rng(seed)
    for index in [0, puzzle.states - 1, *rng.integers(0, puzzle.states, count)]:
        state = puzzle.unrank(int(index))
        if puzzle.rank(state) != index or puzzle.parse(state) != state:
            return False
    return True


def moves_have_order_three(puzzle: PuzzleModel, seed: int) -> bool:
    """Each move changes a random state, three of it give the state back, and so does the move and its inverse."""
    state = puzzle.random_state(np.random.default_rng(seed))
    return all(
        puzzle.apply(state, [m] * 3)
        == puzzle.apply(state, [m, *puzzle.inverse([m])])
        == state
        != puzzle.apply(state, [m])
        for m in range(len(puzzle.move_names))
    )


def check_exact_table(puzzle: PuzzleModel, table: ExactTable, bfs_depth: int) -> None:
    """The table's first layers agree with a facelet BFS; numbering, stored moves and sticker moves agree."""
    assert facelet_layers(puzzle, depth=bfs_depth) == table.counts[: bfs_depth + 1]
    assert round_trips(puzzle, 2000, seed=2)
    assert moves_match_table(puzzle, table, states=200, seed=1)
    assert all_states_consistent(table)


def check_cli(name: str, counts: list[int], moves: str, bad_state: str) -> None:
    """``table``, ``scramble``, ``solve`` and ``apply`` with ``--puzzle name``; a bad state exits 2, no traceback."""
    puzzle = get_puzzle(name)
    table = json.loads(cli("table", "--puzzle", name).stdout)
    assert table["counts"] == counts and table["gods_number"] == len(counts) - 1 and table["states"] == sum(counts)
    scramble = json.loads(cli("scramble", "--puzzle", name, "--seed", "3").stdout)
    solution = json.loads(cli("solve", "--puzzle", name, "--state", scramble["state"], "--json").stdout)
    assert puzzle.apply(scramble["state"], puzzle.parse_moves(solution["moves"])) == puzzle.solved
    applied = cli("apply", "--puzzle", name, "--state", puzzle.solved, "--moves", moves).stdout.strip()
    assert applied == puzzle.apply(puzzle.solved, puzzle.parse_moves(moves))
    out = cli("solve", "--puzzle", name, "--state", bad_state)
    assert out.returncode == 2 and "stickers" in out.stderr and "Traceback" not in out.stderr
