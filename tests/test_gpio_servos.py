"""Servos on the Pi's GPIO through gpiozero (``firmware_interface.pwm_servo``), on gpiozero's mock pins:
the pulse trains, the time each move takes, the safety stops, and dry runs with ``kind = "gpio"``."""

import time

import pytest

from firmware_interface import DeviceFault, PortError
from firmware_interface.errors import ConfigError as LinkConfigError
from firmware_interface.flipspin_mechanism import FlipSpinMechanism
from firmware_interface.pwm_servo.gpio import GpioServos, pin_factory
from firmware_interface.pwm_servo.simulator import SimulatedGpio
from firmware_interface.pwm_servo.timing import PwmServoTiming
from pwm_rigs import linked
from robot import assemble
from robot.cli import main
from robot.errors import ConfigError, RobotError
from robot.flipspin import FlipSpinRig, Op
from robot.servo_motion import ServoMotion
from robot_doubles import solver_keys
from solver import scramble

SPIN, COVER = 13, 12
RANGES = {SPIN: (1000.0, 2000.0), COVER: (1200.0, 1900.0)}
HOMES = {SPIN: 1500.0, COVER: 1500.0}
TIMING = PwmServoTiming(servo_us_per_ms=20.0, settle=0.005)  # 500 µs of travel: 25 ms
HOST_LATE_S = 0.25  # how late a loaded test machine may wake a sleeping thread


def took_the_servos_time(took: float, expected: float) -> bool:
    """Never less than the servo's time; a busy host may wake late, so the upper bound only catches a move
    padded far past it."""
    return expected - 0.002 <= took < expected + HOST_LATE_S


@pytest.fixture
def rig():
    mechanism = FlipSpinMechanism(size=2, spin_channel=SPIN, cover_channel=COVER)
    board = SimulatedGpio(RANGES, HOMES, mechanism=mechanism, slew_us_per_ms=TIMING.servo_us_per_ms)
    with linked(board, RANGES, TIMING) as link:
        yield board, link, mechanism


def test_a_starved_simulator_thread_still_moves_each_servo_in_its_own_time():
    """The cover closes, then the spinner turns: a layer turn. With the board's thread not running at all (a
    machine too busy to wake it), each change of pulse first lets the time before it pass under the old
    pulses, so the spin never seems to start while the cover is still moving (that would be a jam)."""
    mechanism = FlipSpinMechanism(size=2, spin_channel=SPIN, cover_channel=COVER)
    board = SimulatedGpio(RANGES, HOMES, mechanism=mechanism, slew_us_per_ms=TIMING.servo_us_per_ms)
    outputs = board.outputs()  # not started: only the outputs move the horns
    try:
        outputs.pulse(SPIN, 1500.0)
        outputs.pulse(COVER, 1500.0)  # spinner home, cover open
        outputs.pulse(COVER, 1200.0)  # the cover closes on the cube: 300 µs, 15 ms
        time.sleep(0.05)
        outputs.pulse(SPIN, 2000.0)  # a quarter turn of the bottom layer: 25 ms
        time.sleep(0.05)
        board.advance(time.monotonic())
        assert mechanism.jammed is None and mechanism.counts["layer_turns"] == 1
    finally:
        outputs.close()


def test_pulse_widths_stay_within_the_end_points_and_moves_take_the_servos_time(rig):
    board, link, _ = rig
    link.move({SPIN: 6000}).wait(2)
    began = time.monotonic()
    link.move({SPIN: 8000}).wait(2)
    took = time.monotonic() - began
    assert took_the_servos_time(took, TIMING.move_s(500))  # 25 ms of travel and the settle
    pin = board.factory.pin(SPIN)
    widths = [state.state / pin.frequency * 1e6 for state in pin.states if state.state]
    assert widths and all(1000 - 1e-6 <= w <= 2000 + 1e-6 for w in widths)
    assert widths[-1] == pytest.approx(2000)
    assert board.horns[SPIN] == pytest.approx(2000)  # the horn got there before the move was done


