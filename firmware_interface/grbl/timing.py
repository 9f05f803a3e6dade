"""Everything ``GrblLink`` waits for, in seconds (``[controller.grblhal.timing]`` in robotd's config)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GrblTiming:
    """Everything GrblLink waits for, in seconds."""

    baudrate: int = 115200
    banner_wait: float = 0.5  # connect(): a board that resets on open prints its banner by then
    boot_timeout: float = 5.0  # connect(): the whole handshake
    sync_interval: float = 0.5  # repeat the soft reset this often while no banner comes
    settle: float = 0.05  # quiet after a banner; an idle board off target this long: line garbled or lost
    status_interval: float = 0.01  # '?' this often while something is pending
    probe_after: float = 0.1  # no ok or error to a line this long: send it again
    overrun: float = 1.0  # a move still running this long after twice its time is stopped and redone
    silence: float = 2.0  # DeviceSilent after this long without a word
    estop_retry: float = 0.05
    estop_timeout: float = 1.0  # grbl confirms with ALARM:3 (moving) or its banner (idle): 0.25-0.5 s measured
    # a soft reset's banner comes this late (grbl-Mega-5X: 0.25 s idle, 1.0 s when it was moving, as it waits
    # $1 ms twice); a banner later than that is the board's own reset
    reset_banner: float = 2.0
    query_timeout: float = 2.0
    write_timeout: float = 0.5
    poll: float = 0.005  # read timeout of the I/O thread
    reopen_pause: float = 0.1  # between closing and reopening the port (a reset by DTR needs it)
