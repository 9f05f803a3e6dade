import os
import subprocess
import sys

import numpy as np
import pytest

from solver import InvalidState, apply, solve
from solver.puzzles.cube.batch import Puzzle, to_cubie
from solver.puzzles.cube.cubie import (
    CubieCube,
    apply_moves_cubie,
    from_facelets,
    move_cube,
    solved_facelets,
    to_facelets,
)
from solver.puzzles.cube.notation import inverse_moves, move_length, parse_moves
from solver.puzzles.cube.scramble import random_states
from solver.search.twophase import ida as twophase_search
from solver.search.twophase import solve_two_phase
from solver.search.twophase.coords import (
    FLIPS,
    PHASE2_MOVES,
    SLICES,
    TWISTS,
    UD_SPLITS,
    combination_index,
    corner_perm_moves,
    flip_index,
    flip_moves,
    flip_rows,
    permutation_index,
    permutation_rows,
    phase1_coordinates,
    phase2_coordinates,
    slice_index,
    slice_moves,
    slice_perm_moves,
    slice_rows,
    twist_index,
    twist_moves,
    twist_rows,
    ud_edge_perm_moves,
    ud_split_moves,
    ud_split_of_edge_perm,
)
from solver.search.twophase.ida import LAST_PHASE1_MOVES, RETURN_TO_G1, Goal, Stop
from solver.search.twophase.tables import (
    CACHE_NAME,
    SIZES,
    TABLES,
    load_tables,
    pack_nibbles,
    packed_size,
    unpack_nibbles,
)
from solver.search.twophase.views import inverse, turned, views
from solver.tables.cache import cache_dir

PUZZLE = Puzzle.cube3()
G1_MOVES = set(PHASE2_MOVES)


def random_cubes(count, seed):
    return [to_cubie(row) for row in random_states(PUZZLE, count, np.random.default_rng(seed))]


def scrambled(moves, seed, count=40, length=30):
    """Cubes made by random sequences of the given moves (so phase-2 moves give G1 states)."""
    rng = np.random.default_rng(seed)
    return [apply_moves_cubie(CubieCube.solved(3), rng.choice(moves, length).tolist()) for _ in range(count)]


@pytest.fixture(scope="module")
def tables():
    return load_tables()


# --- coordinates --------------------------------------------------------------


def test_coordinate_round_trips():
    assert (twist_index(twist_rows(np.arange(TWISTS))) == np.arange(TWISTS)).all()
    assert (flip_index(flip_rows(np.arange(FLIPS))) == np.arange(FLIPS)).all()
    assert (twist_rows(np.arange(TWISTS)).sum(axis=1) % 3 == 0).all()
    assert (flip_rows(np.arange(FLIPS)).sum(axis=1) % 2 == 0).all()
    assert (slice_index(slice_rows()) == np.arange(SLICES)).all() and (slice_rows().sum(axis=1) == 4).all()
    for n in (4, 8):
        assert (permutation_index(permutation_rows(n)) == np.arange(len(permutation_rows(n)))).all()
    split = ud_split_of_edge_perm()
    assert sorted(set(split.tolist())) == list(range(UD_SPLITS)) and split[0] == 0
    assert (combination_index(np.array([[1, 1, 1, 1, 0, 0, 0, 0], [0, 0, 0, 0, 1, 1, 1, 1]])) == [0, 69]).all()


def test_solved_cube_has_every_coordinate_zero():
    solved = CubieCube.solved(3)
    assert phase1_coordinates(solved) == (0, 0, 0)
    assert phase2_coordinates(solved.cp, solved.ep) == (0, 0, 0)
    assert slice_rows()[0].tolist() == [False] * 8 + [True] * 4  # FR FL BL BR hold the slice edges


