"""How long ``MarlinLink`` waits for each thing: ``MarlinTiming``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MarlinTiming:
    """Everything MarlinLink waits for, in seconds."""

    baudrate: int = 115200
    boot_timeout: float = 5.0  # connect(): the board's bootloader and banner take up to ~2 s
    sync_interval: float = 0.5  # repeat M110 (and its marker) this often during connect
    settle: float = 0.05  # after the banner: greet the board once the rest of its boot text is out
    probe_after: float = 0.4  # nothing heard while a line waits: a marker line goes after it (a probe)
    silence: float = 2.0  # DeviceSilent after this long without a word while a line waits
    busy_silence: float = 5.0  # ... while an M400 waits (Marlin says busy every 2 s: one lost is no sign)
    # After M410 Marlin answers nothing for a while (stock 2.1 binaries: 1-2 s after a stop): silence counts
    # only from this long after the last M410 written, and clear() waits that much longer.
    stop_recovery: float = 4.0
    reopen_pause: float = 0.1  # between closing and reopening the port (a reset by DTR needs it)
    estop_retry: float = 0.05  # M410 is written again this long after the first (a lost line)
    # A stop while a move's G1 is on the wire waits for its ok, at most this long after the G1 has crossed:
    # Marlin without EMERGENCY_PARSER that reads both lines together stops first and runs the G1 after its pause.
    estop_hold: float = 0.03
    estop_timeout: float = 0.5  # unused: Marlin confirms no M410 (kept so that older configs still load)
    query_timeout: float = 2.0
    write_timeout: float = 0.5
    poll: float = 0.005
    reply_share: float = 0.5  # an ok sooner than this share of the line's wire time is not that line's
