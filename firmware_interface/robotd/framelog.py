"""The traffic log: one line per frame or event, written by the link and read by ``decode``.

Format (text, one entry per line)::

    # robotd serial log 1 port=/dev/ttyACM0 started=2025-05-01T10:00:00
    0.004211 > HELLO proto=1 session=3F2A9C01 seq=4711*8E0B
    0.006032 < HELLO session=3F2A9C01 proto=1 ...*1C2D
    0.031500 ! retransmit #4712..#4715 after timeout

Each entry: seconds since the link was created (6 decimals), a direction
(``>`` host to device, ``<`` device to host, ``!`` a note from the link),
then the line exactly as on the wire without its newline; bytes outside
printable ASCII and the backslash are written ``\\xNN``; a line longer than
``MAX_ENTRY_BYTES`` (no frame is) keeps its start and says how many bytes
were left out, and a note is cut at ``MAX_NOTE_CHARS``, so that an entry
is never longer than ``MAX_ENTRY_CHARS``. Lines starting with ``#`` are
comments. ``describe`` explains one frame in words; ``TrafficLog`` keeps
the ring of recent entries the link dumps with a fault, and the trace;
``LogLimits`` bounds what they take on disk.
"""

from __future__ import annotations

import os
import re
import time
from collections import deque
from dataclasses import dataclass
from datetime import datetime

from ..errors import ConfigError
from ..fault_logs import FaultLogs
from ..tracefile import TraceFile
from .framing import MAX_LINE
from .protocol import (
    ERROR_CODES,
    Ack,
    Boot,
    Command,
    DecodeError,
    Done,
    Estop,
    EstopReply,
    FaultReport,
    Hello,
    HelloReply,
    Nak,
    Ping,
    Rej,
    Report,
    StatusQuery,
    Text,
    decode_line,
    parse_device,
    parse_host,
)

HEADER = "# robotd serial log 1"
MAX_ENTRY_BYTES = MAX_LINE  # of one line on the wire (a frame is never longer): bounds dumps and traces
MAX_NOTE_CHARS = 4 * MAX_ENTRY_BYTES
MAX_ENTRY_CHARS = 64 + 4 * MAX_ENTRY_BYTES
DIRECTIONS = {">": "host>dev", "<": "dev>host", "!": "note"}
_ENTRY = re.compile(r"(\d+\.\d+) ([<>!]) ?(.*)\Z")
_ESCAPE = re.compile(r"\\x([0-9A-Fa-f]{2})")


def escape(raw: bytes) -> str:
    return "".join(chr(b) if 0x20 <= b <= 0x7E and b != 0x5C else f"\\x{b:02X}" for b in raw)


def unescape(text: str) -> bytes:
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text).encode("latin-1")


def format_entry(seconds: float, direction: str, raw: bytes | str) -> str:
    if isinstance(raw, str):
        body = raw if len(raw) <= MAX_NOTE_CHARS else raw[:MAX_NOTE_CHARS] + " [cut]"
    elif len(raw) > MAX_ENTRY_BYTES:
        body = f"{escape(raw[:MAX_ENTRY_BYTES])} [{len(raw) - MAX_ENTRY_BYTES} more bytes not logged]"
    else:
        body = escape(raw)
    return f"{seconds:.6f} {direction} {body}"


def parse_entry(line: str) -> tuple[float | None, str | None, bytes] | None:
    """A log line → (seconds, direction, raw bytes); a line that is no log entry is taken as a
    raw frame of unknown time and direction (so a plain capture decodes too); None for comments."""
    line = line.rstrip("\r\n")
    if not line.strip() or line.startswith("# "):
        return None
    match = _ENTRY.match(line)
    if match is None:
        return None, None, line.encode("latin-1", "replace")
    seconds, direction, text = match.groups()
    return float(seconds), direction, unescape(text) if direction != "!" else text.encode("latin-1", "replace")


def _fault_words(code: str) -> str:
    return f"{code} ({ERROR_CODES.get(code, 'unknown code')})"


def _host_words(m) -> str:
    if isinstance(m, Hello):
        return f"HELLO     open session {m.session}, protocol {m.proto}, first frame #{m.seq}"
    if isinstance(m, Command):
        what = f" motion {m.args[0]}" if m.args else ""
        rest = f": {' '.join(m.args[1:])}" if len(m.args) > 1 else ""
        return f"{m.verb:<9} #{m.seq}{what}{rest}"
    if isinstance(m, Ping):
        return f"PING      host heartbeat {m.token}"
    if isinstance(m, StatusQuery):
        return f"STATUS?   query {m.token}"
    if isinstance(m, Estop):
        return f"ESTOP     emergency stop request {m.token}"
    return str(m)


