"""How long ``MarlinLink`` waits for each thing: ``MarlinTiming``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MarlinTiming:
    """Everything MarlinLink waits for, in seconds."""

    baudrate: int = 115200
    boot_timeout: float = 5.0  # connect(): the board's bootloader and banner take up to ~2 s
    sync_interval: float = 0.5  # repeat M110 this often during connect
    settle: float = 0.1  # after the handshake ok: late oks of repeated M110s are ignored
    probe_after: float = 0.4  # nothing heard with lines awaiting ok: send the oldest again
    silence: float = 2.0  # DeviceSilent after this long without a reply
    busy_silence: float = 5.0  # ... or this long after ``busy: processing``
    reopen_pause: float = 0.1  # between closing and reopening the port (a reset by DTR needs it)
    estop_retry: float = 0.05
    estop_timeout: float = 0.5
    query_timeout: float = 2.0
    write_timeout: float = 0.5
    poll: float = 0.005
