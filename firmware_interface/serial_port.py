"""Opening a serial port (a device path or a pyserial URL), and its failures, in words that say what to do."""

from __future__ import annotations

import errno

import serial

from .errors import ConfigError, PortError


def open_serial(port: str, timing) -> serial.Serial:
    """Open a port (device path or pyserial URL) exclusively, with errors that say what to do;
    ``timing`` gives ``baudrate``, ``poll`` (read timeout) and ``write_timeout``."""
    try:
        return serial.serial_for_url(
            port, baudrate=timing.baudrate, timeout=timing.poll, write_timeout=timing.write_timeout, exclusive=True
        )
    except serial.SerialException as err:
        raise PortError(_open_error(err), port=port) from None
    except ValueError as err:
        raise ConfigError(f"bad port settings: {err}", port=port) from None


def lost_on_read(err: Exception | str) -> str:
    """Why a read from an open port failed: the port is gone."""
    return f"the port vanished ({err}): unplugged cable or device powered off"


def lost_on_write(err: Exception) -> str:
    """Why a write to an open port failed: it timed out (the port is stuck), or the port is gone, worded as
    ``lost_on_read`` says it, since either may be the first to notice an unplugged cable."""
    if isinstance(err, serial.SerialTimeoutException):
        return f"a write timed out ({err}): the port is stuck"
    return lost_on_read(f"write failed: {err}")


def _open_error(err: serial.SerialException) -> str:
    code, text = getattr(err, "errno", None), str(err)
    if code == errno.ENOENT or "No such file" in text:
        return "cannot open: no such device (is the board plugged in? stable names are in /dev/serial/by-id/)"
    if code == errno.EACCES or "Permission denied" in text:
        return "cannot open: permission denied (add the user to the dialout group)"
    if code in (errno.EAGAIN, errno.EBUSY) or "exclusively lock" in text:
        return "cannot open: the port is in use by another program"
    return f"cannot open: {text}"
