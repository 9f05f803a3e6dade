"""The PCA9685 PWM board (``firmware_interface.pwm_servo.pca9685``) on a simulated register file: the registers
as the NXP datasheet gives them, the servos' pulses, the stops, and dry runs with ``kind = "pca9685"``."""

import errno
import sys
import threading
import time

import pytest

from firmware_interface import PortError
from firmware_interface.errors import ConfigError as LinkConfigError
from firmware_interface.flipspin_mechanism import FlipSpinMechanism
from firmware_interface.pwm_servo import pca9685 as pca
from firmware_interface.pwm_servo.pca9685_bus import SimulatedI2cBus, SimulatedPca9685
from firmware_interface.pwm_servo.timing import PwmServoTiming
from pwm_rigs import linked
from robot import assemble
from robot.cli import main
from robot.errors import ConfigError

SPIN, COVER = 0, 1
RANGES = {SPIN: (1000.0, 2000.0), COVER: (1200.0, 1900.0)}
TIMING = PwmServoTiming(servo_us_per_ms=20.0, settle=0.005)
HALF_COUNT_US = 1e6 / (pca.rate_hz(121) * 4096) / 2  # at 50 Hz a count is 4.9 µs: pulses land within half a count


def test_prescale_and_pulse_counts_follow_the_datasheet():
    assert pca.prescale(50) == 121  # round(25 MHz / (4096 x 50)) - 1
    assert pca.prescale(200) == 0x1E  # the power-on value is 200 Hz
    assert pca.rate_hz(121) == pytest.approx(50.03, abs=0.01)
    assert pca.counts(1500, 50.0) == round(1500e-6 * 50 * 4096) == 307
    for bad in (20, 2000):
        with pytest.raises(LinkConfigError, match=r"PWM frequency must be 24\.\.1526 Hz"):
            pca.prescale(bad)


def test_start_sets_the_rate_asleep_and_each_channel_gets_its_pulse_or_full_off():
    bus = SimulatedI2cBus(0x41)
    bus.registers[pca.PRE_SCALE] = 0x1E
    board = pca.Pca9685(bus, 0x41, 50, where="test bus")
    board.start()
    assert bus.registers[pca.PRE_SCALE] == 121
    mode1 = bus.registers[pca.MODE1]
    assert not mode1 & pca.SLEEP and mode1 & pca.AUTO_INCREMENT and bus.registers[pca.MODE2] == pca.OUTDRV
    slept = [k for k, (reg, value) in enumerate(bus.writes) if reg == pca.MODE1 and value & pca.SLEEP]
    rate = [k for k, (reg, _) in enumerate(bus.writes) if reg == pca.PRE_SCALE]
    assert slept and rate and slept[0] < rate[0]  # PRE_SCALE only takes a write while asleep
    assert all(bus.pulse_us(ch) is None for ch in range(16))  # nothing is sent until a servo moves
    board.pulse(3, 1500)
    assert bus.pulse_us(3) == pytest.approx(1500, abs=HALF_COUNT_US)
    assert bus.registers[pca.LED0 + 12 : pca.LED0 + 16] == bytes((0, 0, 307 & 0xFF, 307 >> 8))
    board.off(3)
    assert bus.registers[pca.LED0 + 15] & pca.FULL and bus.pulse_us(3) is None
    board.pulse(3, 1200)
    board.close()
    assert bus.pulse_us(3) is None and bus.registers[pca.MODE1] & pca.SLEEP and bus.closed


def test_no_board_at_the_address_and_no_bus_are_clear_errors(tmp_path):
    with pytest.raises(PortError, match=r"test bus, address 0x42: no PCA9685 answers .*i2cdetect"):
        pca.Pca9685(SimulatedI2cBus(0x40), 0x42, 50, where="test bus").start()
    assert errno.EREMOTEIO
    with pytest.raises(PortError, match=r"no /dev/i2c-97: I²C is off .*dtparam=i2c_arm=on"):
        pca.open_bus(97)


@pytest.fixture
def rig():
    mechanism = FlipSpinMechanism(size=3, spin_channel=SPIN, cover_channel=COVER)
    board = SimulatedPca9685({SPIN: 1500.0, COVER: 1500.0}, mechanism=mechanism, slew_us_per_ms=TIMING.servo_us_per_ms)
    with linked(board, RANGES, TIMING) as link:
        yield board, link, mechanism


def test_servo_moves_turn_the_cube_with_pulses_within_the_end_points(rig):
    board, link, mechanism = rig
    for targets in ({COVER: 6000}, {SPIN: 6000}, {SPIN: 8000}, {COVER: 4800}, {SPIN: 6000}, {COVER: 6000}):
        began = time.monotonic()
        link.move(targets).wait(2)
        channel, target = next(iter(targets.items()))
        assert board.bus.pulse_us(channel) == pytest.approx(target / 4, abs=HALF_COUNT_US)
        assert time.monotonic() - began >= TIMING.settle
    time.sleep(0.02)
    assert mechanism.jammed is None
    assert mechanism.counts == {"flips": 0, "spins": 1, "layer_turns": 1}
    for channel, (low, high) in RANGES.items():
        widths = [pulse for _, pulse in board.train(channel) if pulse is not None]
        assert widths and all(low - HALF_COUNT_US <= w <= high + HALF_COUNT_US for w in widths)


