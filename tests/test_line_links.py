"""What every line-based G-code link (MarlinLink, GrblLink) does alike, against its simulated board.

Each test runs once per dialect (line_rigs.DIALECTS); what one dialect does
alone is in test_marlin.py and test_grbl.py.
"""

import time

import pytest

from firmware_interface import DeviceFault, DeviceReset, DeviceSilent, HandshakeError, PortError
from line_rigs import DIALECTS, FEED, SOLVED, estop_mid_move, random_plan, ready, rigs
from solver import apply


@pytest.fixture(params=DIALECTS)
def rig(request):
    with rigs(request.param) as make:
        yield make


def test_a_silent_board_fails_the_handshake(rig):
    sim, link = rig(timing=rig.dialect.timing(boot_timeout=0.6))
    sim.go_silent()
    with pytest.raises(HandshakeError, match=rig.dialect.no_handshake):
        link.connect()


def test_turns_and_pairs_end_with_the_right_cube(rig):
    scrambled = apply(SOLVED, "R U2 F' L D B2 R'")
    sim, link = rig({"state": scrambled})
    ready(link)
    entries, moves = random_plan(25, seed=1)
    motions = link.plan(entries)
    for index, motion in enumerate(motions):
        motion.wait(5)
        # truthful: when a motion is done, the board has finished that move
        assert len(sim.moves_done) >= index + 1
    assert sim.cube == apply(scrambled, moves)
    assert len(sim.moves_done) == 25
    status, dialect = link.status(), rig.dialect
    assert status["healthy"] and status["done_through"] == motions[-1].mid
    assert {key: status[key] for key in dialect.idle_status} == dialect.idle_status
    assert {key: status["counters"][key] for key in dialect.clean_counters} == dialect.clean_counters


@pytest.mark.parametrize(
    "rig, board",
    [("marlin", {}), ("marlin", {"advanced_ok": True}), ("grblhal", {})],
    ids=["marlin", "marlin-advanced-ok", "grblhal"],
    indirect=["rig"],
)
def test_exactly_once_through_a_faulty_line(rig, board):
    dialect = rig.dialect
    sim, link = rig(
        {"faults": dialect.faulty_line, **board}, timing=dialect.timing(**dialect.faulty_line_timing), feed=FEED * 4
    )
    ready(link)
    state, turns = SOLVED, 0
    for seed, count in ((2, 200), (3, 30), (4, 30)):  # one long plan, then more on the same session
        entries, moves = random_plan(count, seed)
        link.wait(link.plan(entries), timeout=30)
        link.query()
        state, turns = apply(state, moves), turns + count
        assert sim.cube == state  # no turn lost, none doubled
    board_info, counters = sim.info(), link.status()["counters"]
    assert [fault for fault in dialect.faults_seen if not board_info[fault[0]][fault[1]]] == []
    assert board_info["line_errors"] and counters["resends"] and link.status()["healthy"]
    if dialect.numbered:
        assert len(sim.moves_done) == turns  # no move doubled, none lost
        numbers = [n for n, command in sim.accepted if n is not None and not command.startswith("M110")]
        assert len(numbers) == len(set(numbers)) and numbers == sorted(numbers)


def test_reset_mid_run_is_device_reset_then_reconnect_works(rig):
    sim, link = rig()
    ready(link)
    motions = link.plan([("R", 1)] * 40)
    motions[2].wait(2)
    sim.reset()
    with pytest.raises(DeviceReset):
        motions[-1].wait(2)
    assert not link.status()["connected"]
    ready(link)  # a new session works
    link.turn("U", 1).wait(2)


def test_a_closed_port_is_port_error(rig):
    sim, link = rig({"faults": {"close_after": 3}})
    ready(link)
    with pytest.raises(PortError):
        link.wait(link.plan([("R", 1)] * 6), timeout=3)
    assert not link.status()["connected"]


def test_silence_is_device_silent(rig):
    sim, link = rig(timing=rig.dialect.timing(**rig.dialect.silent_timing))
    ready(link)
    link.plan([("R", 1)] * 3)[0].wait(2)
    sim.go_silent()
    motion = link.turn("U", 1)
    with pytest.raises(DeviceSilent, match="no reply"):
        motion.wait(7)


def test_estop_stops_the_queue_and_later_moves_fail(rig):
    sim, link = rig()
    ready(link)
    motions, result, acted, asked = estop_mid_move(sim, link)
    assert result["acknowledged_s"] >= 0
    assert acted and acted[0] >= asked
    print(
        f"\n{rig.dialect.name} e-stop: reported by the link after {result['acknowledged_s'] * 1000:.1f} ms, acted on "
        f"by the board after {(acted[0] - asked) * 1000:.1f} ms"
    )  # how fast, over many: bench/controllers.py
    done = len(sim.moves_done)
    time.sleep(0.1)
    assert len(sim.moves_done) == done and sim.info()["planned"] == 0  # nothing left to run
    with pytest.raises(DeviceFault) as caught:
        motions[-1].wait(1)
    assert caught.value.code == "ESTOP" and link.status()["fault"]["code"] == "ESTOP"
    with pytest.raises(DeviceFault):
        link.turn("U", 1)
    assert len(sim.moves_done) == 1 and sim.cube == apply(SOLVED, "L")  # the cut move never finished
