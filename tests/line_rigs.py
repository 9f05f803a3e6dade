"""Rigs on the line-based G-code controllers (Marlin, grblHAL) for the link tests: a board and a link on it.

A target is a dialect and a board: our simulator of that firmware
(firmware_interface/marlin/simulator.py, grbl/simulator.py), or the real stock
binary (shared/stock-firmware) under the simavr harness, whose cube turns
as its STEP pins say. ``rigs(target)`` makes them: ``rig(board options,
**link options)`` starts the board and opens its link (marlin/link.py or
grbl/link.py) on it; all are closed when the ``with`` ends. A real binary
skips with the reason where the harness or the binaries are missing (fails
instead under ROBOTD_REQUIRE_AVR, as tests/devices.py says), and where a
test asks for what only a simulator can do (``SIM_ONLY`` options).
``DIALECTS`` says what differs between the dialects where a test of shared
behaviour needs it (test_line_links.py); test_marlin.py and test_grbl.py
test what one dialect does alone.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

import devices
from firmware_interface import avr_board
from firmware_interface.grbl.link import GrblLink, GrblTiming
from firmware_interface.grbl.simulator import SimulatedGrbl
from firmware_interface.marlin.link import MOVE_PARTS, MarlinLink, MarlinTiming
from firmware_interface.marlin.simulator import SimulatedMarlin
from firmware_interface.stock_firmware import AXES, missing_stock, stock_board
from solver.puzzles.cube.cubie import solved_facelets
from solver.puzzles.cube.geometry import OPPOSITE

SOLVED = solved_facelets(3)
FEED = 270000.0  # a quarter turn (90 units) in 20 ms (the stock builds cap it at 500 units/s: 0.28 s)
NAMES = {1: "", -1: "'", 2: "2", -2: "2"}
SIM_ONLY = ("advanced_ok", "boot_ms", "busy_ms", "stall", "limit", "reset_after", "silent_after", "close_after")


@dataclass(frozen=True)
class Dialect:
    """One line-based controller, and what the shared tests ask of it that the other does differently."""

    name: str
    board: type  # the simulator
    link: type
    timing: type
    stock: str  # its stock build in shared/stock-firmware
    # a faulty line that must lose and double no turn: board fault options, link timing, and the fault
    # counters of the board's two channels, (direction, counter), that must be seen to go up
    faulty_line: dict
    faulty_line_timing: dict
    faults_seen: tuple[tuple[str, str], ...]
    faulty_line_turns: int  # the first plan's length on a simulator: enough for every counter of faults_seen
    numbered: bool  # lines carry a number and a checksum: each runs once, in order, so each move runs once
    blocks_per_move: int  # planner blocks (the simulator's moves_done) per turn or pair sent
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
        stock="marlin",
        faulty_line={"drop": 0.05, "corrupt": 0.01, "duplicate": 0.01, "seed": 7},
        faulty_line_timing={"probe_after": 0.1},
        faults_seen=(("to_device", "dropped"), ("to_host", "dropped")),
        faulty_line_turns=80,  # each drop costs a probe_after of quiet: about 15 and 25 drops come in 80 turns
        numbered=True,
        blocks_per_move=MOVE_PARTS,
        idle_status={"halted": False},
        # a probe after probe_after of quiet (a loaded machine) is answered after what is ahead: no count here
        clean_counters={},
        silent_timing={"busy_silence": 2.5},  # an M400 left unanswered (Marlin's keepalive: every 2 s)
        no_handshake="no ok to M110",
    ),
    "grblhal": Dialect(
        name="grblhal",
        board=SimulatedGrbl,
        link=GrblLink,
        timing=GrblTiming,
        stock="grbl",
        # grbl lines carry no checksum: a corrupted axis letter is a valid line to another face, which the link
        # puts back or, when it moved together with an adjacent face, stops on as unsafe (test_grbl.py's
        # garbled-line tests). Which line the seeded faults hit depends on thread timing, so corruption here
        # goes to the host only: drops, doubles and noise bursts towards the board must never lose or double
        # a turn.
        faulty_line={"drop": 0.03, "duplicate": 0.03, "noise": 0.03, "seed": 11, "to_host": {"corrupt": 0.03}},
        faulty_line_timing={},
        faults_seen=(("to_device", "noise"), ("to_device", "dropped"), ("to_host", "corrupted")),
        faulty_line_turns=200,  # noise and drops towards the board come about once in 25 turns
        numbered=False,
        blocks_per_move=1,
        idle_status={"state": "Idle"},
        clean_counters={"resends": 0},
        # under probe_after x retries (1 s): else the unanswered line's retries run out first (DeviceFault)
        silent_timing={"silence": 0.5},
        no_handshake="no grbl banner",
    ),
}


@dataclass(frozen=True)
class Target:
    """A dialect on a board: ``variant`` None for our simulator, else the stock build ("" or "ep")."""

    name: str
    dialect: Dialect
    variant: str | None = None
    plan: int = 25  # entries of a random plan the tests send (a real binary's quarter turn takes 0.28 s)

    @property
    def real(self) -> bool:
        return self.variant is not None


TARGETS = {
    "marlin": Target("marlin", DIALECTS["marlin"]),
    "marlin-avr": Target("marlin-avr", DIALECTS["marlin"], "", plan=6),
    "marlin-ep-avr": Target("marlin-ep-avr", DIALECTS["marlin"], "ep", plan=6),
    "grblhal": Target("grblhal", DIALECTS["grblhal"]),
    "grblhal-avr": Target("grblhal-avr", DIALECTS["grblhal"], "", plan=6),
}


@dataclass
class Board:
    """What the shared tests read of a board, alike for a simulator and a real binary: the cube, the fault
    counts of its line, and when its motors stopped."""

    device: object
    real: bool = False

    def __getattr__(self, name: str):
        return getattr(self.device, name)

    def stopped(self, asked: float, timeout: float = 1.0) -> float | None:
        """When the motors stopped after a stop asked for at ``asked``: the simulator's word, or when the real
        binary's motor positions (its STEP pins, read every 10 ms) last changed; None when they did not stop."""
        if self.real:
            return self._still_since(asked, timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            times = [t for t in self.device.estop_times() if t >= asked]
            if times:
                return times[0]
            time.sleep(0.005)
        return None

    def _still_since(self, asked: float, timeout: float) -> float | None:
        changed, before = asked, self._positions()
        while time.monotonic() < asked + timeout:
            time.sleep(0.01)
            now, positions = time.monotonic(), self._positions()
            if positions != before:
                changed, before = now, positions
            elif now - changed > 0.1:
                return changed
        return None

    def _positions(self) -> dict:
        return {face: steps for face, steps in self.device.sync().items() if face in "URFDLB"}

    def still(self) -> bool:
        """Nothing moves, and nothing is left to run."""
        if self.real:
            before = self._positions()
            time.sleep(0.2)
            return self._positions() == before
        done = len(self.device.moves_done)
        time.sleep(0.1)
        return len(self.device.moves_done) == done and self.device.info()["planned"] == 0


class Rigs:
    """``rig(board options, **link options)`` → (started board, link on it) of one target."""

    def __init__(self, target: str):
        self.target = TARGETS[target]
        self.dialect = self.target.dialect
        self._made: list[tuple] = []

    def __call__(self, board_options: dict | None = None, **link_options):
        board = self._board(dict(board_options or {}))
        board.start()
        link = self.dialect.link(board.path, **{"feed": FEED, **link_options})
        self._made.append((board, link))
        return board, link

    def _board(self, options: dict) -> Board:
        if not self.target.real:
            return Board(self.dialect.board(**options))
        require_stock(self.dialect.stock, self.target.variant or "")
        asked = [key for key in (*options, *options.get("faults", {})) if key in SIM_ONLY]
        if asked:
            pytest.skip(f"the real binary under simavr takes no {', '.join(asked)} (a simulator's option)")
        return Board(stock_board(self.dialect.stock, self.target.variant or "", axes=AXES, **options), real=True)

    def close(self) -> None:
        for board, link in self._made:
            link.close()
            board.stop()


def require_stock(firmware: str, variant: str = "") -> None:
    """Skip where the harness's tools or the stock binary are missing; fail instead under ROBOTD_REQUIRE_AVR
    (tests/devices.py's rule)."""
    devices.require_avr(lambda: avr_board.missing_tools() or missing_stock(firmware, variant))


@contextmanager
def rigs(target: str) -> Iterator[Rigs]:
    made = Rigs(target)
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


def random_plan(count: int, seed: int) -> tuple[list, list[str]]:
    """``count`` plan entries, about a third of them opposite faces turned together, and each one's moves."""
    rng = random.Random(seed)
    entries, moves = [], []
    for _ in range(count):
        face, q = rng.choice("URFDLB"), rng.choice((1, -1, 2, -2))
        if rng.random() < 0.3:
            q2 = rng.choice((1, -1, 2))
            entries.append(((face, q), (OPPOSITE[face], q2)))
            moves.append(f"{face}{NAMES[q]} {OPPOSITE[face]}{NAMES[q2]}")
        else:
            entries.append((face, q))
            moves.append(face + NAMES[q])
    return entries, moves


def estop_mid_move(board, link) -> tuple[list, dict, list[float], float]:
    """L turned, then an e-stop half-way through the first of five slow R turns: (the R turns' motions, what
    ``estop()`` said, when the board's motors stopped (empty if they did not), when the stop was asked for)."""
    link.turn("L", 1).wait(3)
    link.set_speed(1000).wait(1)  # a quarter turn in a second: stopped some 15% of the way
    motions = link.plan([("R", 1)] * 5)
    motions[0].wait_received(2)
    time.sleep(0.15)
    board = board if isinstance(board, Board) else Board(board)
    asked = time.monotonic()
    result = link.estop(wait=False).result(1)
    stopped = board.stopped(asked)
    return motions, result, [] if stopped is None else [stopped], asked


def planned_spans(move_times: list[tuple[float, float]], motions: Iterable[list[str]]) -> list[float]:
    """How long each motion took on a simulator, from its blocks' planned start and end (``move_times``, a
    block per line of each motion, in order): load on the host does not change them."""
    spans, at = [], 0
    for lines in motions:
        spans.append(move_times[at + len(lines) - 1][1] - move_times[at][0])
        at += len(lines)
    return spans
