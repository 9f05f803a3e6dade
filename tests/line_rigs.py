"""Rigs on the line-based G-code controllers (Marlin, grblHAL) for the link tests: a simulated board and a link.

``rigs(dialect)`` makes them: ``rig(board options, **link options)`` starts the
simulator (firmware_interface/marlin/simulator.py or grbl/simulator.py) and
opens its link (marlin/link.py or grbl/link.py) on it; all are closed when the
``with`` ends. ``DIALECTS`` says what differs between the two where a test of
shared behaviour needs it (test_line_links.py); test_marlin.py and
test_grbl.py test what one dialect does alone.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from firmware_interface.grbl.link import GrblLink, GrblTiming
from firmware_interface.grbl.simulator import SimulatedGrbl
from firmware_interface.marlin.link import MarlinLink, MarlinTiming
from firmware_interface.marlin.simulator import SimulatedMarlin
from solver.puzzles.cube.cubie import solved_facelets
from solver.puzzles.cube.geometry import OPPOSITE

SOLVED = solved_facelets(3)
FEED = 270000.0  # a quarter turn (90 units) in 20 ms
NAMES = {1: "", -1: "'", 2: "2", -2: "2"}


@dataclass(frozen=True)
class Dialect:
    """One line-based controller, and what the shared tests ask of it that the other does differently."""

    name: str
    board: type  # the simulator
    link: type
    timing: type
    # a faulty line that must lose and double no turn: board fault options, link timing, and the fault
    # counters of the board's two channels, (direction, counter), that must be seen to go up
    faulty_line: dict
    faulty_line_timing: dict
    faults_seen: tuple[tuple[str, str], ...]
    numbered: bool  # lines carry a number and a checksum: each runs once, in order, so each move runs once
    idle_status: dict  # what status() reports after a clean run, besides healthy and done_through
    clean_counters: dict  # link counters that stay as they are through a clean run
    silent_timing: dict  # link timing for a board gone silent: DeviceSilent comes before any other fault
    no_handshake: str  # what connect() says of a board that never answers


DIALECTS = {
    "marlin": Dialect(
        name="marlin",
        board=SimulatedMarlin,
        link=MarlinLink,
        timing=MarlinTiming,
        faulty_line={"drop": 0.05, "corrupt": 0.01, "duplicate": 0.01, "seed": 7},
        faulty_line_timing={"probe_after": 0.1},
        faults_seen=(("to_device", "dropped"), ("to_host", "dropped")),
        numbered=True,
        idle_status={"halted": False},
        # a probe after probe_after of quiet (a loaded machine) is answered with a Resend: no count here
        clean_counters={},
        silent_timing={},  # an M400 left unanswered: busy_silence (5 s) applies
        no_handshake="no ok to M110",
    ),
    "grblhal": Dialect(
        name="grblhal",
        board=SimulatedGrbl,
        link=GrblLink,
        timing=GrblTiming,
        # grbl lines carry no checksum: a corrupted axis letter is a valid line to another face, which the link
        # puts back or, when it moved together with an adjacent face, stops on as unsafe (test_grbl.py's
        # garbled-line tests). Which line the seeded faults hit depends on thread timing, so corruption here
        # goes to the host only: drops, doubles and noise bursts towards the board must never lose or double
        # a turn.
        faulty_line={"drop": 0.03, "duplicate": 0.03, "noise": 0.03, "seed": 11, "to_host": {"corrupt": 0.03}},
        faulty_line_timing={},
        faults_seen=(("to_device", "noise"), ("to_device", "dropped"), ("to_host", "corrupted")),
        numbered=False,
        idle_status={"state": "Idle"},
        clean_counters={"resends": 0},
        # under probe_after x retries (1 s): else the unanswered line's retries run out first (DeviceFault)
        silent_timing={"silence": 0.5},
        no_handshake="no grbl banner",
    ),
}


class Rigs:
    """``rig(board options, **link options)`` → (started simulated board, link on it) of one dialect."""

    def __init__(self, dialect: str):
        self.dialect = DIALECTS[dialect]
        self._made: list[tuple] = []

    def __call__(self, sim_options: dict | None = None, **link_options):
        sim = self.dialect.board(**(sim_options or {}))
        sim.start()
        link = self.dialect.link(sim.path, **{"feed": FEED, **link_options})
        self._made.append((sim, link))
        return sim, link

    def close(self) -> None:
        for sim, link in self._made:
            link.close()
            sim.stop()


@contextmanager
def rigs(dialect: str) -> Iterator[Rigs]:
    made = Rigs(dialect)
    try:
        yield made
    finally:
        made.close()


def ready(link) -> dict:
    """Connect, enable and home: the handshake's info."""
    info = link.connect()
    link.enable().wait(2)
    link.home().wait(2)
    return info


def random_plan(count: int, seed: int) -> tuple[list, str]:
    """``count`` plan entries, about a third of them opposite faces turned together, and the same as moves."""
    rng = random.Random(seed)
    entries, moves = [], []
    for _ in range(count):
        face, q = rng.choice("URFDLB"), rng.choice((1, -1, 2, -2))
        if rng.random() < 0.3:
            q2 = rng.choice((1, -1, 2))
            entries.append(((face, q), (OPPOSITE[face], q2)))
            moves += [face + NAMES[q], OPPOSITE[face] + NAMES[q2]]
        else:
            entries.append((face, q))
            moves.append(face + NAMES[q])
    return entries, " ".join(moves)


def estop_mid_move(sim, link) -> tuple[list, dict, list[float], float]:
    """L turned, then an e-stop half-way through the first of five slow R turns: (the R turns' motions, what
    ``estop()`` said, the times the board acted on an e-stop since, when it was asked)."""
    link.turn("L", 1).wait(2)
    link.set_speed(1000).wait(1)  # a quarter turn in a second: stopped half-way
    motions = link.plan([("R", 1)] * 5)
    motions[0].wait_received(2)
    before, asked = len(sim.estop_times()), time.monotonic()
    result = link.estop(wait=False).result(1)
    return motions, result, sim.estop_times()[before:], asked
