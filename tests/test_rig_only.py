"""``robotd --rig-only``: the controller on the configured port turns, a virtual cube follows what it reports.

Each test starts a simulated controller on a pty and gives robotd its path
as ``[serial] port``, as a user gives the port of the board on the desk.
The simulator's own cube is loaded with the scramble robotd's virtual cube
gets, so both must end in the same state: robotd followed the controller.
"""

import contextlib
import json
import random
import re

import pytest

import solver
from firmware_interface.faults import Channel, FaultConfig
from firmware_interface.faulty_line import FaultyLine
from firmware_interface.flipspin_mechanism import FlipSpinMechanism
from firmware_interface.grbl.simulator import SimulatedGrbl
from firmware_interface.maestro.simulator import SimulatedMaestro
from firmware_interface.marlin.dialect import numbered, split_numbered
from firmware_interface.marlin.link import MOVE_PARTS
from firmware_interface.marlin.simulator import SimulatedMarlin
from firmware_interface.robotd.simulator import SimulatedFirmware
from robot import assemble
from robot.board import board_identity, board_lines, link_info
from robot.cli import main
from robot.errors import RobotError
from robot.rig_only import attach
from robot.run import is_solved
from robot.summary import format_summary
from robot_doubles import FAST_RIG, FLIP_SPIN

SEED, MOVES = 5, 8


def write_config(tmp_path, port: str | None, rig: str = FAST_RIG, controller: str = "") -> str:
    path = tmp_path / "robotd.toml"
    serial = "" if port is None else f'[serial]\nport = "{port}"\n'
    path.write_text(f'[robotd]\ndata_dir = "{tmp_path / "data"}"\n{rig}\n{controller}\n{serial}')
    return str(path)


def marlin():
    return SimulatedMarlin(units_per_quarter=90.0)


