"""How long ``MaestroLink`` waits for each thing: ``MaestroTiming``, with defaults for a Maestro on USB and
``MaestroTiming.pty()`` for the simulator."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..servo_horn import check_times


@dataclass(frozen=True)
class MaestroTiming:
    """Every time MaestroLink waits for something, in seconds unless named otherwise."""

    baudrate: int = 115200  # USB ports ignore it; a Maestro in UART mode needs its fixed rate
    reply_timeout: float = 0.05  # a reply not complete by then is missing: ask again
    poll: float = 0.01  # between moving-state polls while the pulses ramp
    period: float = 0.02  # the Maestro's servo period: a position must hold this long to count
    silence: float = 1.0  # DeviceSilent after this long without a usable reply
    boot_timeout: float = 2.0  # connect(): how long the Maestro has to answer
    move_margin: float = 5.0  # a move may take this much longer than its speed limit says
    servo_us_per_ms: float = 4.0  # how fast the servos themselves turn (0: do not wait for them)
    off_travel_us: float = 1000.0  # travel assumed for a servo coming from "off" (it may be anywhere)
    settle: float = 0.05  # after the servos arrive, for the mechanism to come to rest
    resends: int = 5  # times a target that did not take is sent again
    protocol_checks: int = 5  # re-reads that must all show a protocol error for it to be fatal
    estop_retry: float = 0.01
    estop_timeout: float = 0.5
    query_timeout: float = 5.0
    write_timeout: float = 0.5

    def __post_init__(self):
        check_times(self, "maestro timing", zero_ok=("settle", "servo_us_per_ms"))

    @classmethod
    def pty(cls, **changes) -> MaestroTiming:
        """Tuned for the simulator on a pseudo-terminal, where a round trip takes about a millisecond."""
        quick = cls(
            reply_timeout=0.02, poll=0.002, period=0.004, silence=0.5, boot_timeout=1.0, move_margin=2.0, settle=0.004
        )
        return replace(quick, **changes)
