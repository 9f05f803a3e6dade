"""``[controller]``: each kind's section validated, and dry runs through each simulated controller."""

import pytest

from robot import assemble
from robot.check import check
from robot.cli import main
from robot.errors import ConfigError
from robot.history import History
from robot_doubles import FAST_RIG, FLIP_SPIN, solver_keys

G_CODE = ("marlin", "grblhal")
# the link timings of tests/line_rigs.py for a faulty and for a silent line: the same ending, sooner
QUICK_PROBES = {"marlin": "[controller.marlin.timing]\nprobe_after = 0.1\n", "grblhal": ""}
QUICK_SILENCE = {
    "marlin": "[controller.marlin.timing]\nbusy_silence = 2.5\n",
    "grblhal": "[controller.grblhal.timing]\nsilence = 0.5\n",
}


def config(tmp_path, extra="", rig=FAST_RIG, two_phase=True):
    path = tmp_path / "robotd.toml"
    path.write_text(f'[robotd]\ndata_dir = "{tmp_path / "data"}"\n[solver]\n{solver_keys(two_phase)}{rig}\n{extra}')
    return path


def once(tmp_path, extra="", controller=None, **options):
    """One dry run; the two-phase worker only where it solves a 3x3."""
    path = config(tmp_path, extra, two_phase=options.get("puzzle") == 3)
    built = assemble.build(path, sim=True, web=False, controller=controller)
    try:
        return built.once(**options)
    finally:
        built.close()


@pytest.mark.parametrize(
    "text, words",
    [
        ('[controller]\nkind = "tinyg"', "must be one of robotd, marlin, grblhal"),
        ('[controller]\nkind = "marlin"\n[controller.grblhal]\nfeed = 100', "[controller.grblhal] is set, but"),
        (
            '[controller]\nkind = "marlin"\n[controller.marlin]\naxes = {U="X", R="Y", F="Z", D="I", L="J", B="E"}',
            "[controller.marlin.axes] B: must be one axis letter",
        ),
        (
            '[controller]\nkind = "marlin"\n[controller.marlin]\naxes = {U="X", R="Y", F="Z", D="I", L="J", B="J"}',
            "two faces share an axis",
        ),
        ('[controller]\nkind = "grblhal"\n[controller.grblhal]\naxes = {U="X", R="Y"}', "missing F, D, L, B"),
        ('[controller]\nkind = "marlin"\n[controller.marlin]\nunits_per_quarter = 0', "must be more than 0"),
        ('[controller]\nkind = "marlin"\n[controller.marlin]\nspeed = 3', "[controller.marlin] speed: unknown option"),
        (
            '[controller]\nkind = "marlin"\n[controller.marlin.timing]\nsilence = -1',
            "[controller.marlin.timing] silence: must be more than 0; got -1",
        ),
        (
            '[controller]\nkind = "marlin"\n[controller.marlin.timing]\nsilense = 1',
            "[controller.marlin.timing] silense: unknown option",
        ),
        ('[controller]\nkind = "marlin"\n[serial.timing]\nsilence = 0.5', "[serial] timing: applies to robotd"),
        ('[controller]\nkind = "grblhal"\n[sim]\nemergency_parser = true', "picks the stock Marlin build"),
    ],
)
def test_bad_controller_sections_name_the_key(tmp_path, text, words):
    with pytest.raises(ConfigError) as caught:
        assemble.load_parts(config(tmp_path, text), sim=True)
    assert words in str(caught.value)


def test_gcode_motors_are_the_faces(tmp_path):
    rig = FAST_RIG + "[rig.motors]\nU = 'X'\nR = 'Y'\nF = 'Z'\nD = 'A'\nL = 'B'\nB = 'C'\n"
    with pytest.raises(ConfigError, match=r"map faces to\s+axes in \[controller.marlin\]"):
        assemble.load_parts(config(tmp_path, '[controller]\nkind = "marlin"', rig=rig), sim=True)


