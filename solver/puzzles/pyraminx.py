"""The Pyraminx: 36-sticker states, WCA moves U L R B and tips u l r b, validation, numbering.

Held as WCA scrambles are: one face to the front (F), its vertices U (top),
L (front left) and R (front right), the fourth vertex B at the back. Faces
are named F, L (left: U L B), R (right: U R B) and D (bottom: L R B), in
that order; each face's nine stickers in reading order (rows top to bottom,
left to right) as the face is drawn in this net, F pointing up, the others
pointing down::

         L1  L2  L3  L4  L5  \\ F1 /  R1  R2  R3  R4  R5
            L6  L7  L8      F2 F3 F4     R6  R7  R8
               L9       F5 F6 F7 F8 F9      R9
                        D1 D2 D3 D4 D5
                           D6 D7 D8
                              D9

(F5, F9 and F1 are the L, R and U tips on F; F3 is the U centre, F6 and F8
the L and R centres; F2, F4 and F7 are the F-L, F-R and F-D edges.)

Moves (WCA): U, L, R and B turn the two layers at that vertex (tip,
centre and three edges) clockwise as seen looking at the vertex; u, l, r
and b turn the tip alone; X' turns back. The centres (axial pieces) never
leave their vertex, so colours are mapped to faces through them: each
centre shows three colours, and the one it lacks is the colour of the face
opposite its vertex.

Tips are independent of everything else: a tip's twist relative to its
centre changes only by its own tip move, so the tips are solved apart and
the table covers the rest: an even permutation of the six edges (360),
their flips with an even sum (32) and the twists of the four centres (81),
933,120 states; with the tips' 81 it is 75,582,720.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ..errors import InvalidState
from . import PuzzleModel
from .ranking import factor_table, parity, rank_digits, rank_even, unrank_digits, unrank_even
from .space import Vector, compose, turn_permutation
from .stickers import ColourScheme, check_letters, describe, twisted, twists

FACES = "FLRD"
VERTICES = "ULRB"
AXES = {"U": (1, -1, -1), "L": (-1, -1, 1), "R": (-1, 1, -1), "B": (1, 1, 1)}
OPPOSITE_FACE = {"U": "D", "L": "R", "R": "L", "B": "F"}  # the face a vertex is not on
# Each face's vertices where the net draws them (x to the right, y up, in triangle heights).
NET = {
    "F": {"U": (1, 1), "L": (0, 0), "R": (2, 0)},
    "L": {"B": (-1, 1), "U": (1, 1), "L": (0, 0)},
    "R": {"U": (1, 1), "B": (3, 1), "R": (2, 0)},
    "D": {"L": (0, 0), "R": (2, 0), "B": (1, -1)},
}
EDGES = ("FL", "FR", "FD", "LR", "LD", "RD")  # an edge slot is named by its two faces


def sticker_name(index: int) -> str:
    """Face letter and reading position, e.g. ``F3`` for the U centre's sticker on F."""
    return f"{FACES[index // 9]}{index % 9 + 1}"


