"""Opening a session: ``Handshake``, one greeting of the device by ``RigLink.connect``.

HELLO asks for version 2 and is repeated every ``hello_interval`` until the
device answers (at once after its BOOT: it just started). A version-1
device answers ``proto=1`` without a session; it is greeted again at once
with ``proto=1``. Whatever else is heard meanwhile is counted, and a sample
kept, to say what the port carries if no answer comes.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future

from ..errors import HandshakeError, ProtocolVersionError
from ..motion import settle_after
from .framelog import TrafficLog
from .protocol import PROTOCOL_VERSION, PROTOCOL_VERSIONS, Boot, Hello, HelloReply
from .timing import LinkTiming


class Handshake:
    """The state of one greeting; the link calls it under its lock. ``future`` resolves to the HelloReply."""

    def __init__(
        self,
        session: str,
        first_seq: int,
        now: float,
        timing: LinkTiming,
        port: str,
        traffic: TrafficLog,
        after: list[Callable[[], None]],
    ):
        """``traffic``: the link's log, for notes and for the errors; ``after``: where results are queued."""
        self.session, self.first_seq = session, first_seq
        self.timing, self.port, self.traffic, self.after = timing, port, traffic, after
        self.future: Future[HelloReply] = Future()
        self.asked = PROTOCOL_VERSION  # the version the current HELLO asks for
        self.frame = Hello(PROTOCOL_VERSION, session, first_seq).encode()
        self.due = now
        self.heard_count = 0
        self.samples: list[str] = []

    def repeat(self, now: float) -> bytes | None:
        """The HELLO frame if it is due now (the next is due ``hello_interval`` later), else None."""
        if self.future.done() or now < self.due:
            return None
        self.due = now + self.timing.hello_interval
        return self.frame

    def heard(self, raw: bytes) -> None:
        """Something that is no answer: counted, and the first few kept for the error."""
        self.heard_count += 1
        if len(self.samples) < 3:
            self.samples.append(raw[:60].decode("ascii", "backslashreplace"))

    def on_message(self, msg, raw: bytes, now: float) -> None:
        if isinstance(msg, HelloReply) and msg.session == self.session:
            if msg.boot is None and msg.proto in PROTOCOL_VERSIONS and msg.proto < self.asked:
                # an older device, no session opened: greet it again at once in its version
                note = f"the device speaks protocol {msg.proto}: greeting it again with proto={msg.proto}"
                self.traffic.add("!", note, now)
                self.asked = msg.proto
                self.frame = Hello(msg.proto, self.session, self.first_seq).encode()
                self.due = now
                return
            if msg.boot is None and msg.proto == self.asked < PROTOCOL_VERSION:
                return  # the same "I speak version N" answering a HELLO sent before we switched to N
            settle_after(self.after, self.future, msg)
        elif isinstance(msg, Boot):
            self.due = now  # it just booted: greet it at once
        else:
            self.heard(raw)

    def fail(self, err: BaseException) -> None:
        settle_after(self.after, self.future, error=err)

    def timeout_error(self) -> HandshakeError:
        wait, baud = self.timing.boot_timeout, self.timing.baudrate
        if not self.heard_count:
            why = f"nothing received (wrong port, firmware not running, or not {baud} baud?)"
        else:
            why = (
                f"received {self.heard_count} line(s) but no protocol handshake, e.g. {self.samples[0]!r} "
                f"(other firmware, or not {baud} baud?)"
            )
        return HandshakeError(f"no answer to HELLO within {wait} s: {why}", port=self.port, log=self.traffic.dump())

    def check(self, reply: HelloReply) -> None:
        """Raise ``ProtocolVersionError`` or ``HandshakeError`` unless ``reply`` opens a session here."""
        spoken = (
            "version 1"
            if len(PROTOCOL_VERSIONS) == 1
            else f"versions {PROTOCOL_VERSIONS[0]} to {PROTOCOL_VERSIONS[-1]}"
        )
        if reply.proto not in PROTOCOL_VERSIONS or reply.proto != self.asked:
            raise ProtocolVersionError(
                f"the device speaks protocol version {reply.proto} (firmware {reply.fw or 'unknown'}), this host "
                f"speaks {spoken}: flash matching firmware or update robotd",
                port=self.port,
                log=self.traffic.dump(),
            )
        needed: tuple[str, ...] = ("fw", "rig", "motors", "boot", "window", "queue", "hb", "watchdog", "fault")
        needed += ("plan", "rate") if reply.proto >= 2 else ()
        missing = [k for k in needed if getattr(reply, k) is None]
        if missing:
            raise HandshakeError(
                f"the handshake reply lacks {', '.join(missing)}", port=self.port, log=self.traffic.dump()
            )