def test_a_speed_limit_ramps_the_pulse_frame_by_frame(rig):
    board, link, _ = rig
    link.move({SPIN: 4000}).wait(2)
    link.set_speed(SPIN, 5000).wait(2)  # µs per second: 1000 µs in 0.2 s, slower than the servo
    began = time.monotonic()
    link.move({SPIN: 8000}).wait(2)
    assert took_the_servos_time(time.monotonic() - began, 0.2 + TIMING.settle)
    timed = [(at, pulse) for at, pulse in board.train(SPIN) if at >= began and pulse is not None]
    ramp = [pulse for _, pulse in timed]
    assert len(ramp) >= 8 and ramp == sorted(ramp) and ramp[-1] == pytest.approx(2000)
    # Never ahead of the speed limit from the 1000 µs it started at (a frame the host sends late may take a
    # bigger step, but only as big as the time it waited allows).
    assert all(pulse - 1000 <= 5000 * (at - began) + 1 for at, pulse in timed)


def test_a_target_outside_the_end_points_is_refused_and_nothing_moves(rig):
    board, link, _ = rig
    link.move({SPIN: 6000}).wait(2)
    for target in (3996, 8004, 12000):
        with pytest.raises(LinkConfigError, match=r"within the servo's end-points, 1000\.\.2000 µs"):
            link.move({SPIN: target})
    with pytest.raises(LinkConfigError, match="no servo on channel 5"):
        link.move({5: 6000})
    assert link.pulses[SPIN] == 1500


def test_estop_and_close_stop_every_pulse(rig):
    board, link, mechanism = rig
    link.move({SPIN: 6000, COVER: 6000}).wait(2)
    slow = link.move({SPIN: 8000})
    link.estop()
    with pytest.raises(DeviceFault, match="emergency stop"):
        slow.wait(2)
    assert all(not board.factory.pin(pin).state for pin in RANGES)  # no pulses on any pin
    with pytest.raises(DeviceFault):
        link.move({SPIN: 6000})
    link.clear()
    link.move({SPIN: 6000}).wait(2)
    assert board.factory.pin(SPIN).state
    link.close()
    assert all(not board.factory.pin(pin).state for pin in RANGES)


def test_servo_motion_turns_the_cube_and_jogs_only_within_the_end_points(rig):
    board, link, mechanism = rig
    state = scramble(2, seed=3)["state"]
    mechanism.set_state(state)
    motion = ServoMotion(link, _servos(), FlipSpinRig(size=2))
    motion.connect()
    motion.do([Op("hold"), Op("turn", 1), Op("release"), Op("spin", -1), Op("flip")])
    time.sleep(0.02)
    assert mechanism.jammed is None and mechanism.counts == {"flips": 1, "spins": 1, "layer_turns": 1}
    motion.do([Op("spin", 1)])
    with pytest.raises(RobotError, match="cannot turn further"):
        motion.jog("spin+1")  # the spinner is at +1: a jog never goes past an end-point
    motion.estop()
    assert not board.factory.pin(SPIN).state and not board.factory.pin(COVER).state


def _servos():
    from robot.controllers.maestro import Servo

    return {
        "spin": Servo(SPIN, {-1: 1000.0, 0: 1500.0, 1: 2000.0}, 0, 0),
        "cover": Servo(COVER, {"open": 1500.0, "hold": 1200.0, "flip": 1900.0}, 0, 0),
    }


def test_a_machine_without_gpio_gets_a_clear_error_naming_the_factory_and_the_pin():
    with pytest.raises(PortError, match=r"GPIO pin factory 'pigpio' is not available here .* pigpiod"):
        pin_factory("pigpio")
    factory = pin_factory("mock")
    with pytest.raises(PortError, match="GPIO99: cannot drive a servo on it"):
        GpioServos({99: (1000.0, 2000.0)}, factory, "mock")


def test_importing_the_controllers_imports_no_hardware_library():
    import subprocess
    import sys

    code = "import sys, robot.controllers; print(sorted(m for m in ('gpiozero', 'smbus2') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ---------------------------------------------------------------- config and dry runs


def config(tmp_path, extra="", kind="gpio", two_phase=True):
    path = tmp_path / "robotd.toml"
    path.write_text(
        f'[robotd]\ndata_dir = "{tmp_path / "data"}"\n[solver]\n{solver_keys(two_phase)}[rig]\nkind = "flip-spin"\n'
        f'[controller]\nkind = "{kind}"\n[controller.{kind}]\nservo_us_per_ms = 40.0\n{extra}'
    )
    return path


