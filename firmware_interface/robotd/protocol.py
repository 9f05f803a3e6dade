"""Wire protocol (versions 1 and 2) between robotd and the motor firmware: pure encode/decode, no I/O.

Messages of each direction as dataclasses with ``encode()``; ``parse_host``
and ``parse_device`` turn a ``Frame`` (see ``framing``) into a message or a
``DecodeError``. None of them raises on bad input, whatever the bytes.
docs/protocol.md has the whole specification.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .framing import (  # noqa: F401
    MAX_LINE,
    SEQ_MOD,
    DecodeError,
    Decoder,
    Frame,
    Text,
    crc16,
    decode_line,
    encode_frame,
    next_mid,
    seq_add,
    seq_diff,
)

PROTOCOL_VERSION = 3  # the highest version spoken here
PROTOCOL_VERSIONS = (1, 2, 3)  # every version spoken here (host and reference device)
NO_FAULT = "NONE"
STATES = ("IDLE", "READY", "RUN", "FAULT")

ERROR_CODES = {
    # answers to a frame that could not be taken (NAK: not received, send again)
    "CRC": "checksum mismatch",
    "FRAME": "malformed frame",
    "LONG": "line longer than the frame limit",
    "SEQ": "sequence gap: an earlier frame was lost",
    # answers to a frame that was received but refused (REJ), and motion faults (FAULT)
    "NOSESSION": "no session open: the device expects HELLO first",
    "BADCMD": "unknown command",
    "BADARG": "bad argument",
    "QFULL": "motion queue full",
    "FAULTED": "device is faulted: CLEAR first",
    "STALL": "motor stalled",
    "LIMIT": "limit or home switch",
    "DISABLED": "motor not enabled",
    "DRIVER": "motor driver fault",
    "ESTOP": "emergency stop",
    "HOSTLOST": "host heartbeat lost",
}

_U16 = re.compile(r"[+-]?[0-9]{1,5}\Z")
_HEX8 = re.compile(r"[0-9A-Fa-f]{8}\Z")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.+/-]{0,23}\Z")


# ---------------------------------------------------------------- field helpers


class _Bad(Exception):
    """Internal: a field did not parse; turned into a DecodeError before leaving this module."""


def _u16(text: str, what: str) -> int:
    if not _U16.match(text) or not 0 <= int(text) < SEQ_MOD:
        raise _Bad(f"{what} {text!r} is not a number 0..65535")
    return int(text)


def _hex8(text: str, what: str) -> str:
    if not _HEX8.match(text):
        raise _Bad(f"{what} {text!r} is not 8 hex digits")
    return text.upper()


def _name(text: str, what: str) -> str:
    if not _NAME.match(text):
        raise _Bad(f"{what} {text!r} is not a name")
    return text


def _state(text: str, what: str) -> str:
    if text not in STATES:
        raise _Bad(f"{what} {text!r} is not one of {'/'.join(STATES)}")
    return text


def _code(text: str, what: str) -> str:
    if text != NO_FAULT and not text.isalnum():
        raise _Bad(f"{what} {text!r} is not an error code")
    return text


def _motors(text: str, what: str) -> tuple[str, ...]:
    if text == "-":
        return ()
    return tuple(_name(m, what) for m in text.split(","))


def _fields(tokens: list[str], required: dict, optional: dict) -> dict:
    """Parse ``key=value`` tokens; unknown keys are ignored (newer firmware may add some)."""
    found: dict = {}
    for token in tokens:
        key, eq, value = token.partition("=")
        if not eq or not key:
            raise _Bad(f"{token!r} is not key=value")
        if key in found:
            raise _Bad(f"field {key!r} given twice")
        convert = required.get(key) or optional.get(key)
        if convert is not None:
            found[key] = convert(value, key)
    missing = [k for k in required if k not in found]
    if missing:
        raise _Bad(f"missing field {missing[0]!r}")
    return {key: found.get(key) for key in (*required, *optional)}


def _kv(fields: dict) -> str:
    return " ".join(f"{k}={','.join(v) if isinstance(v, tuple) else v}" for k, v in fields.items() if v is not None)


# ---------------------------------------------------------------- host → device


@dataclass(frozen=True)
class Hello:
    """Opens a session; ``seq`` is the first sequence number the host will use."""

    proto: int
    session: str
    seq: int

    def encode(self) -> bytes:
        return encode_frame(f"HELLO proto={self.proto} session={self.session} seq={self.seq}")


@dataclass(frozen=True)
class Command:
    """A sequenced command: ``verb`` and its arguments, checked by ``parse_step`` on the device."""

    seq: int
    verb: str
    args: tuple[str, ...] = ()

    def encode(self) -> bytes:
        return encode_frame(" ".join((str(self.seq), self.verb, *self.args)))


@dataclass(frozen=True)
class Ping:
    """Host heartbeat; needs no answer."""

    token: int

    def encode(self) -> bytes:
        return encode_frame(f"PING {self.token}")


@dataclass(frozen=True)
class StatusQuery:
    token: int

    def encode(self) -> bytes:
        return encode_frame(f"STATUS {self.token}")


@dataclass(frozen=True)
class Estop:
    token: int

    def encode(self) -> bytes:
        return encode_frame(f"ESTOP {self.token}")


_TOKEN_MESSAGES: dict[str, type[Ping | StatusQuery | Estop]] = {"PING": Ping, "STATUS": StatusQuery, "ESTOP": Estop}

HostMessage = Hello | Command | Ping | StatusQuery | Estop


def parse_host(frame: Frame) -> HostMessage | DecodeError:
    """A frame sent by the host → message (the device's view); never raises."""
    tokens = frame.tokens
    try:
        head = tokens[0]
        if head[:1].isdigit():
            if len(tokens) < 2:
                raise _Bad("sequenced frame without a command")
            return Command(_u16(head, "sequence number"), tokens[1], tuple(tokens[2:]))
        if head in _TOKEN_MESSAGES:
            if len(tokens) != 2:
                raise _Bad(f"{head} takes one token")
            return _TOKEN_MESSAGES[head](_u16(tokens[1], "token"))
        if head == "HELLO":
            f = _fields(tokens[1:], {"proto": _u16, "session": _hex8, "seq": _u16}, {})
            return Hello(f["proto"], f["session"], f["seq"])
        raise _Bad(f"unknown host frame {head!r}")
    except _Bad as bad:
        return DecodeError("FRAME", str(bad), frame.raw)


# ---------------------------------------------------------------- device → host


@dataclass(frozen=True)
class Boot:
    """Sent once after every reset."""

    proto: int
    fw: str
    boot: str

    def encode(self) -> bytes:
        return encode_frame(f"BOOT proto={self.proto} fw={self.fw} boot={self.boot}")


@dataclass(frozen=True)
class HelloReply:
    """Answer to HELLO. A device that does not speak the host's version answers with its own
    ``proto`` and opens no session; the other fields may then be missing. ``plan`` (most turns
    per PLAN frame) and ``rate`` (highest step rate, steps/s) come with a version-2 session."""

    session: str
    proto: int
    fw: str | None = None
    rig: str | None = None
    motors: tuple[str, ...] | None = None
    boot: str | None = None
    window: int | None = None
    queue: int | None = None
    hb: int | None = None
    watchdog: int | None = None
    fault: str | None = None
    plan: int | None = None
    rate: int | None = None

    def encode(self) -> bytes:
        return encode_frame("HELLO " + _kv(self.__dict__))


@dataclass(frozen=True)
class Ack:
    """Every sequenced frame up to and including ``seq`` was received and accepted."""

    seq: int

    def encode(self) -> bytes:
        return encode_frame(f"ACK {self.seq}")


@dataclass(frozen=True)
class Rej:
    """Frame ``seq`` was received but refused (the device is now faulted); earlier ones were received."""

    seq: int
    code: str
    detail: str = ""

    def encode(self) -> bytes:
        return encode_frame(" ".join(filter(None, ("REJ", str(self.seq), self.code, self.detail[:100]))))


@dataclass(frozen=True)
class Nak:
    """A frame was lost or damaged; the device expects sequence number ``expected`` next."""

    expected: int
    code: str

    def encode(self) -> bytes:
        return encode_frame(f"NAK {self.expected} {self.code}")


@dataclass(frozen=True)
class Done:
    """Motion ``mid`` and every motion queued before it have finished."""

    mid: int

    def encode(self) -> bytes:
        return encode_frame(f"DONE {self.mid}")


@dataclass(frozen=True)
class FaultReport:
    """The device latched a fault, stopped its motors and emptied its queue."""

    code: str
    done: int
    mid: int | None = None
    seq: int | None = None
    motor: str | None = None

    def encode(self) -> bytes:
        return encode_frame(
            f"FAULT {self.code} " + _kv({"done": self.done, "mid": self.mid, "seq": self.seq, "motor": self.motor})
        )


@dataclass(frozen=True)
class Report:
    """Device state: ``HB`` (unprompted heartbeat, ``token`` None) or the answer to ``STATUS token``."""

    token: int | None
    boot: str
    state: str
    rx: int
    done: int
    q: int
    fault: str
    fmid: int | None = None
    fseq: int | None = None
    en: tuple[str, ...] | None = None
    speed: int | None = None

    def encode(self) -> bytes:
        head = "HB" if self.token is None else f"STATUS {self.token}"
        fields = {k: v for k, v in self.__dict__.items() if k != "token"}
        if fields["en"] == ():
            fields["en"] = "-"
        return encode_frame(f"{head} {_kv(fields)}")


@dataclass(frozen=True)
class EstopReply:
    """The emergency stop took effect; ``done`` is the last motion finished before it."""

    token: int
    done: int

    def encode(self) -> bytes:
        return encode_frame(f"ESTOP {self.token} done={self.done}")


DeviceMessage = Boot | HelloReply | Ack | Rej | Nak | Done | FaultReport | Report | EstopReply

_REPORT_REQUIRED = {"boot": _hex8, "state": _state, "rx": _u16, "done": _u16, "q": _u16, "fault": _code}
_REPORT_OPTIONAL = {"fmid": _u16, "fseq": _u16, "en": _motors, "speed": _u16}
_HELLO_OPTIONAL = {
    "fw": _name,
    "rig": _name,
    "motors": _motors,
    "boot": _hex8,
    "window": _u16,
    "queue": _u16,
    "hb": _u16,
    "watchdog": _u16,
    "fault": _code,
    "plan": _u16,
    "rate": _u16,
}


def _parse_device_tokens(head: str, rest: list[str]) -> DeviceMessage:
    if head == "ACK" and len(rest) == 1:
        return Ack(_u16(rest[0], "sequence number"))
    if head == "NAK" and len(rest) == 2:
        return Nak(_u16(rest[0], "sequence number"), _code(rest[1], "error code"))
    if head == "REJ" and len(rest) >= 2:
        return Rej(_u16(rest[0], "sequence number"), _code(rest[1], "error code"), " ".join(rest[2:]))
    if head == "DONE" and len(rest) == 1:
        return Done(_u16(rest[0], "motion id"))
    if head == "HB":
        return Report(None, **_fields(rest, _REPORT_REQUIRED, _REPORT_OPTIONAL))
    if head == "STATUS" and rest:
        return Report(_u16(rest[0], "token"), **_fields(rest[1:], _REPORT_REQUIRED, _REPORT_OPTIONAL))
    if head == "ESTOP" and rest:
        return EstopReply(_u16(rest[0], "token"), **_fields(rest[1:], {"done": _u16}, {}))
    if head == "FAULT" and rest:
        f = _fields(rest[1:], {"done": _u16}, {"mid": _u16, "seq": _u16, "motor": _name})
        return FaultReport(_code(rest[0], "error code"), **f)
    if head == "BOOT":
        return Boot(**_fields(rest, {"proto": _u16, "fw": _name, "boot": _hex8}, {}))
    if head == "HELLO":
        return HelloReply(**_fields(rest, {"session": _hex8, "proto": _u16}, _HELLO_OPTIONAL))
    raise _Bad(f"unknown device frame {head!r} with {len(rest)} argument(s)")


def parse_device(frame: Frame) -> DeviceMessage | DecodeError:
    """A frame sent by the device → message (the host's view); never raises."""
    tokens = frame.tokens
    try:
        return _parse_device_tokens(tokens[0], tokens[1:])
    except _Bad as bad:
        return DecodeError("FRAME", str(bad), frame.raw)