class LosingThirdMove(Channel):
    """The host's lines on their way to the board, the G1 lines of the third move (MOVE_PARTS of them) arriving
    with their axes at 0 (their checksums made good): a turn robotd sent that the board never makes, and whose
    position it reports as it is."""

    AXIS_WORD = re.compile(r"(?<= )([A-EG-MO-Z])-?[0-9.]+")

    def __init__(self):
        super().__init__(FaultConfig().to_device, random.Random(0))
        self.moves: dict[int, int] = {}  # line number -> which G1 it is, from 0 (a resent line is not another)

    def push(self, frame: bytes, now: float) -> None:
        n, command, _ = split_numbered(frame.decode("latin-1"))
        if n is not None and command.startswith("G1 "):
            if (self.moves.setdefault(n, len(self.moves)) // MOVE_PARTS) == 2:
                frame = numbered(n, self.AXIS_WORD.sub(r"\g<1>0", command))
        super().push(frame, now)


def maestro():
    mechanism = FlipSpinMechanism(size=2)
    return SimulatedMaestro(mechanism=mechanism, homes=mechanism.home_targets(), slew_us_per_ms=40.0)


BOARDS = {
    "marlin": (marlin, FAST_RIG, '[controller]\nkind = "marlin"', 3),
    "grblhal": (lambda: SimulatedGrbl(units_per_quarter=90.0), FAST_RIG, '[controller]\nkind = "grblhal"', 3),
    "maestro": (maestro, FLIP_SPIN, "", 2),
}


@contextlib.contextmanager
def board(make, size: int):
    """A simulated controller on a pty, holding the cube robotd's run will scramble (``SEED``, ``MOVES``)."""
    simulator = make()
    path = simulator.start()
    try:
        simulator.set_state(solver.scramble(size, seed=SEED, length=MOVES)["state"])
        yield simulator, path
    finally:
        simulator.stop()


def rig_only_once(capsys, config: str, *extra: str) -> tuple[int, dict]:
    code = main(
        ["--config", config, "--rig-only", "--once", "--json", "--seed", str(SEED), "--moves", str(MOVES), *extra]
    )
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("kind", list(BOARDS))
def test_a_motors_only_run_ends_solved_with_the_cube_where_the_controller_turned_it(kind, tmp_path, capsys):
    make, rig, controller, size = BOARDS[kind]
    with board(make, size) as (simulator, path):
        code, summary = rig_only_once(capsys, write_config(tmp_path, path, rig, controller), "--puzzle", str(size))
        assert code == 0, summary.get("error")
        assert summary["mode"] == "rig-only" and summary["solved"] and summary["outcome"] == "done"
        assert summary["read_back"]["positions"] and summary["read_back"]["differences"] == []
        assert summary["final_state"] == simulator.cube and is_solved(simulator.cube)


def test_a_turn_the_controller_did_not_make_fails_the_verification_and_says_which(tmp_path, capsys):
    with board(marlin, 3) as (simulator, path):
        line = FaultyLine(path, FaultConfig(), random.Random(0))
        line.to_device = LosingThirdMove()
        host = line.start()
        try:
            config = write_config(tmp_path, host, controller='[controller]\nkind = "marlin"')
            code, summary = rig_only_once(capsys, config)
        finally:
            line.stop()
    assert code == 1 and not summary["solved"] and summary["outcome"] == "error"
    error = summary["error"]
    assert error.startswith("the cube is not solved after executing the solution; the re-scan reads ")
    # Marlin moves to absolute targets: a later turn of the lost move's axis is off by the same turn, and differs too
    assert re.search(
        r"; the controller's read-back differs from what robotd sent: command 3 \((.+)\): "
        r"the controller turned nothing, robotd sent \1(; command \d+ \(.+\): .+)?$",
        error,
    ), error
    assert "; ".join(summary["read_back"]["differences"]) == error.split("robotd sent: ", 1)[1]
    assert summary["final_state"] == simulator.cube  # robotd's cube followed the board, not the plan
    text = format_summary(summary).splitlines()
    assert "read back : the virtual cube followed the faces' positions the controller reports" in "\n".join(text)
    assert [line for line in text if line.startswith("differs   : command 3 (")] != []


def test_robotds_own_firmware_reports_no_positions_so_the_cube_follows_the_motions_done(tmp_path):
    simulator = SimulatedFirmware("six-axis", timing={"quarter_ms": 5, "half_ms": 8, "settle_ms": 0})
    path = simulator.start()
    built = None
    try:
        built = assemble.build(write_config(tmp_path, path), sim=False, rig_only=True, web=False)
        status = built.daemon.status()
        assert status["mode"] == "rig-only" and status["simulation"]["device"] == path
        assert status["board"]["firmware"] and status["board"]["protocol"] >= 1
        read_back = status["simulation"]["read_back"]
        assert not read_back["positions"] and "reports which motions it finished, not positions" in read_back["follows"]
        solved = built.simulation.firmware.cube
        built.daemon.jog("R")  # a jog between runs is followed too
        assert built.simulation.firmware.cube == solver.apply(solved, "R") == simulator.cube
        simulator.set_state(solver.scramble(3, seed=SEED, length=MOVES)["state"])
        summary = built.once(seed=SEED, moves=MOVES)
        assert summary["solved"] and summary["final_state"] == simulator.cube
    finally:
        if built is not None:
            built.close()
        simulator.stop()


def test_without_a_port_it_says_which_option_to_set(tmp_path, capsys):
    assert main(["--config", write_config(tmp_path, None), "--rig-only", "--once"]) == 2
    error = capsys.readouterr().err
    assert "[serial] port: required for robotd --rig-only: the port of the board that turns the faces" in error
    assert "Traceback" not in error


def test_a_port_with_no_board_is_named(tmp_path, capsys):
    missing = tmp_path / "ttyACM-none"
    assert main(["--config", write_config(tmp_path, str(missing)), "--rig-only", "--once"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: serial link: ") and str(missing) in error and "no such device" in error


def test_the_simulators_choices_are_refused_with_rig_only(tmp_path, capsys):
    config = write_config(tmp_path, "/dev/ttyACM0")
    assert main(["--config", config, "--rig-only", "--once", "--controller", "marlin"]) == 2
    assert "--rig-only drives the controller and rig of the config" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["--config", config, "--rig-only", "--sim", "--once"])
    assert exited.value.code == 2


def test_a_motion_that_reports_no_moves_cannot_run_rig_only():
    with pytest.raises(RobotError, match="a pen-plotter controller cannot run robotd --rig-only"):
        attach(object(), object(), "pen-plotter")  # type: ignore[arg-type]


# ---- robotd check: the board that answered


@pytest.mark.parametrize("kind", ["robotd", "marlin"])
def test_check_names_the_board_even_before_a_camera_is_set_up(kind, tmp_path, capsys):
    simulator = marlin() if kind == "marlin" else SimulatedFirmware("six-axis")
    path = simulator.start()
    try:
        config = write_config(tmp_path, path, controller=f'[controller]\nkind = "{kind}"')
        assert main(["check", "--config", config]) == 2  # no camera yet
        out, err = capsys.readouterr()
        assert "no [camera.NAME] section" in err and "robotd --rig-only" in err
        lines = out.splitlines()
        start = lines.index(f"board on {path}:")
        identity = [line.split(" : ")[0].strip() for line in lines[start + 1 :] if line.startswith("  ")]
        assert "protocol" in identity and "motors" in identity
        if kind == "robotd":  # Marlin names itself in its banner, when the link hears one
            assert identity[0] == "firmware"
        assert main(["check", "--config", config, "--json"]) == 2
        report = json.loads(capsys.readouterr().out)
    finally:
        simulator.stop()
    assert report["port"] == path and report["problems"]
    assert report["board"]["protocol"] and report["board"]["motors"] == list("URFDLB")


def test_the_board_identity_puts_known_keys_first_and_shows_the_rest_plainly():
    info = {
        "port": "/dev/ttyACM0",
        "protocol": 1,
        "settings": {"$1": "255"},
        "stop_latency_ms": 20,
        "firmware": "grblHAL 1.1f",
        "stop_method": "feed hold then soft reset",
        "axis_count": 6,
        "warnings": [],
        "boot_id": None,
    }
    identity = board_identity(info)
    assert list(identity) == ["firmware", "protocol", "axis_count", "stop_method", "stop_latency_ms", "settings"]
    assert board_lines(identity) == [
        "firmware     : grblHAL 1.1f",
        "protocol     : 1",
        "axis count   : 6",
        "stop method  : feed hold then soft reset",
        "stop latency : 20 ms",
        "settings     : $1=255",
    ]
    assert board_identity(None) is None

    class MethodInfo:
        def info(self):
            return {"firmware": "x"}

    assert link_info(MethodInfo()) == {"firmware": "x"}
