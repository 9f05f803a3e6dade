"""The Skewb: 30-sticker states, WCA moves R U L B, validation, and numbering for an exact table.

Facelet order: faces U R F D L B, as for the cubes; each face's five
stickers in reading order as the face is drawn in the cube's net (U above
F; L F R B in a row; D below F): 1 top-left corner, 2 top-right corner,
3 centre, 4 bottom-left corner, 5 bottom-right corner::

              U1    U2
                 U3
              U4    U5
    L1    L2  F1    F2  R1    R2  B1    B2
       L3        F3        R3        B3
    L4    L5  F4    F5  R4    R5  B4    B5
              D1    D2
                 D3
              D4    D5

Moves (WCA): R, U, L and B turn the half of the puzzle around the corner
DRB, ULB, DLF and DBL clockwise, as seen looking at that corner; X' turns
it back. None of them moves the URF corner, so states are held with URF in
place ("fixed corner notation"): the colours of the URF corner name U, R
and F, and the colour never sharing a corner with each names the opposite
face, so a Skewb given in any orientation and any six letters is accepted.

Counting and numbering happen in a second frame, where the four corners
URF ULB DLF DRB ("fixed corners") stay in their slots and only twist, and
every move turns the half around one of them (WCA's B is then the turn
around URF, the same state up to a whole-puzzle rotation). A state there is
an even permutation of the six centres (360), an even permutation of the
free corners UFL UBR DFR DBL (12) with twists summing to 0 (27), and the
twists of the fixed corners (27): their sum is fixed by the free corners'
permutation, because each clockwise move twists one fixed corner clockwise
and 3-cycles three free corners. 360 * 12 * 27 * 27 = 3,149,280 states.
"""

from __future__ import annotations

from functools import cache
from typing import NoReturn

import numpy as np

from ..errors import InvalidState
from . import PuzzleModel
from .cube.geometry import CORNER_SLOTS, NORMALS, OPPOSITE, corner_facelets, stickers
from .ranking import factor_table, parity, rank_even, unrank_even
from .space import compose, turn_permutation
from .stickers import ColourScheme, check_letters, describe, twisted, twists

FACES = "URFDLB"
CUBE_STICKERS = (0, 2, 4, 6, 8)  # the 3x3 stickers a Skewb face has, in reading order
FIXED = (0, 2, 5, 7)  # URF ULB DLF DRB: slot ids in geometry.CORNER_SLOTS
FREE = (1, 3, 4, 6)  # UFL UBR DFR DBL
WCA_AXES = {"R": "DRB", "U": "ULB", "L": "DLF", "B": "DBL"}
MODEL_AXES = {"R": "DRB", "U": "ULB", "L": "DLF", "B": "URF"}


def sticker_name(index: int) -> str:
    """Face letter and reading position, e.g. ``F3`` for the F centre."""
    return f"{FACES[index // 5]}{index % 5 + 1}"


def _points() -> list[tuple[int, int, int]]:
    """Each sticker as one point (twice its cubie position plus its normal), in facelet order."""
    out = []
    for face in range(6):
        for k in CUBE_STICKERS:
            pos, normal = stickers(3)[9 * face + k]
            x, y, z = (2 * (p + n) for p, n in zip(pos, normal))
            out.append((x, y, z))
    return out


