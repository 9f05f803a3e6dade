"""Timeouts and intervals of the host side of the link, with defaults for real serial ports and ptys."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace

from ..errors import ConfigError


@dataclass(frozen=True)
class LinkTiming:
    """Every time the link waits for something, in seconds.

    The defaults suit a USB serial board at 115200 baud: a 40-byte frame
    takes 3.5 ms on the wire, a board that resets on open needs up to 2 s in
    its bootloader. ``LinkTiming.pty()`` is tuned for the simulator on a
    pseudo-terminal, where a round trip takes well under a millisecond.
    """

    baudrate: int = 115200
    boot_timeout: float = 5.0  # connect(): wait this long for the handshake
    hello_interval: float = 0.25  # repeat HELLO this often until answered (sooner after BOOT)
    ack_timeout: float = 0.1  # go back and resend unacknowledged frames after this
    max_retransmits: int = 10  # resends of one frame before AckTimeout
    heartbeat: float = 0.2  # send PING when nothing else was sent for this long
    probe_after: float = 0.35  # ask STATUS when nothing was heard for this long
    silence: float = 0.8  # DeviceSilent after this long without a valid frame (< 1 s)
    estop_retry: float = 0.02  # resend ESTOP until answered
    estop_timeout: float = 0.5
    query_timeout: float = 0.5  # query(): give up after this long
    write_timeout: float = 0.5  # a write that blocks longer means the port is stuck
    poll: float = 0.01  # the I/O thread wakes at least this often
    window: int = 8  # most frames in flight (the device may ask for fewer)

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError(f"link timing: {f.name} must be a positive number, got {value!r}")
        if self.silence >= 1.0 or self.probe_after >= self.silence:
            raise ConfigError(
                f"link timing: need probe_after < silence < 1 s to detect a silent device "
                f"within 1 s, got probe_after={self.probe_after}, silence={self.silence}"
            )

    @classmethod
    def pty(cls) -> LinkTiming:
        return cls(
            boot_timeout=2.0,
            hello_interval=0.05,
            ack_timeout=0.03,
            heartbeat=0.1,
            probe_after=0.3,
            silence=0.6,
            estop_retry=0.01,
            query_timeout=0.3,
            poll=0.005,
        )

    @classmethod
    def for_port(cls, port: str) -> LinkTiming:
        """``pty()`` for a pseudo-terminal (the simulator), the serial defaults otherwise."""
        real = os.path.realpath(port) if "://" not in port else ""
        return cls.pty() if real.startswith("/dev/pts/") else cls()

    @classmethod
    def from_config(cls, config: dict | None, port: str = "") -> LinkTiming:
        """Defaults for ``port`` overridden by a mapping (e.g. a TOML table); unknown keys are errors."""
        base = cls.for_port(port)
        if not config:
            return base
        known = [f.name for f in fields(cls)]
        for key in config:
            if key not in known:
                raise ConfigError(f"link timing: unknown key {key!r} (known: {', '.join(known)})")
        return replace(base, **config)
