import pytest

from solver import InvalidState
from solver.puzzles.cube.cubie import from_facelets, solved_facelets
from solver.puzzles.cube.facelets import to_face_letters

SOLVED3 = solved_facelets(3)
SOLVED2 = solved_facelets(2)


def swap(state, i, j):
    s = list(state)
    s[i], s[j] = s[j], s[i]
    return "".join(s)


def rejects(state, *fragments):
    with pytest.raises(InvalidState) as error:
        from_facelets(state)
    for fragment in fragments:
        assert fragment in str(error.value), str(error.value)
    return str(error.value)


def test_wrong_length():
    rejects(SOLVED3[:-1], "54", "24", "got 53")
    rejects("", "got 0")


def test_not_a_string():
    with pytest.raises(InvalidState, match="string"):
        from_facelets(None)


def test_non_letter_names_its_sticker():
    rejects(SOLVED3[:20] + "?" + SOLVED3[21:], "F3", "'?'")


def test_seven_colours():
    rejects(SOLVED3[:20] + "X" + SOLVED3[21:], "6 colours", "uses 7")


def test_colour_count_names_colour_and_stickers():
    rejects(SOLVED3[:19] + "U" + SOLVED3[20:], "'F' is on 8 stickers", "9 of each", "F1, F3")
    rejects("U" + SOLVED2[1:5] + "U" + SOLVED2[6:], "'R' is on 3", "4 of each")


def test_centres_must_differ():
    rejects(swap(SOLVED3, 4, 9), "centres U5 and R5 are both 'R'")


def test_not_a_real_corner_names_its_stickers():
    state = swap(SOLVED3, 8, 9)  # U9 <-> R1 on the URF corner: U R F read as R U F
    message = rejects(state, "U9 R1 F3", "URF slot")
    assert "no real corner" in message


def test_not_a_real_edge():
    state = swap(SOLVED3, 19, 28)  # F2 <-> D2: the UF edge now reads U D
    rejects(state, "U8 F2", "UF slot", "no real edge")


def test_twisted_corner():
    state = list(SOLVED3)
    state[8], state[9], state[20] = "F", "U", "R"  # URF turned clockwise in place
    rejects("".join(state), "twisted")


def test_twisted_corner_2x2():
    state = list(SOLVED2)
    state[3], state[4], state[9] = "F", "U", "R"
    rejects("".join(state), "twisted")


def test_flipped_edge():
    rejects(swap(SOLVED3, 7, 19), "flipped")


def test_parity():
    state = list(SOLVED3)  # exchange the UR and UF edges
    state[5], state[10], state[7], state[19] = "U", "F", "U", "R"
    rejects("".join(state), "parity")


def test_duplicate_piece():
    state = list(SOLVED3)
    state[19] = "R"  # the UF slot now shows the UR edge ...
    state[16] = "F"  # ... and the DR slot the DF edge, so every colour still counts 9
    rejects("".join(state), "the UR edge appears 2 times (in slots UR, UF)")


def test_colour_letters_map_through_centres():
    colours = dict(zip("URFDLB", "wrgyob"))
    state = "".join(colours[c] for c in SOLVED3)
    assert to_face_letters(state) == SOLVED3


def test_2x2_colour_letters_map_through_dlb():
    colours = dict(zip("URFDLB", "wrgyob"))
    assert to_face_letters("".join(colours[c] for c in SOLVED2)) == SOLVED2


def test_2x2_with_a_mirrored_dlb_is_refused():
    state = list(SOLVED2)
    state[14], state[18] = "B", "D"  # DLB corner with two colours exchanged
    with pytest.raises(InvalidState):
        from_facelets("".join(state))


def test_2x2_with_two_stickers_exchanged_across_corners_is_refused():
    state = list(SOLVED2)
    state[14], state[0] = "U", "D"  # U1 <-> D4 (the D sticker of the DLB corner)
    rejects("".join(state), "no real corner")


def test_umlaut_is_not_a_letter_colour():
    rejects("Ü" + SOLVED2[1:], "U1", "letters")