def _device_words(m) -> str:
    if isinstance(m, Boot):
        return f"BOOT      device reset: boot id {m.boot}, firmware {m.fw}, protocol {m.proto}"
    if isinstance(m, HelloReply):
        motors = ",".join(m.motors or ())
        return (
            f"HELLO     session {m.session}, protocol {m.proto}, firmware {m.fw}, rig {m.rig} [{motors}], "
            f"boot {m.boot}, window {m.window}, queue {m.queue}, fault {m.fault}"
            + (f", plan {m.plan}, rate {m.rate}" if m.plan is not None else "")
        )
    if isinstance(m, Ack):
        return f"ACK       received through #{m.seq}"
    if isinstance(m, Nak):
        return f"NAK       resend from #{m.expected}: {_fault_words(m.code)}"
    if isinstance(m, Rej):
        return f"REJ       #{m.seq} refused: {_fault_words(m.code)} {m.detail}".rstrip()
    if isinstance(m, Done):
        return f"DONE      motion {m.mid} finished"
    if isinstance(m, FaultReport):
        where = " ".join(f"{k} {v}" for k, v in (("motion", m.mid), ("frame #", m.seq), ("motor", m.motor)) if v)
        return f"FAULT     {_fault_words(m.code)} {where}; done through motion {m.done}".replace("# ", "#")
    if isinstance(m, Report):
        head = "HB       " if m.token is None else f"STATUS {m.token:<3}"
        fault = "" if m.fault == "NONE" else f", fault {_fault_words(m.fault)}"
        return f"{head} {m.state}, boot {m.boot}, received #{m.rx}, done motion {m.done}, {m.q} queued{fault}"
    if isinstance(m, EstopReply):
        return f"ESTOP     stopped ({m.token}); done through motion {m.done}"
    return str(m)


def describe(direction: str | None, raw: bytes) -> str:
    """One line in words: what the frame says, or why it could not be read."""
    item = decode_line(raw.rstrip(b"\n"))
    if item is None:
        return "(empty line)"
    if isinstance(item, Text):
        return f"TEXT      {item.text}"
    if isinstance(item, DecodeError):
        return f"BAD       {item.code}: {item}"
    if direction == ">":
        host = parse_host(item)
        return f"BAD       {host}" if isinstance(host, DecodeError) else _host_words(host)
    device = parse_device(item)
    if direction == "<":
        return f"BAD       {device}" if isinstance(device, DecodeError) else _device_words(device)
    if isinstance(device, DecodeError):  # unknown direction: try both
        host = parse_host(item)
        return f"BAD       {host}" if isinstance(host, DecodeError) else _host_words(host)
    return _device_words(device)


@dataclass(frozen=True)
class LogLimits:
    """What the link may keep on disk: the trace, rotated at ``trace_max_bytes`` with ``trace_backups`` older
    files, and the newest ``fault_logs`` fault dumps (0: none written)."""

    trace_max_bytes: int = 10 * 1024 * 1024
    trace_backups: int = 4
    fault_logs: int = 50

    def __post_init__(self):
        for name, least in (("trace_max_bytes", 1024), ("trace_backups", 1), ("fault_logs", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ConfigError(f"{name} must be a whole number >= {least}, got {value!r}")

    @property
    def trace_ceiling_bytes(self) -> int:
        return (self.trace_backups + 1) * self.trace_max_bytes


class TrafficLog:
    """The last ``size`` frames each way and the link's notes, plus an optional trace of everything."""

    def __init__(self, size: int = 100, trace_path: str | os.PathLike | None = None, limits: LogLimits = LogLimits()):
        self._t0 = time.monotonic()
        self._rings: dict[str, deque[str]] = {d: deque(maxlen=size) for d in DIRECTIONS}
        self._trace_path = trace_path
        self._trace: TraceFile | None = None
        self.limits = limits

    def open_trace(self, port: str) -> None:
        """Start appending to the trace file, if one was asked for."""
        if self._trace_path is not None and self._trace is None:
            header = f"{HEADER} port={port} started={datetime.now().isoformat(timespec='seconds')}"
            self._trace = TraceFile(self._trace_path, header, self.limits.trace_max_bytes, self.limits.trace_backups)

    def add(self, direction: str, raw: bytes | str, now: float) -> None:
        entry = format_entry(now - self._t0, direction, raw)
        self._rings[direction].append(entry)
        if self._trace is not None:
            self._trace.write(entry)

    def dump(self) -> list[str]:
        """The ring, oldest first, in the log format."""
        entries = [e for ring in self._rings.values() for e in ring]
        return sorted(entries, key=lambda e: float(e.split(" ", 1)[0]))

    def save(self, folder: str | os.PathLike, port: str, what: str) -> str | None:
        """Write the ring to a new file in ``folder``, keeping the newest ``limits.fault_logs`` there; its path,
        or None when none are kept."""
        text = f"{HEADER} port={port} fault={what}\n" + "".join(e + "\n" for e in self.dump())
        return FaultLogs(folder, self.limits.fault_logs).save(text)

    def close(self) -> None:
        if self._trace is not None:
            self._trace.close()
            self._trace = None