POINTS = _points()
CORNERS = tuple(tuple(5 * (i // 9) + CUBE_STICKERS.index(i % 9) for i in slot) for slot in corner_facelets(3))
CENTRES = tuple(5 * f + 2 for f in range(6))
SOLVED = "".join(f * 5 for f in FACES)
_READ = {colours: (piece, t) for piece, name in enumerate(CORNER_SLOTS) for colours, t in twists(name).items()}


def _axis(corner: str) -> tuple[int, int, int]:
    x, y, z = (sum(NORMALS[f][k] for f in corner) for k in range(3))
    return x, y, z


def _turns(axes: dict[str, str]) -> tuple[tuple[int, ...], ...]:
    out = []
    for corner in axes.values():
        clockwise = turn_permutation(POINTS, _axis(corner))
        out += [clockwise, compose(clockwise, clockwise)]
    return tuple(out)


WCA_TURNS = _turns(WCA_AXES)
MODEL_TURNS = _turns(MODEL_AXES)
_SPIN = turn_permutation(POINTS, _axis("URF"), depth=-(10**6))  # the whole puzzle, clockwise about URF
ROTATIONS = (tuple(range(30)), _SPIN, compose(_SPIN, _SPIN))


def _permute(state: str, source) -> str:
    return "".join([state[i] for i in source])


def _corner(state: str, slot: int) -> tuple[int, int] | None:
    a, b, c = CORNERS[slot]
    return _READ.get(state[a] + state[b] + state[c])


def _checked_corner(state: str, slot: int) -> tuple[int, int]:
    """(piece, twist) in a slot of a state whose corners were checked by ``_read_corners``."""
    found = _corner(state, slot)
    if found is None:
        raise AssertionError(f"slot {CORNER_SLOTS[slot]} holds no real corner in a checked state")
    return found


def _colour_map(state: str) -> dict[str, str]:
    """Colour letter -> face letter, through the URF corner and opposite colours."""
    corners = [state[a] + state[b] + state[c] for a, b, c in CORNERS]
    frame, colours, mapping = corners[0], set(state), {}
    if len(set(frame)) != 3:
        raise InvalidState(f"{_urf_shows(frame)}: no corner has a colour twice")
    for colour, face in zip(frame, "URF"):
        never = sorted(colours.difference(*[c for c in corners if colour in c]))
        if len(never) != 1:
            others = "every other colour" if not never else "neither of " + ", ".join(map(repr, never))
            raise InvalidState(
                f"colour {colour!r} shares a corner with {others}: on a real Skewb each colour "
                "shares corners with four others and never with its opposite"
            )
        mapping[colour], mapping[never[0]] = face, OPPOSITE[face]
    if len(mapping) != 6:
        raise InvalidState(
            f"{_urf_shows(frame)}, and two of these never share a corner with the same colour: "
            "a colour has one opposite only"
        )
    return mapping


def _urf_colours(state: str) -> str:
    a, b, c = CORNERS[0]
    return state[a] + state[b] + state[c]


def _urf_shows(colours: str) -> str:
    return f"the URF corner ({describe(CORNERS[0], sticker_name)}) has colours {' '.join(colours)}"


def _read_corners(faces: str) -> list[tuple[int, int]]:
    """(piece, twist) in every corner slot, checking each is a real corner that can be there."""
    corners = []
    for slot in range(8):
        found = _corner(faces, slot)
        if found is None or (found[0] in FIXED) != (slot in FIXED):
            _bad_corner(faces, slot, found)
        corners.append(found)
    pieces = [p for p, _ in corners]
    if len(set(pieces)) < 8:
        piece = next(p for p in pieces if pieces.count(p) > 1)
        slots = [CORNER_SLOTS[s] for s, p in enumerate(pieces) if p == piece]
        raise InvalidState(f"the {CORNER_SLOTS[piece]} corner appears {len(slots)} times (in slots {', '.join(slots)})")
    if parity([FIXED.index(pieces[s]) for s in FIXED]):
        raise InvalidState(
            "two of the corners in the ULB, DLF and DRB slots are swapped: with URF in place, "
            "these three corners only ever cycle all together"
        )
    return corners


def _bad_corner(faces: str, slot: int, found: tuple[int, int] | None) -> NoReturn:
    where = f"the corner at {describe(CORNERS[slot], sticker_name)} ({CORNER_SLOTS[slot]} slot)"
    if found is None:
        colours = " ".join(faces[i] for i in CORNERS[slot])
        raise InvalidState(f"{where} has colours of faces {colours}: no real corner looks like that")
    raise InvalidState(
        f"{where} is the {CORNER_SLOTS[found[0]]} corner: a Skewb corner only moves among the "
        "four slots of its own group (URF ULB DLF DRB, or UFL UBR DFR DBL)"
    )


def _to_model(faces: str) -> str:
    """The state turned as a whole so that URF ULB DLF DRB are in their own slots."""
    for rotation in ROTATIONS:
        turned = _permute(faces, rotation)
        if _checked_corner(turned, 7)[0] == 7:
            return turned
    raise AssertionError("the fixed corners are not a rotation of their slots")


@cache
def _free_classes() -> dict[tuple[int, ...], int]:
    """Free-corner permutation -> clockwise model moves (mod 3) that make it: the fixed corners' twist sum.

    Each clockwise move twists one fixed corner clockwise and 3-cycles three
    free corners, so this is well defined (the exact state count checks it).
    """
    steps = [_model_corners(_permute(SOLVED, MODEL_TURNS[m]))[0] for m in range(0, 8, 2)]
    classes: dict[tuple[int, ...], int] = {(0, 1, 2, 3): 0}
    frontier: list[tuple[int, ...]] = [(0, 1, 2, 3)]
    while frontier:
        perm = frontier.pop()
        for step in steps:
            after = tuple(perm[i] for i in step)
            if after not in classes:
                classes[after] = (classes[perm] + 1) % 3
                frontier.append(after)
    return classes


def _model_corners(model: str) -> tuple[tuple[int, ...], list[int], list[int]]:
    """(free corner permutation, free twists, fixed twists) of a state in the model frame."""
    free = [_checked_corner(model, s) for s in FREE]
    perm = tuple(FREE.index(p) for p, _ in free)
    return perm, [t for _, t in free], [_checked_corner(model, s)[1] for s in FIXED]


def _check_twists(perm: tuple[int, ...], free_twist: list[int], fixed_twist: list[int]) -> None:
    if parity(perm):
        raise InvalidState(
            "two of the corners UFL, UBR, DFR, DBL are swapped: these four corners only ever move in 3-cycles"
        )
    for twist, names in (
        (sum(free_twist), "UFL, UBR, DFR, DBL"),
        (sum(fixed_twist) - _free_classes()[perm], "ULB, DLF, DRB"),
    ):
        if twist % 3:
            way = "clockwise" if twist % 3 == 1 else "counter-clockwise"
            raise InvalidState(
                f"a corner is twisted: one of {names} is turned {way} in place "
                "(the corner twists add up to an impossible total)"
            )


def _explain_corners(faces: str) -> None:
    """Raise InvalidState saying why the corners of ``faces`` are no reachable arrangement."""
    _read_corners(faces)
    _check_twists(*_model_corners(_to_model(faces)))


CORNER_STATES = 12 * 27 * 27
_CORNER_STICKERS = tuple(i for slot in CORNERS for i in slot)


def _digits(values: np.ndarray, count: int) -> np.ndarray:
    """Base-3 digits of each value, the first most significant: shape (len(values), count)."""
    return (values[:, None] // 3 ** np.arange(count - 1, -1, -1)) % 3


@cache
def _all_corners_held() -> np.ndarray:
    """(8748, 30) ASCII codes: for each corner number, a state with those corners held with URF in place.

    Number = (free permutation * 27 + free twists) * 27 + fixed twists, all
    in the model frame (the last free twist and the URF twist are implied);
    centres are left as in the model frame's solved state.
    """
    rest, fixed = np.divmod(np.arange(CORNER_STATES), 27)
    perm, free = np.divmod(rest, 27)
    perms = np.array([unrank_even(r, 4) for r in range(12)])[perm]
    free_twist = _digits(free, 3)
    free_twist = np.concatenate([free_twist, -free_twist.sum(1, keepdims=True) % 3], axis=1)
    fixed_twist = _digits(fixed, 3)
    classes = np.array([_free_classes()[unrank_even(r, 4)] for r in range(12)])[perm]
    fixed_twist = np.concatenate([(classes - fixed_twist.sum(1))[:, None] % 3, fixed_twist], axis=1)
    shows = np.array([[[ord(c) for c in twisted(name, t)] for t in range(3)] for name in CORNER_SLOTS])
    model = np.tile(np.frombuffer(SOLVED.encode(), dtype=np.uint8), (CORNER_STATES, 1))
    for i, slot in enumerate(FREE):
        model[:, CORNERS[slot]] = shows[np.array(FREE)[perms[:, i]], free_twist[:, i]]
    for i, slot in enumerate(FIXED):
        model[:, CORNERS[slot]] = shows[slot, fixed_twist[:, i]]
    held = model.copy()
    for rotation in ROTATIONS:
        turned = model[:, rotation]
        upright = (turned[:, CORNERS[0]] == shows[0, 0]).all(axis=1)
        held[upright] = turned[upright]
    return held


def _corner_key(faces: str) -> str:
    return "".join([faces[i] for i in _CORNER_STICKERS])


@cache
def _corner_numbers() -> dict[str, int]:
    """Corner stickers of every reachable arrangement -> its number (0 .. 8747)."""
    keys = _all_corners_held()[:, _CORNER_STICKERS]
    return {row.tobytes().decode(): n for n, row in enumerate(keys)}


_CENTRE_NUMBERS = {"".join(FACES[c] for c in unrank_even(n, 6)): n for n in range(360)}


class Skewb(PuzzleModel):
    name = "Skewb"
    move_names = ("R", "R'", "U", "U'", "L", "L'", "B", "B'")
    tracked_moves = 8
    sticker_moves = WCA_TURNS
    solved = SOLVED
    factor_sizes = (360, CORNER_STATES)  # centres; corners (numbered in the model frame)

    def __init__(self) -> None:
        # A remembered scheme is right whenever the corners come out as a reachable arrangement:
        # the URF colours fix U, R and F, and real corners fix the opposite faces.
        self._scheme = ColourScheme(
            _urf_colours, _colour_map, lambda faces: _corner_key(faces) in _corner_numbers(), _explain_corners
        )

    def parse(self, state: str) -> str:
        check_letters(state, self.name, FACES, 5, sticker_name)
        faces = self._scheme.face_letters(state)
        if "".join([faces[i] for i in CENTRES]) not in _CENTRE_NUMBERS:
            raise InvalidState(
                "two centres are swapped: every Skewb move cycles three centres, so the "
                "centres are always an even permutation"
            )
        return faces

    def rank(self, state: str) -> int:
        centres = _CENTRE_NUMBERS["".join([state[i] for i in CENTRES])]
        return centres * CORNER_STATES + _corner_numbers()[_corner_key(state)]

    def unrank(self, index: int) -> str:
        centres, corners = divmod(index, CORNER_STATES)
        out = list(_all_corners_held()[corners].tobytes().decode())
        for i, c in zip(CENTRES, unrank_even(centres, 6)):
            out[i] = FACES[c]
        return "".join(out)

    def factor_moves(self) -> tuple[np.ndarray, ...]:
        return _factor_moves()


@cache
def _factor_moves() -> tuple[np.ndarray, ...]:
    centre_moves = [[CENTRES.index(WCA_TURNS[m][i]) for i in CENTRES] for m in range(8)]
    numbers = _corner_numbers()

    def centres(value, m):
        return rank_even([unrank_even(value, 6)[c] for c in centre_moves[m]])

    held = _all_corners_held()
    corners = np.array(
        [[numbers[row.tobytes().decode()] for row in held[:, compose(move, _CORNER_STICKERS)]] for move in WCA_TURNS],
        dtype=np.int64,
    ).T
    return factor_table(360, 8, centres), corners


MODEL = Skewb()
