"""What every line-based G-code link (MarlinLink, GrblLink) does alike, against each board it may drive.

Each test runs once per target (line_rigs.TARGETS): our simulator of each
dialect, and the real stock binaries of shared/stock-firmware under the
simavr harness (Marlin without and with EMERGENCY_PARSER, grbl), whose cube
turns as their STEP pins say. What one dialect does alone is in
test_marlin.py and test_grbl.py.
"""

import pytest

from firmware_interface import DeviceFault, DeviceReset, DeviceSilent, HandshakeError, PortError
from line_rigs import FEED, SOLVED, TARGETS, estop_mid_move, random_plan, ready, rigs
from solver import apply


@pytest.fixture(params=TARGETS)
def rig(request):
    with rigs(request.param) as make:
        yield make


def test_a_silent_board_fails_the_handshake(rig):
    board, link = rig(timing=rig.dialect.timing(boot_timeout=0.6))
    board.go_silent()
    with pytest.raises(HandshakeError, match=rig.dialect.no_handshake):
        link.connect()


def test_turns_and_pairs_end_with_the_right_cube(rig):
    scrambled = apply(SOLVED, "R U2 F' L D B2 R'")
    board, link = rig({"state": scrambled})
    ready(link)
    entries, moves = random_plan(rig.target.plan, seed=1)
    motions = link.plan(entries)
    for index, motion in enumerate(motions):
        motion.wait(5)
        # truthful: when a motion is done, the board's motors have finished that move
        assert board.cube == apply(scrambled, " ".join(moves[: index + 1]))
    if not rig.target.real:
        assert len(board.moves_done) == len(entries) * rig.dialect.blocks_per_move
    status, dialect = link.status(), rig.dialect
    assert status["healthy"] and status["done_through"] == motions[-1].mid
    assert {key: status[key] for key in dialect.idle_status} == dialect.idle_status
    assert {key: status["counters"][key] for key in dialect.clean_counters} == dialect.clean_counters


@pytest.mark.parametrize(
    "rig, board",
    [(name, {}) for name in TARGETS] + [("marlin", {"advanced_ok": True})],
    ids=[*TARGETS, "marlin-advanced-ok"],
    indirect=["rig"],
)
def test_exactly_once_through_a_faulty_line(rig, board):
    dialect, target = rig.dialect, rig.target
    device, link = rig(
        {"faults": dialect.faulty_line, **board}, timing=dialect.timing(**dialect.faulty_line_timing), feed=FEED * 4
    )
    ready(link)
    state, turns = SOLVED, 0
    plans = ((2, dialect.faulty_line_turns), (3, 10), (4, 10)) if not target.real else ((2, 2 * target.plan), (3, 2))
    for seed, count in plans:  # one long plan, then more on the same session
        entries, moves = random_plan(count, seed)
        link.wait(link.plan(entries), timeout=60)
        link.query()
        state, turns = apply(state, " ".join(moves)), turns + count
        assert device.cube == state  # no turn lost, none doubled
    board_info, counters = device.info(), link.status()["counters"]
    assert link.status()["healthy"]
    if target.real:  # a short run: some fault of the line must have come, which one depends on the seed
        assert any(board_info[direction][counter] for direction, counter in dialect.faults_seen)
        return
    assert [fault for fault in dialect.faults_seen if not board_info[fault[0]][fault[1]]] == []
    assert board_info["line_errors"] and counters["resends"]
    if dialect.numbered:
        assert len(device.moves_done) == turns * dialect.blocks_per_move  # no move doubled, none lost
        numbers = [n for n, command in device.accepted if n is not None and not command.startswith("M110")]
        assert len(numbers) == len(set(numbers)) and numbers == sorted(numbers)


def test_reset_mid_run_is_device_reset_then_reconnect_works(rig):
    board, link = rig()
    ready(link)
    motions = link.plan([("R", 1)] * 40)
    motions[2].wait(5)
    board.reset()
    with pytest.raises(DeviceReset):
        motions[-1].wait(3)
    assert not link.status()["connected"]
    ready(link)  # a new session works
    link.turn("U", 1).wait(3)


def test_a_closed_port_is_port_error(rig):
    board, link = rig()
    ready(link)
    motions = link.plan([("R", 1)] * 6)
    motions[1].wait(5)
    board.close_port()  # an unplugged cable
    with pytest.raises(PortError):
        link.wait(motions, timeout=3)
    assert not link.status()["connected"]


def test_silence_is_device_silent(rig):
    board, link = rig(timing=rig.dialect.timing(**rig.dialect.silent_timing))
    ready(link)
    link.plan([("R", 1)] * 3)[0].wait(3)
    board.go_silent()
    motion = link.turn("U", 1)
    with pytest.raises(DeviceSilent, match="no reply"):
        motion.wait(7)


def test_estop_stops_the_queue_and_later_moves_fail(rig):
    board, link = rig()
    ready(link)
    motions, result, stopped, asked = estop_mid_move(board, link)
    assert result["acknowledged_s"] >= 0
    assert stopped and asked - 0.05 <= stopped[0] <= asked + 0.5  # the motors stopped (a stepping one at once)
    print(
        f"\n{rig.target.name} e-stop: reported by the link after {result['acknowledged_s'] * 1000:.1f} ms, motors "
        f"stopped {(stopped[0] - asked) * 1000:.1f} ms after it was asked"
    )  # how fast, over many: bench/stock_links.py, bench/controllers.py
    assert board.still()  # and nothing is left to run
    if not rig.target.real:
        assert len(board.moves_done) == rig.dialect.blocks_per_move  # L's; R's first was cut short
    with pytest.raises(DeviceFault) as caught:
        motions[-1].wait(1)
    assert caught.value.code == "ESTOP" and link.status()["fault"]["code"] == "ESTOP"
    with pytest.raises(DeviceFault):
        link.turn("U", 1)
    assert board.cube == apply(SOLVED, "L")  # the cut move never reached a quarter turn
