"""Framing of protocol v1: CRC-16, one frame per line, and a decoder that never raises.

A frame is ``BODY*CRC\\n``: BODY is printable ASCII without ``*``, CRC is the
CRC-16/CCITT-FALSE of BODY as four hex digits. ``Decoder.feed`` turns any
byte string into ``Frame``, ``Text`` (``#`` lines) and ``DecodeError`` items.
"""

from __future__ import annotations

import binascii
from dataclasses import dataclass

MAX_LINE = 200  # bytes of one frame, terminator included
SEQ_MOD = 65536  # sequence numbers are 16-bit and wrap


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor); check 0x29B1."""
    return binascii.crc_hqx(data, 0xFFFF)


def encode_frame(body: str) -> bytes:
    """``body`` plus ``*`` and its CRC, terminated by a newline.

    The body is produced by this package, so a bad one is a programming error
    (ValueError), not a decode error.
    """
    data = body.encode("ascii")
    if (
        not data
        or any(b < 0x20 or b > 0x7E or b == 0x2A for b in data)
        or b"  " in data
        or data[:1] == b" "
        or data[-1:] == b" "
    ):
        raise ValueError(f"frame body must be printable ASCII without '*' or double spaces: {body!r}")
    frame = data + b"*%04X\n" % crc16(data)
    if len(frame) > MAX_LINE:
        raise ValueError(f"frame of {len(frame)} bytes exceeds the {MAX_LINE}-byte limit: {body!r}")
    return frame


def seq_add(seq: int, n: int) -> int:
    return (seq + n) % SEQ_MOD


def seq_diff(a: int, b: int) -> int:
    """``a - b`` in serial-number arithmetic: 0..32767 ahead, negative behind."""
    d = (a - b) % SEQ_MOD
    return d - SEQ_MOD if d >= SEQ_MOD // 2 else d


def next_mid(mid: int) -> int:
    """Motion ids run 1..65535 and wrap back to 1 (0 means "none")."""
    return mid % 65535 + 1


@dataclass(frozen=True)
class Frame:
    """A line whose checksum matched; ``tokens`` are its space-separated words."""

    body: str
    raw: bytes

    @property
    def tokens(self) -> list[str]:
        return self.body.split(" ")


@dataclass(frozen=True)
class Text:
    """A ``#`` line: free text from the firmware (debug output), carries no checksum."""

    text: str
    raw: bytes


@dataclass(frozen=True)
class DecodeError:
    """A line (or frame) that could not be understood; ``code`` is an error code (CRC, FRAME, LONG)."""

    code: str
    detail: str
    raw: bytes

    def __str__(self) -> str:
        shown = self.raw[:60].decode("ascii", "backslashreplace")
        return f"{self.detail} in {shown!r}{'...' if len(self.raw) > 60 else ''}"


def decode_line(line: bytes) -> Frame | Text | DecodeError | None:
    """One line (without its newline) → frame, text, decode error, or None for an empty line."""
    if line.endswith(b"\r"):
        line = line[:-1]
    if not line:
        return None
    if line[:1] == b"#":
        return Text(line[1:].decode("ascii", "replace").strip(), line)
    for column, byte in enumerate(line, 1):
        if byte < 0x20 or byte > 0x7E:
            return DecodeError("FRAME", f"byte 0x{byte:02X} at column {column} is not printable ASCII", line)
    body, star, crc_text = line.rpartition(b"*")
    if not star:
        return DecodeError("FRAME", "no '*' before a checksum", line)
    if len(crc_text) != 4 or not all(c in b"0123456789ABCDEFabcdef" for c in crc_text):
        return DecodeError("FRAME", f"checksum {crc_text[:8]!r} is not 4 hex digits", line)
    if not body or b"*" in body or b"  " in body or body[:1] == b" " or body[-1:] == b" ":
        return DecodeError("FRAME", "empty body, stray '*' or bad spacing", line)
    expected = crc16(body)
    if int(crc_text, 16) != expected:
        return DecodeError("CRC", f"checksum {crc_text.decode()} does not match the body ({expected:04X})", line)
    return Frame(body.decode("ascii"), line)


class Decoder:
    """Splits a byte stream into lines and decodes each; keeps an unfinished line for the next feed."""

    def __init__(self, max_line: int = MAX_LINE):
        self.max_line = max_line
        self._buf = bytearray()
        self._overflow = False

    def feed(self, data: bytes) -> list[Frame | Text | DecodeError]:
        out: list[Frame | Text | DecodeError] = []
        self._buf += data
        while True:
            end = self._buf.find(b"\n")
            if end < 0:
                break
            line = bytes(self._buf[:end])
            del self._buf[: end + 1]
            if self._overflow:
                self._overflow = False
                out.append(DecodeError("LONG", f"line longer than {self.max_line} bytes", line[-self.max_line :]))
                continue
            if len(line) + 1 > self.max_line:
                out.append(DecodeError("LONG", f"line of {len(line) + 1} bytes, limit {self.max_line}", line))
                continue
            item = decode_line(line)
            if item is not None:
                out.append(item)
        if len(self._buf) >= self.max_line:  # no newline in sight: drop until the next one
            self._overflow = True
            del self._buf[:]
        return out

    def pending(self) -> bytes:
        """Bytes of a line not finished yet."""
        return bytes(self._buf)