def test_one_cube_coordinates_match_the_vectorised_ones():
    for cube in random_cubes(50, 1):
        twist, flip, slice_ = phase1_coordinates(cube)
        assert twist == twist_index(np.array([cube.co]))[0] and flip == flip_index(np.array([cube.eo]))[0]
        assert slice_rows()[slice_].tolist() == [p >= 8 for p in cube.ep]
    for cube in scrambled(list(PHASE2_MOVES), 2):
        corner, edge, slice_perm = phase2_coordinates(cube.cp, cube.ep)
        assert tuple(permutation_rows(8)[corner]) == cube.cp
        assert tuple(permutation_rows(8)[edge]) == cube.ep[:8]
        assert tuple(permutation_rows(4)[slice_perm] + 8) == cube.ep[8:]
    with pytest.raises(ValueError, match="slice"):
        cube = move_cube(3)  # R takes slice edges out of the slice
        phase2_coordinates(cube.cp, cube.ep)


def test_phase1_move_tables_agree_with_cubie_moves():
    twist, flip, slice_ = twist_moves(), flip_moves(), slice_moves()
    for cube in random_cubes(30, 3):
        t, f, s = phase1_coordinates(cube)
        for m in range(18):
            assert phase1_coordinates(cube.multiply(move_cube(m))) == (twist[t, m], flip[f, m], slice_[s, m])


def test_phase2_move_tables_agree_with_cubie_moves():
    corner, edge, slice_perm = corner_perm_moves(), ud_edge_perm_moves(), slice_perm_moves()
    split_of, split = ud_split_of_edge_perm(), ud_split_moves()
    for cube in scrambled(list(PHASE2_MOVES), 4, count=30):
        c, e, p = phase2_coordinates(cube.cp, cube.ep)
        assert split_of[e] == combination_index(np.array([[piece < 4 for piece in cube.ep[:8]]]))[0]
        for k, m in enumerate(PHASE2_MOVES):
            after = cube.multiply(move_cube(m))
            assert phase2_coordinates(after.cp, after.ep) == (corner[c, k], edge[e, k], slice_perm[p, k])
            assert split_of[edge[e, k]] == split[split_of[e], k]
            assert phase1_coordinates(after) == (0, 0, 0)  # G1 moves keep G1


# --- pruning tables -------------------------------------------------------------


@pytest.mark.parametrize("name", list(TABLES))
def test_pruning_table_is_an_exact_bfs(tables, name):
    first, second = (make() for make in TABLES[name])
    distance = tables.distances(name)
    assert len(distance) == SIZES[name] and sum(tables.counts[name]) == SIZES[name]
    assert np.bincount(distance).tolist() == tables.counts[name]
    assert distance[0] == 0 and np.count_nonzero(distance == 0) == 1  # only the solved pair is 0
    a, b = np.divmod(np.arange(SIZES[name], dtype=np.int32), len(second))
    closest = np.full_like(distance, 255)
    for m in range(first.shape[1]):
        around = distance[first[a, m] * len(second) + second[b, m]]
        assert (np.abs(around.astype(np.int8) - distance.astype(np.int8)) <= 1).all()  # one move: one step at most
        np.minimum(closest, around, out=closest)
    assert (closest[1:] == distance[1:] - 1).all()  # and some move brings every other pair one step closer


def test_layer_counts():
    counts = load_tables().counts
    # One move: U, D and the half turns change no phase-1 coordinate, and a quarter turn of R, L, F or B
    # changes them as its inverse does; each of the ten G1 moves gives its own corner permutation.
    assert counts["twist_slice"][:2] == [1, 4] and counts["flip_slice"][:2] == [1, 4]
    assert counts["twist_flip"][:2] == [1, 4]
    assert counts["corner_slice_perm"][:2] == [1, 10] and counts["edge_slice_perm"][:2] == [1, 10]
    assert counts["corner_ud_split"][:2] == [1, 10]
    # Lower bounds of Kociemba's phase distances (at most 12 moves in phase 1, 18 in phase 2).
    assert max(len(counts[n]) for n in ("twist_slice", "flip_slice", "twist_flip")) - 1 <= 12
    assert max(len(counts[n]) for n in ("corner_slice_perm", "edge_slice_perm", "corner_ud_split")) - 1 <= 18