def test_feed_follows_the_rigs_quarter_turn_time(tmp_path):
    parts = assemble.load_parts(
        config(tmp_path, '[controller]\nkind = "marlin"\n[controller.marlin]\nunits_per_quarter = 800'), sim=True
    )
    options = parts.sections["controller"].settings
    assert options.feed == pytest.approx(800 * 60 / 0.01)
    assert options.axes == dict(zip("URFDLB", "XYZIJK"))


@pytest.mark.parametrize("controller", G_CODE)
@pytest.mark.parametrize("puzzle, moves", [(2, None), (3, 5)])
def test_dry_run_through_a_stock_controller_ends_solved(tmp_path, controller, puzzle, moves):
    summary = once(tmp_path, controller=controller, puzzle=puzzle, seed=12, moves=moves)
    assert summary["outcome"] == "done", summary["error"]
    assert summary["solved"]


@pytest.mark.parametrize("controller", G_CODE)
def test_line_faults_lose_and_double_no_turn(tmp_path, controller):
    # Marlin's lines carry a checksum; a garbled grbl line may be a valid move of another face, which the
    # link stops on as unsafe (tests/test_grbl.py): for grbl only replies are corrupted here
    corrupt = "corrupt = 0.04\n" if controller == "marlin" else ""
    faults = (
        f"[sim.faults]\ndrop = 0.04\nduplicate = 0.03\nnoise = 0.02\nseed = 9\n{corrupt}"
        "[sim.faults.to_host]\ncorrupt = 0.04\n"
    )
    summary = once(tmp_path, faults + QUICK_PROBES[controller], controller=controller, puzzle=3, seed=1, moves=12)
    assert summary["outcome"] == "done" and summary["solved"], summary["error"]


@pytest.mark.parametrize("controller", G_CODE)
@pytest.mark.parametrize(
    "faults, words",
    [
        ("reset_after = 4", "reset"),
        ("close_after = 4", "serial port was lost"),
        ("silent_after = 4", "went silent"),
    ],
)
def test_controller_faults_end_the_run_with_a_reason(tmp_path, controller, faults, words):
    timing = QUICK_SILENCE[controller] if faults.startswith("silent") else ""
    summary = once(tmp_path, f"[sim.faults]\n{faults}\n{timing}", controller=controller, puzzle=2, seed=5)
    assert summary["outcome"] == "error" and not summary["solved"]
    assert words in summary["error"]
    assert History(tmp_path / "data" / "history.sqlite").get_run(summary["id"])["outcome"] == "error"


@pytest.mark.parametrize("controller", G_CODE)
def test_a_run_after_an_emergency_stop_reconnects_and_solves(tmp_path, controller):
    slow = "[rig]\nquarter_turn_s = 0.1\nhalf_turn_s = 0.15\nsettle_s = 0.0\n"
    built = assemble.build(config(tmp_path, rig=slow, two_phase=False), sim=True, web=False, controller=controller)
    try:
        built.daemon.start_run(puzzle=2, seed=8)
        _wait_for(lambda: built.daemon.runner.phase == "executing")
        _wait_for(lambda: built.daemon.runner.progress.get("done_moves", 0) >= 1)
        built.daemon.stop()
        assert built.daemon.runner.wait(5) and built.daemon.runner.phase == "stopped"
        _wait_for(lambda: built.simulation.firmware.estop_times())
        summary = built.once(puzzle=2, seed=9)
        assert summary["outcome"] == "done" and summary["solved"], summary["error"]
    finally:
        built.close()


def _wait_for(condition, timeout_s: float = 20.0) -> None:
    import time

    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.002)


def test_controller_flag_needs_sim(tmp_path, capsys):
    assert main(["--config", str(config(tmp_path)), "--once", "--controller", "marlin"]) == 2
    assert "only apply with --sim" in capsys.readouterr().err


# ---------------------------------------------------------------- the flip/spin rig on a Maestro


def flip_spin_once(tmp_path, extra="", crc=False, **options):
    rig = FLIP_SPIN + ("crc = true\n" if crc else "")
    path = config(tmp_path, extra, rig=rig, two_phase=options.get("puzzle") == 3)
    built = assemble.build(path, sim=True, web=False)
    try:
        return built.once(**options)
    finally:
        built.close()