def _face_stickers(face: str) -> list[dict[str, int]]:
    """Weights (out of 9) of the face's vertices at the middle of each small triangle, in reading order."""
    corners = list(NET[face])
    weights = [
        (3 * i + s, 3 * j + s, 3 * (n - i - j) + s)
        for s, n in ((1, 2), (2, 1))
        for i in range(n + 1)
        for j in range(n + 1 - i)
    ]
    base = 9 * min(y for _, y in NET[face].values())

    def place(w):
        x = sum(wk * NET[face][v][0] for wk, v in zip(w, corners))
        y = sum(wk * NET[face][v][1] for wk, v in zip(w, corners))
        return -((y - base) // 3), x  # rows from the top, then left to right

    return [dict(zip(corners, w)) for w in sorted(weights, key=place)]


STICKERS = tuple(w for face in FACES for w in _face_stickers(face))


def _point(weights: dict[str, int]) -> Vector:
    x, y, z = (2 * sum(weights[v] * AXES[v][k] for v in weights) for k in range(3))
    return x, y, z


POINTS = tuple(_point(w) for w in STICKERS)
SOLVED = "".join(f * 9 for f in FACES)


def _vertex_piece(vertex: str, weight: int) -> tuple[int, ...]:
    """Stickers of the tip (weight 7) or centre (5) at a vertex: from its first face in FACES, clockwise."""
    first = next(i for i, w in enumerate(STICKERS) if w.get(vertex) == weight)
    spin = turn_permutation(POINTS, AXES[vertex], depth=-(10**6))  # the whole puzzle, clockwise
    order = [first]
    while len(order) < 3:
        order.append(spin.index(order[-1]))
    return tuple(order)


def _edge_stickers(name: str) -> tuple[int, int]:
    """The edge slot's sticker on its first face, then on its second."""
    ends = set(NET[name[0]]) & set(NET[name[1]])
    first, second = (
        next(i for i, w in enumerate(STICKERS) if i // 9 == FACES.index(face) and all(w[v] == 4 for v in ends))
        for face in name
    )
    return first, second


TIPS = tuple(_vertex_piece(v, 7) for v in VERTICES)
CENTRES = tuple(_vertex_piece(v, 5) for v in VERTICES)
EDGE_STICKERS = tuple(_edge_stickers(name) for name in EDGES)
VERTEX_FACES = tuple("".join(SOLVED[i] for i in piece) for piece in CENTRES)  # a vertex's faces, clockwise
_VERTEX_READ = tuple(twists(home) for home in VERTEX_FACES)
_EDGE_READ = {
    colours: (piece, flip) for piece, name in enumerate(EDGES) for flip, colours in enumerate((name, name[::-1]))
}
TIP_MOVES = 8  # move ids from here on turn a tip alone


def _turns() -> tuple[tuple[int, ...], ...]:
    out = []
    for depth in (0, 30):  # two layers (big turns), then the tip alone (a tip sticker's point . axis is 38)
        for vertex in VERTICES:
            clockwise = turn_permutation(POINTS, AXES[vertex], depth)
            out += [clockwise, compose(clockwise, clockwise)]
    return tuple(out)


def _colours(state: str, piece: tuple[int, ...]) -> str:
    return "".join([state[i] for i in piece])


def _colour_map(state: str) -> dict[str, str]:
    """Colour letter -> face letter: the colour a centre lacks is that of the face opposite its vertex."""
    colours, lacking = set(state), dict[str, str]()
    for vertex, piece in zip(VERTICES, CENTRES):
        shown = _colours(state, piece)
        if len(set(shown)) != 3:
            raise InvalidState(
                f"the {vertex} centre ({describe(piece, sticker_name)}) has colours "
                f"{' '.join(shown)}: a centre piece has three different colours"
            )
        missing = (colours - set(shown)).pop()
        if missing in lacking:
            raise InvalidState(
                f"the {lacking[missing]} and {vertex} centres both lack colour {missing!r}: each "
                "colour is missing from one centre only, the one at the vertex opposite its face"
            )
        lacking[missing] = vertex
    return {colour: OPPOSITE_FACE[vertex] for colour, vertex in lacking.items()}


def _vertex_twists(faces: str, pieces: tuple[tuple[int, ...], ...], kind: str) -> list[int]:
    out = []
    for v, piece in enumerate(pieces):
        twist = _VERTEX_READ[v].get(_colours(faces, piece))
        if twist is None:
            raise InvalidState(
                f"the {kind} at {describe(piece, sticker_name)} ({VERTICES[v]} vertex) has colours "
                f"of faces {' '.join(_colours(faces, piece))}: no real {kind} looks like that"
            )
        out.append(twist)
    return out


def _read_edges(faces: str) -> tuple[tuple[int, ...], list[int]]:
    """(edge permutation, flips), checking the edges can be reached."""
    edges = []
    for slot, stickers in enumerate(EDGE_STICKERS):
        found = _EDGE_READ.get(_colours(faces, stickers))
        if found is None:
            raise InvalidState(
                f"the edge at {describe(stickers, sticker_name)} ({EDGES[slot]} slot) has "
                f"colours of faces {' '.join(_colours(faces, stickers))}: "
                "no real edge looks like that"
            )
        edges.append(found)
    perm = tuple(p for p, _ in edges)
    if len(set(perm)) < 6:
        piece = next(p for p in perm if perm.count(p) > 1)
        slots = [EDGES[s] for s, p in enumerate(perm) if p == piece]
        raise InvalidState(f"the {EDGES[piece]} edge appears {len(slots)} times (in slots {', '.join(slots)})")
    if parity(perm):
        raise InvalidState(
            "two edges are swapped: every Pyraminx move cycles three edges, so the edges are always an even permutation"
        )
    flips = [f for _, f in edges]
    if sum(flips) % 2:
        raise InvalidState("an edge is flipped: the edge flips add up to an odd number")
    return perm, flips


def _tip_moves(tip_twist: list[int], centre_twist: list[int]) -> list[int]:
    """Tip turns that line each tip up with its centre (big turns turn both alike)."""
    moves = []
    for v, (tip, centre) in enumerate(zip(tip_twist, centre_twist)):
        ahead = (tip - centre) % 3  # clockwise turns the tip is ahead of its centre
        if ahead:
            moves.append(TIP_MOVES + 2 * v + (ahead == 1))
    return moves


_EDGE_KEY = tuple(i for slot in EDGE_STICKERS for i in slot)
_CENTRE_KEY = tuple(i for piece in CENTRES for i in piece)
_TIP_KEY = tuple(i for piece in TIPS for i in piece)


def _edge_colours(number: int) -> str:
    """Edge stickers (in _EDGE_KEY order) of arrangement ``number``: permutation * 32 + flips."""
    perm, flips = divmod(number, 32)
    flip = unrank_digits(flips, 2, 5)
    flip.append(sum(flip) % 2)
    return "".join(EDGES[p][::-1] if f else EDGES[p] for p, f in zip(unrank_even(perm, 6), flip))


@cache
def _edge_numbers() -> dict[str, int]:
    """Edge stickers of every reachable arrangement -> its number."""
    return {_edge_colours(n): n for n in range(360 * 32)}


# Stickers of the four tips, or of the four centres -> their twists as one base-3 number.
_TWIST_NUMBERS = {
    "".join(twisted(home, t) for home, t in zip(VERTEX_FACES, unrank_digits(n, 3, 4))): n for n in range(81)
}


class Pyraminx(PuzzleModel):
    name = "Pyraminx"
    move_names = ("U", "U'", "L", "L'", "R", "R'", "B", "B'", "u", "u'", "l", "l'", "r", "r'", "b", "b'")
    tracked_moves = TIP_MOVES
    untracked_name = "tips"
    sticker_moves = _turns()
    solved = SOLVED
    factor_sizes = (360, 32, 81)  # edge permutation, edge flips, centre twists

    def __init__(self) -> None:
        # A remembered scheme is right whenever all four centres come out as real centres.
        self._scheme = ColourScheme(
            lambda state: "",
            _colour_map,
            lambda faces: _colours(faces, _CENTRE_KEY) in _TWIST_NUMBERS,
            lambda faces: _vertex_twists(faces, CENTRES, "centre"),
        )

    def parse(self, state: str) -> str:
        check_letters(state, self.name, FACES, 9, sticker_name)
        faces = self._scheme.face_letters(state)
        if _colours(faces, _TIP_KEY) not in _TWIST_NUMBERS:
            _vertex_twists(faces, TIPS, "tip")
        if _colours(faces, _EDGE_KEY) not in _edge_numbers():
            _read_edges(faces)
            raise AssertionError(f"the edges of {faces} are refused but pass every check")
        return faces

    def rank(self, state: str) -> int:
        return _edge_numbers()[_colours(state, _EDGE_KEY)] * 81 + _TWIST_NUMBERS[_colours(state, _CENTRE_KEY)]

    def unrank(self, index: int) -> str:
        """The state numbered ``index``, each tip lined up with its centre."""
        edges, centres = divmod(index, 81)
        out = list(SOLVED)
        for i, colour in zip(_EDGE_KEY, _edge_colours(edges)):
            out[i] = colour
        centre_twist = unrank_digits(centres, 3, 4)
        return _place_vertex_pieces(out, centre_twist, centre_twist)

    def factor_moves(self) -> tuple[np.ndarray, ...]:
        return _factor_moves()

    def untracked_moves(self, state: str) -> list[int]:
        """Tip turns (ids from 8 on) that solve the tips of a state in face letters."""
        tips, centres = (unrank_digits(_TWIST_NUMBERS[_colours(state, key)], 3, 4) for key in (_TIP_KEY, _CENTRE_KEY))
        return _tip_moves(tips, centres)

    def random_state(self, rng: np.random.Generator) -> str:
        """Uniform over all 75,582,720 states, tips included."""
        index, tips = divmod(int(rng.integers(self.states * 81)), 81)
        centre_twist = unrank_digits(index % 81, 3, 4)
        tip_twist = [(c + t) % 3 for c, t in zip(centre_twist, unrank_digits(tips, 3, 4))]
        return _place_vertex_pieces(list(self.unrank(index)), tip_twist, centre_twist)


def _place_vertex_pieces(out: list[str], tip_twist: list[int], centre_twist: list[int]) -> str:
    for pieces, turns in ((TIPS, tip_twist), (CENTRES, centre_twist)):
        for v, (piece, t) in enumerate(zip(pieces, turns)):
            for i, colour in zip(piece, twisted(VERTEX_FACES[v], t)):
                out[i] = colour
    return "".join(out)


@cache
def _factor_moves() -> tuple[np.ndarray, ...]:
    moved = []
    for m in range(TIP_MOVES):
        state = "".join(SOLVED[i] for i in Pyraminx.sticker_moves[m])
        edges = [_EDGE_READ[_colours(state, slot)] for slot in EDGE_STICKERS]
        moved.append(([p for p, _ in edges], [f for _, f in edges], _vertex_twists(state, CENTRES, "centre")))

    def perm(value, m):
        return rank_even([unrank_even(value, 6)[p] for p in moved[m][0]])

    def flips(value, m):
        flip = unrank_digits(value, 2, 5)
        flip.append(sum(flip) % 2)
        return rank_digits([flip[p] ^ d for p, d in zip(moved[m][0], moved[m][1])][:5], 2)

    def centres(value, m):
        return rank_digits([(t + d) % 3 for t, d in zip(unrank_digits(value, 3, 4), moved[m][2])], 3)

    steps = (perm, flips, centres)
    return tuple(factor_table(size, TIP_MOVES, step) for size, step in zip(Pyraminx.factor_sizes, steps))


MODEL = Pyraminx()