def layer_counts_from_cubies(moves, coordinates, depth):
    """Pairs of coordinates first reached at each depth, by applying move sequences to cubies."""
    first_seen = {coordinates(CubieCube.solved(3)): 0}
    frontier = [CubieCube.solved(3)]
    for d in range(1, depth + 1):
        frontier = [cube.multiply(move_cube(m)) for cube in frontier for m in moves]
        for cube in frontier:
            first_seen.setdefault(coordinates(cube), d)
        frontier = list(set(frontier))
    return np.bincount(list(first_seen.values())).tolist()


def test_first_layers_match_cubie_enumeration():
    counts = load_tables().counts
    for name, (i, j) in {"twist_slice": (0, 2), "flip_slice": (1, 2), "twist_flip": (0, 1)}.items():

        def pair(c, i=i, j=j):
            return phase1_coordinates(c)[i], phase1_coordinates(c)[j]

        assert counts[name][:4] == layer_counts_from_cubies(range(18), pair, 3)

    def phase2(cube):
        corner, edge, slice_perm = phase2_coordinates(cube.cp, cube.ep)
        return corner, edge, slice_perm, int(ud_split_of_edge_perm()[edge])

    for name, (i, j) in {"corner_slice_perm": (0, 2), "edge_slice_perm": (1, 2), "corner_ud_split": (0, 3)}.items():

        def pair2(c, i=i, j=j):
            return phase2(c)[i], phase2(c)[j]

        assert counts[name][:4] == layer_counts_from_cubies(PHASE2_MOVES, pair2, 3)


def test_nibble_packing_round_trips_odd_counts():
    d = np.random.default_rng(0).integers(0, 16, 1001).astype(np.uint8)
    packed = pack_nibbles(d)
    assert len(packed) == packed_size(1001) == 501
    assert (unpack_nibbles(packed, 1001) == d).all()
    with pytest.raises(ValueError, match="below 16"):
        pack_nibbles(np.array([16], dtype=np.uint8))


def test_tables_are_cached_and_a_damaged_cache_is_rebuilt(tables):
    path = cache_dir() / CACHE_NAME
    assert path.exists()
    load_tables.cache_clear()
    again = load_tables()
    assert again.cached and again.counts == tables.counts
    assert all(getattr(again, n) == getattr(tables, n) for n in SIZES)
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    load_tables.cache_clear()
    rebuilt = load_tables()
    assert not rebuilt.cached and rebuilt.edge_slice_perm == tables.edge_slice_perm
    load_tables.cache_clear()
    assert load_tables().cached


def shortest_detour_back_into_g1() -> int:
    """Fewest moves of a canonical sequence that leaves G1 and first comes back at its last move."""
    twist, flip, slice_ = twist_moves(), flip_moves(), slice_moves()
    frontier = {(int(twist[0, m]), int(flip[0, m]), int(slice_[0, m]), m) for m in range(18) if m not in G1_MOVES}
    for length in range(2, 10):
        grown = set()
        for t, f, s, last in frontier:
            for m in range(18):
                if m // 3 == last // 3 or m // 3 + 3 == last // 3:  # canonical: U before D, R before L, F before B
                    continue
                state = (int(twist[t, m]), int(flip[f, m]), int(slice_[s, m]))
                if state == (0, 0, 0):
                    assert m in LAST_PHASE1_MOVES  # a G1 move cannot enter G1 from outside
                    return length
                grown.add(state + (m,))
        frontier = grown
    raise AssertionError("no detour back into G1 found")


def test_g1_states_with_fewer_moves_to_go_than_a_detour_may_be_pruned():
    assert shortest_detour_back_into_g1() == RETURN_TO_G1


# --- views ------------------------------------------------------------------------