@pytest.mark.parametrize("puzzle, moves", [(2, None), (3, 8)])
def test_flip_spin_dry_run_scans_by_turning_and_ends_solved(tmp_path, puzzle, moves):
    summary = flip_spin_once(tmp_path, puzzle=puzzle, seed=4, moves=moves)
    assert summary["outcome"] == "done", summary["error"]
    assert summary["solved"]
    assert summary["link"]["moves_done"] > 2 * summary["length_htm"]  # every solver move takes servo moves


def test_flip_spin_dry_run_through_line_faults(tmp_path):
    """With the Maestro's CRC on (without it a damaged command byte can move a servo: docs/hardware.md)."""
    faults = "[sim.faults]\ndrop = 0.03\ncorrupt = 0.03\nduplicate = 0.02\nnoise = 0.02\nseed = 5\n"
    summary = flip_spin_once(tmp_path, faults, crc=True, puzzle=2, seed=6)
    assert summary["outcome"] == "done" and summary["solved"], summary["error"]


@pytest.mark.parametrize(
    "faults, words",
    [("reset_after = 6", "reset"), ("close_after = 6", "serial port was lost"), ("silent_after = 6", "went silent")],
)
def test_servo_controller_faults_end_the_run_with_a_reason(tmp_path, faults, words):
    summary = flip_spin_once(tmp_path, f"[sim.faults]\n{faults}\n", puzzle=2, seed=5)
    assert summary["outcome"] == "error" and not summary["solved"]
    assert words in summary["error"]


@pytest.mark.parametrize(
    "text, words",
    [
        ("[controller.maestro.spin]\nccw_us = 1490", "at least 20 µs apart"),
        ("[controller.maestro.cover]\nchannel = 0", "need their own channels"),
        ("[controller.maestro.spin]\nchannel = 6", "must be at most 5"),
        ("[controller.maestro.timing]\nsilense = 1", "[controller.maestro.timing] silense: unknown option"),
        ("[controller.maestro.cover]\nflip_us = 3000", "must be at most 2600"),
    ],
)
def test_bad_maestro_sections_name_the_key(tmp_path, text, words):
    with pytest.raises(ConfigError) as caught:
        assemble.load_parts(config(tmp_path, text, rig=FLIP_SPIN), sim=True)
    assert words in str(caught.value)


def test_a_servo_controller_drives_only_the_flip_spin_rig(tmp_path):
    with pytest.raises(ConfigError, match="a maestro controller drives a flip-spin rig"):
        assemble.load_parts(config(tmp_path, '[controller]\nkind = "maestro"'), sim=True)
    with pytest.raises(ConfigError, match="a marlin controller drives a six-axis rig"):
        flip_spin_on_marlin = FLIP_SPIN.split("[controller]")[0] + '[controller]\nkind = "marlin"\n'
        assemble.load_parts(config(tmp_path, rig=flip_spin_on_marlin), sim=True)


def test_cli_flip_spin_dry_run(tmp_path, capsys):
    path = config(tmp_path, rig=FLIP_SPIN, two_phase=False)
    assert (
        main(
            [
                "--config",
                str(path),
                "--sim",
                "--once",
                "--rig",
                "flip-spin",
                "--controller",
                "maestro",
                "--puzzle",
                "2",
                "--seed",
                "2",
            ]
        )
        == 0
    )
    assert "cube solved" in capsys.readouterr().out


def test_check_of_a_flip_spin_rig_reports_camera_and_port_not_a_traceback(tmp_path):
    path = tmp_path / "robotd.toml"
    path.write_text(
        f'[robotd]\ndata_dir = "{tmp_path / "data"}"\n[rig]\nkind = "flip-spin"\n[controller]\n'
        'kind = "maestro"\n[serial]\nport = "/dev/robotd-no-such-port"\n[vision]\n'
        "top_face = [[100, 80], [500, 80], [480, 450], [120, 450]]\n[camera.top]\n"
        'device = "/dev/robotd-no-such-camera"\n'
    )
    problems = check(path).problems
    assert any("robotd-no-such-port" in p for p in problems)
    assert not any("view" in p for p in problems)
