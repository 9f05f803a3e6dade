"""Dry runs' times: the simulated motors take what ``[sim.motors]`` says, and the host time is measured."""

import pytest

from robot import assemble
from robot.errors import ConfigError
from robot.summary import format_summary
from robot_doubles import FAST_RIG, FLIP_SPIN, SIX_AXIS_RIG

SLOW_MOTORS = "[sim.motors]\nquarter_ms = 40\nhalf_ms = 70\nsettle_ms = 5\n"


def config(tmp_path, rig, extra=""):
    path = tmp_path / "robotd.toml"
    path.write_text(f'[robotd]\ndata_dir = "{tmp_path / "data"}"\n[solver]\nfallback = "none"\n{rig}\n{extra}')
    return path


def dry_run(tmp_path, rig, extra="", controller=None, **options):
    built = assemble.build(config(tmp_path, rig, extra), sim=True, web=False, controller=controller)
    try:
        return built.once(**options)
    finally:
        built.close()


def motor_seconds(solution: str, quarter_s: float, half_s: float, settle_s: float) -> float:
    """A 2x2x2 solution's motor time (U, R and F only: no two moves turn together)."""
    moves = solution.split()
    return sum(half_s if move.endswith("2") else quarter_s for move in moves) + settle_s * len(moves)


@pytest.mark.parametrize("controller", [None, "marlin", "grblhal"])
def test_sim_motors_set_how_long_the_simulated_motors_take(tmp_path, controller):
    summary = dry_run(tmp_path, SIX_AXIS_RIG, SLOW_MOTORS, controller, puzzle=2, seed=5)
    assert summary["outcome"] == "done" and summary["solved"], summary["error"]
    wanted = motor_seconds(summary["solution"], 0.040, 0.070, 0.005)
    assert summary["estimated_s"] == pytest.approx(wanted, abs=0.002)  # the plan knows the motors' times
    # SIX_AXIS_RIG alone turns a quarter in 20 ms (robotd's least SPEED) or 10 ms: the motors took [sim.motors]' time
    assert summary["actual_s"] >= motor_seconds(summary["solution"], 0.040, 0.070, 0.0)


def test_a_half_turn_sim_motors_leave_out_keeps_the_rigs_ratio(tmp_path):
    rig = "[rig]\nquarter_turn_s = 0.01\nhalf_turn_s = 0.02\nsettle_s = 0.0\n"
    parts = assemble.load_parts(config(tmp_path, rig, "[sim.motors]\nquarter_ms = 30\n"), sim=True)
    timing = parts.sections["rig"].status()["timing"]
    assert timing == pytest.approx({"quarter_turn_s": 0.03, "half_turn_s": 0.06, "settle_s": 0.0})
    assert parts.sections["sim"].motors == pytest.approx({"quarter_ms": 30, "half_ms": 60, "settle_ms": 0})


def test_without_sim_motors_the_rig_keeps_its_times(tmp_path):
    parts = assemble.load_parts(config(tmp_path, SIX_AXIS_RIG), sim=True)
    timing = parts.sections["rig"].status()["timing"]
    assert timing == {"quarter_turn_s": 0.01, "half_turn_s": 0.015, "settle_s": 0.0}


def test_sim_motors_for_a_flip_spin_rig_are_refused_with_the_reason(tmp_path):
    with pytest.raises(ConfigError, match=r"\[sim\] motors: .*servo_us_per_ms"):
        assemble.load_parts(config(tmp_path, FLIP_SPIN, SLOW_MOTORS), sim=True)


@pytest.mark.parametrize("rig", [FAST_RIG, FLIP_SPIN], ids=["six-axis", "flip-spin"])
def test_host_time_is_the_wall_time_less_the_measured_execution(tmp_path, rig):
    summary = dry_run(tmp_path, rig, puzzle=2, seed=5)
    assert summary["outcome"] == "done", summary["error"]
    host = summary["host_overhead_s"]
    assert 0 < host <= summary["wall_s"]
    assert host == pytest.approx(summary["wall_s"] - summary["actual_s"], abs=0.002)
    assert f"host time : {host:.3f} s" in format_summary(summary)