def test_views_are_the_same_cube_seen_otherwise():
    cube = random_cubes(1, 5)[0]
    assert turned(turned(turned(cube))) == cube
    assert inverse(inverse(cube)) == cube and cube.multiply(inverse(cube)).is_solved()
    relabel = {}
    for m in range(18):
        relabel[m] = next(n for n in range(18) if turned(move_cube(m)) == move_cube(n))
    assert {relabel[m] // 3 for m in (0, 3, 6)} == {0, 1, 2}  # U R F go round to U R F
    moves = [m for m in np.random.default_rng(6).integers(0, 18, 25).tolist()]
    cube = apply_moves_cubie(CubieCube.solved(3), moves)
    for view in views(cube):
        seen = moves
        for _ in range(view.turns):
            seen = [relabel[m] for m in seen]
        solution_in_view = seen if view.inverted else inverse_moves(seen)
        assert apply_moves_cubie(view.cube, solution_in_view).is_solved()
        assert apply_moves_cubie(cube, view.to_original(solution_in_view)).is_solved()


# --- solving ------------------------------------------------------------------------


def test_random_states_are_solved_within_max_length():
    for cube in random_cubes(12, 7):
        moves = solve_two_phase(cube, budget_s=30, max_length=22)
        assert moves is not None and len(moves) <= 22
        assert apply_moves_cubie(cube, moves).is_solved()


def test_every_answer_solves_whatever_the_target():
    for cube in random_cubes(3, 8):
        moves = solve_two_phase(cube, budget_s=30, max_length=30)
        assert moves is not None and len(moves) <= 30 and apply_moves_cubie(cube, moves).is_solved()
        moves = solve_two_phase(cube, budget_s=0.2, max_length=0)  # all the budget for shorter ones
        assert moves is None or apply_moves_cubie(cube, moves).is_solved()


def test_single_moves_and_short_scrambles_are_undone_in_as_few_moves():
    for m in range(18):
        assert solve_two_phase(move_cube(m), max_length=1) == inverse_moves([m])
    assert solve_two_phase(CubieCube.solved(3)) == []
    cube = apply_moves_cubie(CubieCube.solved(3), parse_moves("R U F' L2 D B'"))
    moves = solve_two_phase(cube, budget_s=30, max_length=6)
    assert len(moves) <= 6 and apply_moves_cubie(cube, moves).is_solved()


def test_g1_states_and_the_superflip():
    for cube in scrambled(list(PHASE2_MOVES), 9, count=5):
        moves = solve_two_phase(cube, budget_s=30, max_length=22)
        assert apply_moves_cubie(cube, moves).is_solved()
    superflip = CubieCube(3, tuple(range(8)), (0,) * 8, tuple(range(12)), (1,) * 12)
    moves = solve_two_phase(superflip, budget_s=30, max_length=22)
    assert len(moves) <= 22 and apply_moves_cubie(superflip, moves).is_solved()


def test_solving_is_deterministic():
    cube = random_cubes(1, 10)[0]
    assert solve_two_phase(cube, budget_s=30) == solve_two_phase(cube, budget_s=30)


def test_numpy_levels_search_the_same_sequences_in_the_same_order(monkeypatch):
    cubes = random_cubes(4, 13)
    vectorised = [solve_two_phase(cube, budget_s=30, max_length=21) for cube in cubes]
    monkeypatch.setattr(twophase_search, "NUMPY_LEVELS_ABOVE", 99)  # plain Python at every level
    assert [solve_two_phase(cube, budget_s=60, max_length=21) for cube in cubes] == vectorised


def test_no_time_is_no_answer_or_a_valid_one():
    cube = random_cubes(1, 11)[0]
    moves = solve_two_phase(cube, budget_s=1e-9)
    assert moves is None or apply_moves_cubie(cube, moves).is_solved()


def test_impossible_states_and_bad_arguments_are_refused():
    twisted = CubieCube(3, tuple(range(8)), (1,) + (0,) * 7, tuple(range(12)), (0,) * 12)
    with pytest.raises(InvalidState, match="twisted"):
        solve_two_phase(twisted)
    with pytest.raises(InvalidState, match="3x3x3"):
        solve_two_phase(CubieCube.solved(2))
    with pytest.raises(InvalidState, match="budget"):
        solve_two_phase(CubieCube.solved(3), budget_s=0)
    with pytest.raises(InvalidState, match="max_length"):
        solve_two_phase(CubieCube.solved(3), max_length=-1)


# --- the API fallback -------------------------------------------------------------------


def test_api_falls_back_to_two_phase_when_astar_runs_out():
    state = to_facelets(random_cubes(1, 12)[0])
    plain = solve(state, max_nodes=1, fallback=None)
    assert not plain.found and "solver" not in plain.details  # A* alone
    solution = solve(state, max_nodes=1, fallback_budget_s=5)  # the default falls back to two-phase
    assert solution.found and solution.details["solver"] == "two-phase" and solution.puzzle == 3
    assert solution.length <= 22 and apply(state, solution.text) == solved_facelets(3)
    qtm = solve(state, "qtm", max_nodes=1, fallback="two-phase")
    assert qtm.found and qtm.metric == "qtm" and from_facelets(apply(state, qtm.text)).is_solved()


def test_api_reports_astar_when_it_finds_the_solution():
    state = apply(solved_facelets(3), "R U F'")
    solution = solve(state, budget_s=20, fallback="two-phase")
    assert solution.found and solution.details["solver"] == "neural-astar"
    assert apply(state, solution.text) == solved_facelets(3)


def test_api_refuses_unknown_fallbacks():
    with pytest.raises(InvalidState, match="fallback"):
        solve(solved_facelets(3), fallback="kociemba")
    with pytest.raises(InvalidState, match="fallback time budget"):
        solve(solved_facelets(3), fallback="two-phase", fallback_budget_s=0)


def test_with_a_cost_the_cheapest_solution_found_is_kept_and_longer_ones_are_weighed():
    def quarter_turns(moves):
        return move_length(moves, "qtm")

    for scramble in ("R2 U2 F' L2 D2 B", "U R2 F B2 D' L2"):
        cube = apply_moves_cubie(CubieCube.solved(3), parse_moves(scramble))
        shortest = solve_two_phase(cube, budget_s=30, max_length=0)
        cheapest = solve_two_phase(cube, budget_s=30, max_length=0, cost=quarter_turns, slack=1)
        assert apply_moves_cubie(cube, cheapest).is_solved()
        assert quarter_turns(cheapest) <= quarter_turns(shortest) and len(cheapest) <= len(shortest) + 1


def test_a_goal_with_a_cost_searches_up_to_its_slack_beyond_the_shortest():
    goal = Goal(deadline=float("inf"), max_length=0, score=lambda moves: -len(moves), slack=2)
    goal.offer([0] * 10)
    goal.offer([1] * 12)  # longer, but cheaper by this cost
    assert goal.shortest == 10 and goal.bound == 11 and goal.best == [1] * 12 and goal.found == 2
    plain = Goal(deadline=float("inf"), max_length=0)
    plain.offer([0] * 10)
    assert plain.bound == 9  # only shorter ones
    with pytest.raises(Stop):
        Goal(deadline=float("inf"), max_length=20).offer([0] * 20)


def test_the_first_solve_on_a_fresh_machine_builds_its_tables_outside_its_budget(tmp_path):
    """With no tables cached (a fresh install), building them takes seconds: a solve with a budget of a
    fraction of that still answers, as its budget starts once the tables are there."""
    script = (
        "from solver import scramble\n"
        "from solver.puzzles.cube.cubie import from_face_letters\n"
        "from solver.search.twophase import solve_two_phase\n"
        "print(solve_two_phase(from_face_letters(scramble(3, seed=300)['state']), budget_s=0.1) is not None)\n"
    )
    env = {**os.environ, "ROBOTD_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "True", done.stderr
