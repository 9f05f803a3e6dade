"""What the host sends: sequenced frames (``Outgoing``), requests awaiting their answer (``Waiter``), and
packing a run of turns into one PLAN frame (``pack_plan``, protocol version 2)."""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field

from ..motion import Motion
from .protocol import MAX_LINE, Command, next_mid


@dataclass
class Outgoing:
    """A sequenced frame, before and after it is sent. ``motions``: the steps it carries (one, several
    for a PLAN frame, none for CLEAR). A ``plannable`` TURN/PAIR may be merged into a PLAN when sent."""

    verb: str
    args: tuple[str, ...]
    motions: list[Motion] = field(default_factory=list)
    future: Future | None = None  # CLEAR: resolved on acknowledgement
    seq: int = 0
    frame: bytes = b""
    attempts: int = 0
    plannable: bool = False

    def text(self) -> str:
        return " ".join((self.verb, *self.args))


@dataclass
class Waiter:
    """A STATUS or ESTOP request awaiting its answer: first and last sent, and the frame to send again."""

    future: Future
    first: float
    last: float
    frame: bytes


def pack_plan(
    backlog: deque[Outgoing], seq: int, free: int, *, queue: int, plan_max: int, idle: bool
) -> Outgoing | None:
    """Take the longest run of plannable turns at the head of ``backlog`` that fits one PLAN frame (number
    ``seq``) and the ``free`` places of the device's ``queue``; None to wait for more room (a bigger frame)
    first. ``idle``: no motion is on the device."""
    run: list[Outgoing] = []
    for out in backlog:
        if (
            not out.plannable
            or len(run) >= plan_max
            or (run and out.motions[0].mid != next_mid(run[-1].motions[0].mid))
        ):
            break
        run.append(out)
    if idle:
        # the motors stand still: a one-turn frame starts them after the shortest time on the wire,
        # and the rest of the plan travels while that turn runs
        run = run[:1]
    # wait until a good share of the queue is free, so a long plan goes in few frames
    if free < min(len(run), max(1, queue // 2)):
        return None
    first = run[0].motions[0].mid
    tokens: list[str] = []
    length = len(f"{seq} PLAN {first}") + 6  # "*CRC\n"
    for out in run[:free]:
        token = out.motions[0].step.plan_token()
        if length + 1 + len(token) > MAX_LINE:
            break
        tokens.append(token)
        length += 1 + len(token)
    taken = [backlog.popleft() for _ in tokens]
    packed = Outgoing("PLAN", (str(first), *tokens), seq=seq, motions=[o.motions[0] for o in taken])
    packed.frame = Command(seq, packed.verb, packed.args).encode()
    return packed
