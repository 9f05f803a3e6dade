"""Two-phase's compiled search loops (ida.c) against its Python loops, and the fallback without a compiler."""

import numpy as np
import pytest

from solver.puzzles.cube.batch import Puzzle, to_cubie
from solver.puzzles.cube.cubie import CubieCube, apply_moves_cubie
from solver.puzzles.cube.scramble import random_states
from solver.search.twophase import coords, ida, native, solve_two_phase
from solver.search.twophase.coords import PHASE2_MOVES

needs_compiler = pytest.mark.skipif(native.library() is None, reason=f"no compiled loops: {native.status()}")


def _cubes(count: int, seed: int) -> list[CubieCube]:
    return [to_cubie(row) for row in random_states(Puzzle.cube3(), count, np.random.default_rng(seed))]


def _g1_cubes(count: int, seed: int) -> list[CubieCube]:
    rng = np.random.default_rng(seed)
    return [apply_moves_cubie(CubieCube.solved(3), rng.choice(PHASE2_MOVES, 30).tolist()) for _ in range(count)]


@needs_compiler
@pytest.mark.parametrize("max_length", [22, 21])
def test_the_compiled_loops_find_what_the_python_loops_find(max_length):
    # Same tables, move order and pruning: a search the clock does not cut returns the same moves.
    for cube in _cubes(6, max_length) + _g1_cubes(2, max_length):
        compiled = solve_two_phase(cube, budget_s=60, max_length=max_length)
        python = solve_two_phase(cube, budget_s=60, max_length=max_length, native=False)
        assert compiled == python
        assert compiled is not None and len(compiled) <= max_length
        assert apply_moves_cubie(cube, compiled).is_solved()


@needs_compiler
def test_the_compiled_loops_weigh_a_cost_as_the_python_loops_do():
    def quarter_turns(moves: list[int]) -> float:
        return float(sum(1 if m % 3 != 1 else 2 for m in moves))

    for cube in _cubes(3, 5):
        compiled = solve_two_phase(cube, 60, 21, quarter_turns, slack=1)
        assert compiled == solve_two_phase(cube, 60, 21, quarter_turns, slack=1, native=False)
        assert apply_moves_cubie(cube, compiled).is_solved()


@needs_compiler
def test_a_spent_budget_stops_the_compiled_search_with_the_best_so_far():
    cube = _cubes(1, 9)[0]
    moves = solve_two_phase(cube, budget_s=0.2, max_length=0)  # only the clock ends it
    assert moves is not None and apply_moves_cubie(cube, moves).is_solved()


@pytest.fixture
def fresh_loops(monkeypatch, tmp_path):
    """The compiled loops looked up anew, in an empty cache; the usual ones again afterwards."""
    monkeypatch.setenv("ROBOTD_CACHE_DIR", str(tmp_path))

    def forget():
        native.COMPILED.forget()
        ida.native_tables.cache_clear()

    forget()
    yield
    monkeypatch.undo()
    forget()


def test_without_a_compiler_two_phase_runs_in_python_and_says_why(monkeypatch, fresh_loops, tmp_path):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    assert native.library() is None
    assert "could not compile ida.c" in native.status() and "no-such-compiler" in native.status()
    cube = _cubes(1, 3)[0]
    moves = solve_two_phase(cube, budget_s=30, max_length=22)
    assert moves is not None and apply_moves_cubie(cube, moves).is_solved()


def test_the_compiled_loops_can_be_turned_off(monkeypatch, fresh_loops):
    monkeypatch.setenv("ROBOTD_TWO_PHASE_NATIVE", "0")
    assert native.library() is None and "ROBOTD_TWO_PHASE_NATIVE=0" in native.status()
    assert ida.native_tables() is None


@needs_compiler
def test_compiled_once_into_the_cache_and_loaded_from_it(fresh_loops, tmp_path):
    assert native.library() is not None
    built = list(tmp_path.glob("twophase-ida-*.so"))
    assert len(built) == 1 and str(built[0]) in native.status()
    native.COMPILED.forget()
    stamp = built[0].stat().st_mtime_ns
    assert native.library() is not None and built[0].stat().st_mtime_ns == stamp  # not compiled again


def test_the_compiled_loops_use_the_python_loops_constants():
    # ida.c restates a few constants of ida.py and coords.py; a change to one side alone would make the two
    # searches differ only where the constant matters.
    source = native.SOURCE.read_text()
    expected = {
        "NO_FACE": ida.NO_FACE,
        "SLICES": coords.SLICES,
        "FLIPS": coords.FLIPS,
        "SLICE_PERMS": coords.SLICE_PERMS,
        "UD_SPLITS": coords.UD_SPLITS,
        "RETURN_TO_G1": ida.RETURN_TO_G1,
        "PHASE2_DEPTH_LIMIT": ida.PHASE2_DEPTH_LIMIT,
    }
    for name, value in expected.items():
        assert f"#define {name} {value}\n" in source, name
    assert ida.MAX_SOLUTION_LENGTH <= int(source.split("#define MAX_PHASE1 ")[1].split()[0])
