import numpy as np
import pytest

from puzzle_checks import Stickers, check_cli, check_exact_table, facelet_layers, moves_have_order_three
from solver.errors import InvalidState
from solver.puzzles import get_puzzle
from solver.puzzles.pyraminx import AXES, FACES, NET, POINTS
from solver.puzzles.space import turn_permutation
from solver.tables import exact, solving

PYRAMINX = get_puzzle("pyraminx")
SOLVED = PYRAMINX.solved
STICKERS = Stickers(FACES, 9)
# Found by the table's BFS and, in test_distribution_matches_a_facelet_bfs, by a BFS over sticker strings.
COUNTS = [1, 8, 48, 288, 1728, 9896, 51808, 220111, 480467, 166276, 2457, 32]


@pytest.fixture(scope="module")
def table():
    return exact.build_table(PYRAMINX)


def test_counts_god_number_numbering_and_moves(table):
    assert table.counts == COUNTS and table.gods_number == 11
    assert sum(table.counts) == PYRAMINX.states == 933_120 == 360 * 32 * 81
    check_exact_table(PYRAMINX, table, bfs_depth=6)


@pytest.mark.slow
def test_distribution_matches_a_facelet_bfs(table):
    # Big turns carry the tips along with their centres, so the sticker strings reached are the 933,120.
    assert facelet_layers(PYRAMINX) == table.counts


def test_the_net_draws_every_face_as_seen_from_outside():
    for drawn in NET.values():
        (a, pa), (b, pb), (c, pc) = drawn.items()
        flat = (pb[0] - pa[0]) * (pc[1] - pa[1]) - (pb[1] - pa[1]) * (pc[0] - pa[0])
        corner_a, corner_b, corner_c = (np.array(AXES[v]) for v in (a, b, c))
        outward = -np.array(AXES[next(v for v in AXES if v not in drawn)])
        assert np.sign(flat) == np.sign(np.cross(corner_b - corner_a, corner_c - corner_a) @ outward) != 0


def test_u_and_u_tip_turn_clockwise_seen_from_the_top():
    # Seen from above, clockwise takes F to L, L to R, R to F: F's top two rows show R's colour.
    assert PYRAMINX.apply(SOLVED, PYRAMINX.parse_moves("U")) == "RRRRFFFFFLLFFFLLFLLLLRRLRRR" + "D" * 9
    assert PYRAMINX.apply(SOLVED, PYRAMINX.parse_moves("u")) == "RFFFFFFFFLLLLFLLLLLRRRRRRRR" + "D" * 9


def test_moves_have_order_three_and_tips_commute_with_everything():
    assert moves_have_order_three(PYRAMINX, seed=3)
    state = PYRAMINX.random_state(np.random.default_rng(3))
    for tip in range(8, 16, 2):
        for m in range(16):
            assert PYRAMINX.apply(state, [tip, m]) == PYRAMINX.apply(state, [m, tip])
    assert PYRAMINX.apply(state, [0, 2]) != PYRAMINX.apply(state, [2, 0])


def test_solutions_are_optimal_tips_first_and_solve(table):
    rng = np.random.default_rng(4)
    for _ in range(300):
        state = PYRAMINX.random_state(rng)
        solution = solving.solve("pyraminx", state)
        moves = solution.text.split()
        assert PYRAMINX.apply(state, PYRAMINX.parse_moves(solution.text)) == SOLVED
        assert all(m[0].islower() for m in moves[: solution.untracked])
        assert not any(m[0].islower() for m in moves[solution.untracked :])
        assert solution.tracked == table.distance(PYRAMINX.rank(state))
        assert solution.as_dict()["tips"] == solution.untracked <= 4


def test_tip_moves_count_the_tips_out_of_line():
    state = PYRAMINX.apply(SOLVED, PYRAMINX.parse_moves("R L' b u' r"))
    solution = solving.solve("pyraminx", state)
    assert (solution.untracked, solution.tracked) == (3, 2)
    assert solution.as_dict()["without_tips"] == 2


def test_any_letters_and_any_orientation_solve_alike():
    state = PYRAMINX.apply(SOLVED, PYRAMINX.parse_moves("U R' B L U' l r'"))
    coloured = state.translate(str.maketrans("FLRD", "gbry"))
    spin = turn_permutation(POINTS, AXES["B"], depth=-(10**6))  # the whole puzzle, a third turn about B
    turned = "".join(coloured[i] for i in spin)
    lengths = {solving.solve("pyraminx", s).length for s in (state, coloured, turned)}
    assert len(lengths) == 1
    solved = PYRAMINX.apply(turned, PYRAMINX.parse_moves(solving.solve("pyraminx", turned).text))
    assert all(len(set(solved[9 * f : 9 * f + 9])) == 1 for f in range(4))


def test_scramble_is_a_seeded_random_state_with_tips_last():
    a, b = solving.scramble("pyraminx", seed=7), solving.scramble("pyraminx", seed=7)
    assert a == b and PYRAMINX.apply(SOLVED, PYRAMINX.parse_moves(a["scramble"])) == a["state"]
    moves = a["scramble"].split()
    tips = sum(m[0].islower() for m in moves)
    assert all(m[0].islower() for m in moves[len(moves) - tips :])
    assert solving.solve("pyraminx", a["state"]).length == len(moves)


def test_notation():
    assert PYRAMINX.parse_moves("U L' R B' u l' r b'") == [0, 3, 4, 7, 8, 11, 12, 15]
    with pytest.raises(
        InvalidState, match=r"move 1 \('D' at character 1\) is not a Pyraminx move: use U L R B u l r b"
    ):
        PYRAMINX.parse_moves("D")


def test_cli_table_scramble_solve_and_apply():
    check_cli("pyraminx", COUNTS, "U R' b", "FFFF")


@pytest.mark.parametrize(
    "state,message",
    [
        ("FFFF", "a Pyraminx state has 36 stickers"),
        ("L" + SOLVED[1:], "colour 'F' is on 8 stickers, a Pyraminx has 9 of each colour ('F' at F2, F3,"),
        (
            STICKERS.swap(SOLVED, "L4", "F5"),
            "the U centre (F3 L4 R2) has colours F F R: a centre piece has three different colours",
        ),
        (STICKERS.swap(SOLVED, "D2", "R5"), "the U and L centres both lack colour 'D'"),
        (
            STICKERS.swap(SOLVED, "F3", "L4"),
            "the centre at F3 L4 R2 (U vertex) has colours of faces L F R: no real centre looks like that",
        ),
        (STICKERS.swap(SOLVED, "F1", "L5"), "the tip at F1 L5 R1 (U vertex) has colours of faces L F R: no real tip"),
        (STICKERS.swap(SOLVED, "L8", "F4"), "the edge at F2 L8 (FL slot) has colours of faces F F: no real edge"),
        (STICKERS.set(SOLVED, L8="R", R8="L"), "the FR edge appears 2 times (in slots FL, FR)"),
        (STICKERS.set(SOLVED, L8="R", R6="L"), "two edges are swapped"),
        (STICKERS.swap(SOLVED, "F2", "L8"), "an edge is flipped"),
    ],
)
def test_impossible_states_say_what_and_where(state, message):
    with pytest.raises(InvalidState) as error:
        PYRAMINX.parse(state)
    assert message in str(error.value)