def test_estop_sets_full_off_on_every_servo_and_close_puts_the_chip_to_sleep(rig):
    board, link, _ = rig
    link.move({SPIN: 6000, COVER: 6000}).wait(2)
    link.estop()
    assert board.bus.pulse_us(SPIN) is None and board.bus.pulse_us(COVER) is None
    link.clear()
    link.move({SPIN: 6000}).wait(2)
    link.close()
    assert board.bus.registers[pca.MODE1] & pca.SLEEP and board.bus.pulse_us(SPIN) is None


# ---------------------------------------------------------------- config and dry runs


def config(tmp_path, extra=""):
    path = tmp_path / "robotd.toml"
    path.write_text(
        f'[robotd]\ndata_dir = "{tmp_path / "data"}"\n[solver]\nbudget_s = 20\n[rig]\nkind = "flip-spin"\n'
        f'[controller]\nkind = "pca9685"\n[controller.pca9685]\nservo_us_per_ms = 40.0\n{extra}'
    )
    return path


@pytest.mark.parametrize(
    "extra, words",
    [
        ("address = 0x20", "[controller.pca9685] address: must be at least 64"),
        ("frequency_hz = 2000", "[controller.pca9685] frequency_hz: must be at most 1526"),
        ("[controller.pca9685.spin]\nchannel = 16", "[controller.pca9685.spin] channel: must be at most 15"),
        ("[controller.pca9685.cover]\nchannel = 0", "the spin and cover servos need their own channels"),
        ("[controller.pca9685.cover]\naccel = 3", "[controller.pca9685.cover] accel: unknown option"),
    ],
)
def test_bad_pca9685_sections_name_the_key(tmp_path, extra, words):
    with pytest.raises(ConfigError) as caught:
        assemble.load_parts(config(tmp_path, extra), sim=True)
    assert words in str(caught.value)


def test_cli_pca9685_dry_run_3x3_ends_solved(tmp_path, capsys):
    argv = ["--config", str(config(tmp_path)), "--sim", "--once", "--rig", "flip-spin", "--controller", "pca9685"]
    assert main([*argv, "--puzzle", "3", "--seed", "5", "--moves", "10"]) == 0
    assert "cube solved" in capsys.readouterr().out


def test_a_real_rig_without_the_bus_says_which_bus(tmp_path):
    parts = assemble.load_parts(config(tmp_path, "bus = 97"), sim=True)
    link = parts.sections["controller"].open_link(None, parts.config, tmp_path)
    with pytest.raises(PortError, match="no /dev/i2c-97"):
        link.connect()


def test_a_real_rig_needs_no_serial_port_and_check_names_the_missing_bus(tmp_path):
    from robot.check import check

    text = config(tmp_path, "bus = 97").read_text()
    text += "\n[vision]\ntop_face = [[100, 80], [500, 80], [480, 450], [120, 450]]\n"
    text += '[camera.top]\ndevice = "/dev/robotd-no-cam"\n'
    (tmp_path / "robotd.toml").write_text(text)
    parts = assemble.load_parts(tmp_path / "robotd.toml", sim=False)
    assert parts.sections["port"] == "PCA9685 on /dev/i2c-97 at 0x40"
    problems = check(tmp_path / "robotd.toml").problems
    assert any("no /dev/i2c-97" in p for p in problems) and not any("[serial] port: required" in p for p in problems)
    board = [p for p in problems if "/dev/i2c-97" in p]
    assert board and all("[controller.pca9685]" in p and "serial port" not in p for p in board)


def test_a_block_write_is_never_read_half_written():
    """The board's thread reads the pulses while the link writes them: never a mix of the old and the new
    bytes (1500 µs to 1200 µs half written reads 2451 µs), as the chip applies a transfer on its STOP."""
    bus = SimulatedI2cBus()
    chip = pca.Pca9685(bus, bus.address, 50.0, where="test")
    chip.start()
    widths = set()
    for us in (1500.0, 1200.0):
        chip.pulse(0, us)
        widths.add(bus.pulse_us(0))  # as the chip's counts give it
    seen: set[float | None] = set()
    writing = threading.Event()
    reader = threading.Thread(target=lambda: [seen.add(bus.pulse_us(0)) for _ in iter(writing.is_set, False)])
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns as often as they can
    try:
        writing.set()
        reader.start()
        for _ in range(3000):
            chip.pulse(0, 1500.0)
            chip.pulse(0, 1200.0)
    finally:
        writing.clear()
        reader.join()
        sys.setswitchinterval(switch)
    assert seen - {None} <= widths
