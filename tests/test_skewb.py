import numpy as np
import pytest

from puzzle_checks import Stickers, check_cli, check_exact_table, facelet_layers, moves_have_order_three
from solver.errors import InvalidState
from solver.puzzles import get_puzzle
from solver.puzzles.cube.geometry import CORNER_SLOTS, cube_rotation_permutation
from solver.puzzles.skewb import CORNERS, CUBE_STICKERS, FACES
from solver.puzzles.stickers import twisted
from solver.tables import exact, solving

SKEWB = get_puzzle("skewb")
SOLVED = SKEWB.solved
# Found by the table's BFS and, in test_distribution_matches_a_facelet_bfs, by a BFS over sticker strings.
COUNTS = [1, 8, 48, 288, 1728, 10248, 59304, 315198, 1225483, 1455856, 81028, 90]
STICKERS = Stickers(FACES, 5)


@pytest.fixture(scope="module")
def table():
    return exact.build_table(SKEWB)


def place(state, slot, piece, twist=0):
    """``state`` with the corner ``piece`` in ``slot``, turned ``twist`` steps clockwise."""
    out = list(state)
    for i, colour in zip(CORNERS[CORNER_SLOTS.index(slot)], twisted(piece, twist)):
        out[i] = colour
    return "".join(out)


def test_counts_god_number_numbering_and_moves(table):
    assert table.counts == COUNTS and table.gods_number == 11
    assert sum(table.counts) == SKEWB.states == 3_149_280
    check_exact_table(SKEWB, table, bfs_depth=5)


@pytest.mark.slow
@pytest.mark.timeout(300)  # about 60 s on 2 shared cores: over half the default limit
def test_distribution_matches_a_facelet_bfs(table):
    assert facelet_layers(SKEWB) == table.counts


def test_r_turns_the_half_around_drb_clockwise():
    # Seen from DRB, clockwise takes D to R, R to B, B to D (and U to L, L to F, F to U): the
    # R centre shows D, and the URF, ULB, UFL, DLF stickers stay put.
    assert SKEWB.apply(SOLVED, SKEWB.parse_moves("R")) == "UFUUURDDDDFFFFLDBBBBLLLULRBRRR"


def test_moves_have_order_three_no_two_commute_and_urf_never_moves():
    assert moves_have_order_three(SKEWB, seed=3)
    for a in range(0, 8, 2):
        for b in range(a + 2, 8, 2):
            assert SKEWB.apply(SOLVED, [a, b]) != SKEWB.apply(SOLVED, [b, a])
    urf = CORNERS[CORNER_SLOTS.index("URF")]
    for m in range(8):
        assert [SKEWB.apply(SOLVED, [m])[i] for i in urf] == list("URF")


def test_solutions_are_optimal_and_solve(table):
    rng = np.random.default_rng(4)
    for _ in range(300):
        state = SKEWB.random_state(rng)
        solution = solving.solve("skewb", state)
        assert SKEWB.apply(state, SKEWB.parse_moves(solution.text)) == SOLVED
        assert solution.length == table.distance(SKEWB.rank(state))


def test_any_letters_and_any_orientation_solve_alike():
    state = SKEWB.apply(SOLVED, SKEWB.parse_moves("R U' B L R' U"))
    coloured = state.translate(str.maketrans("URFDLB", "wrgyob"))
    # The whole puzzle turned a quarter about U (a corner of the other group comes to URF).
    cube = cube_rotation_permutation("U", 3)
    of_cube = {9 * f + k: 5 * f + j for f in range(6) for j, k in enumerate(CUBE_STICKERS)}
    turned = "".join(coloured[of_cube[int(cube[9 * f + k])]] for f in range(6) for k in CUBE_STICKERS)
    assert {solving.solve("skewb", s).length for s in (state, coloured, turned)} == {6}
    solved = SKEWB.apply(turned, SKEWB.parse_moves(solving.solve("skewb", turned).text))
    assert all(len(set(solved[5 * f : 5 * f + 5])) == 1 for f in range(6))


def test_scramble_is_a_seeded_random_state_and_its_sequence():
    a, b = solving.scramble("skewb", seed=7), solving.scramble("skewb", seed=7)
    assert a == b and SKEWB.apply(SOLVED, SKEWB.parse_moves(a["scramble"])) == a["state"]
    assert solving.solve("skewb", a["state"]).length == len(a["scramble"].split())
    short = solving.scramble("skewb", seed=7, length=5)
    assert len(short["scramble"].split()) == 5


def test_notation():
    assert SKEWB.parse_moves("R U' L B'") == SKEWB.parse_moves("RU'LB’") == [0, 3, 4, 7]
    with pytest.raises(InvalidState, match=r"move 2 \('U2' at character 3\) is not a Skewb move: use R U L B"):
        SKEWB.parse_moves("R U2")


def test_table_is_cached():
    exact.load_table.cache_clear()
    exact.load_table(SKEWB)
    exact.load_table.cache_clear()
    again = exact.load_table(SKEWB)
    assert again.cached and again.counts == COUNTS


def test_cli_table_scramble_solve_and_apply():
    check_cli("skewb", COUNTS, "R U' B", "UUUU")


@pytest.mark.parametrize(
    "state,message",
    [
        ("UUUU", "a Skewb state has 30 stickers"),
        ("1" + SOLVED[1:], "sticker U1 is '1': colours must be letters"),
        ("R" + SOLVED[1:], "colour 'R' is on 6 stickers, a Skewb has 5 of each colour"),
        (
            STICKERS.swap(SOLVED, "R1", "U1"),
            "the URF corner (U5 R1 F2) has colours U U F: no corner has a colour twice",
        ),
        (STICKERS.swap(SOLVED, "R1", "D2"), "colour 'U' shares a corner with every other colour"),
        (place(SOLVED, "DFR", "DRF"), "the corner at D2 F5 R4 (DFR slot) has colours of faces D R F: no real corner"),
        (
            place(place(SOLVED, "UFL", "ULB"), "ULB", "UFL"),
            "the corner at U4 F1 L2 (UFL slot) is the ULB corner: "
            "a Skewb corner only moves among the four slots of its",
        ),
        (
            STICKERS.set(place(SOLVED, "UBR", "UFL"), F3="B", L3="R"),
            "the UFL corner appears 2 times (in slots UFL, UBR)",
        ),
        (
            place(place(SOLVED, "ULB", "DLF"), "DLF", "ULB"),
            "two of the corners in the ULB, DLF and DRB slots are swapped",
        ),
        (STICKERS.swap(SOLVED, "U3", "R3"), "two centres are swapped"),
        (place(place(SOLVED, "UFL", "UBR"), "UBR", "UFL"), "two of the corners UFL, UBR, DFR, DBL are swapped"),
        (place(SOLVED, "UFL", "UFL", 1), "one of UFL, UBR, DFR, DBL is turned clockwise in place"),
        (place(SOLVED, "DRB", "DRB", 2), "one of ULB, DLF, DRB is turned counter-clockwise in place"),
    ],
)
def test_impossible_states_say_what_and_where(state, message):
    with pytest.raises(InvalidState) as error:
        SKEWB.parse(state)
    assert message in str(error.value)
