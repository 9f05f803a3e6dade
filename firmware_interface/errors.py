"""The package's exception: ``LinkError`` and the subclasses a caller may want to tell apart.

Every message names the port and what happened (which frame, motion or
motor). Errors raised by a running link carry ``log``: the last frames each
way, as lines of the traffic log format (``python -m firmware_interface
decode`` reads them).
"""

from __future__ import annotations


class LinkError(Exception):
    """Anything that went wrong talking to the firmware, or a bad argument or setting."""

    def __init__(self, message: str, *, port: str | None = None, log: list[str] | None = None):
        super().__init__(f"{port}: {message}" if port else message)
        self.port = port
        self.log = log or []
        self.done_through: int | None = None  # last motion id known done when the link failed
        self.log_path: str | None = None  # where the link saved its fault log, if it did


class ConfigError(LinkError):
    """A bad argument or setting (unknown key, value out of range, a face that is no motor)."""


class PortError(LinkError):
    """The port could not be opened, or vanished (unplugged cable, closed port)."""


class HandshakeError(LinkError):
    """The device did not complete the handshake."""


class ProtocolVersionError(HandshakeError):
    """The device speaks a protocol version this host does not."""


class DeviceSilent(LinkError):
    """Nothing valid heard from the device for longer than the silence limit."""


class DeviceReset(LinkError):
    """The device rebooted (its boot id changed) or lost the session; queued motions are gone."""


class AckTimeout(LinkError):
    """A frame was retransmitted the maximum number of times without an acknowledgement."""


class DeviceFault(LinkError):
    """The device reported a fault (``code``: STALL, LIMIT, ESTOP, BADARG, ...)."""

    def __init__(self, message: str, *, code: str, port: str | None = None, log: list[str] | None = None):
        super().__init__(message, port=port, log=log)
        self.code = code