@pytest.mark.parametrize(
    "extra, words",
    [
        ("[controller.gpio.spin]\npin = 40", "[controller.gpio.spin] pin: must be at most 27"),
        ("[controller.gpio.cover]\npin = 13", "the spin and cover servos need their own pins"),
        ("[controller.gpio.spin]\nccw_us = 1490", "at least 20 µs apart"),
        ("[controller.gpio.spin]\nangle = 3", "[controller.gpio.spin] angle: unknown option"),
        ('factory = "sysfs"', "must be one of lgpio, pigpio, rpigpio, mock"),
        ("[controller.gpio.timing]\nsettel = 1", "[controller.gpio.timing] settel: unknown option"),
        ("[sim.faults]\ndrop = 0.1", "a gpio controller has no line or device to inject faults in"),
    ],
)
def test_bad_gpio_sections_name_the_key(tmp_path, extra, words):
    with pytest.raises(ConfigError) as caught:
        assemble.load_parts(config(tmp_path, extra), sim=True)
    assert words in str(caught.value)


def test_the_rigs_op_times_come_from_the_servos_and_rig_keys_for_them_are_refused(tmp_path):
    rig = assemble.load_parts(config(tmp_path), sim=True).sections["rig"]
    # 500 µs of spin at 40 µs/ms: 12.5 ms; a flip: 400 µs there and back and a settle between
    settle = PwmServoTiming().settle
    assert rig.timing.spin_quarter_s == pytest.approx(0.0125)
    assert rig.timing.flip_s == pytest.approx(2 * 0.01 + settle)
    assert rig.timing.hold_s == pytest.approx(0.0075 + settle) and rig.timing.settle_s == settle
    text = config(tmp_path).read_text().replace('kind = "flip-spin"\n', 'kind = "flip-spin"\nflip_s = 0.5\n')
    (tmp_path / "robotd.toml").write_text(text)
    with pytest.raises(ConfigError, match=r"\[rig\] flip_s: with a gpio controller the op times follow"):
        assemble.load_parts(tmp_path / "robotd.toml", sim=True)


def test_cli_gpio_dry_run_ends_solved(tmp_path, capsys):
    path = config(tmp_path, two_phase=False)  # a 2x2: the pocket table solves it
    argv = ["--config", str(path), "--sim", "--once", "--rig", "flip-spin", "--controller", "gpio"]
    assert main([*argv, "--puzzle", "2", "--seed", "2"]) == 0
    assert "cube solved" in capsys.readouterr().out


def test_gpio_dry_run_3x3_motor_time_is_the_estimate_and_rig_solution_chose(tmp_path):
    built = assemble.build(config(tmp_path), sim=True, web=False)
    try:
        summary = built.once(puzzle=3, seed=4, moves=10)
    finally:
        built.close()
    assert summary["outcome"] == "done" and summary["solved"], summary["error"]
    chosen = summary["solver_params"]["rig_solution"]
    assert chosen["planned_s"] <= chosen["solver_planned_s"] and chosen["candidates"] >= 1
    # a quick test rig (12.5 ms per spin): scheduling weighs more than on a real one (bench/flipspin_dry_time.py)
    assert summary["actual_s"] == pytest.approx(summary["estimated_s"], rel=0.25)


def test_sigterm_during_a_run_stops_every_pulse_and_closing_releases_the_pins(tmp_path):
    import os
    import signal

    from robot.cli import signals_stop_the_run

    path = config(tmp_path, two_phase=False).read_text().replace("servo_us_per_ms = 40.0", "servo_us_per_ms = 4.0")
    (tmp_path / "robotd.toml").write_text(path)
    built = assemble.build(tmp_path / "robotd.toml", sim=True, web=False)
    board = built.simulation.firmware
    try:
        with signals_stop_the_run(built.daemon) as (received, _):
            built.daemon.start_run(puzzle=2, seed=1)
            deadline = time.monotonic() + 30
            while built.daemon.runner.phase != "executing" and time.monotonic() < deadline:
                time.sleep(0.01)
            assert board.factory.pin(SPIN).state or board.factory.pin(COVER).state  # the servos are being pulsed
            os.kill(os.getpid(), signal.SIGTERM)
            built.daemon.runner.wait()
        assert received == [signal.SIGTERM] and built.daemon.runner.phase == "stopped"
        assert not board.factory.pin(SPIN).state and not board.factory.pin(COVER).state
    finally:
        built.close()
    assert not board.factory.pin(SPIN).state and not board.factory.pin(COVER).state
