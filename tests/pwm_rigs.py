"""A simulated board of host-pulsed servos and the ``PwmServoLink`` to it, for the GPIO and PCA9685 tests."""

from contextlib import contextmanager

from firmware_interface.pwm_servo.link import PwmServoLink


@contextmanager
def linked(board, ranges, timing):
    """``board`` started, a link to its outputs connected; both closed afterwards."""
    path = board.start()
    link = PwmServoLink(board.outputs, ranges, where=path, timing=timing)
    link.connect()
    try:
        yield link
    finally:
        link.close()
        board.stop()
