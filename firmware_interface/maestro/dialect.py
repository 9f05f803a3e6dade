"""The Pololu Maestro's compact serial protocol (clones speak it too): command bytes, replies, the
error register, the optional CRC-7 byte, and the device's command parser (used by the simulator).

A command byte has its top bit set and data bytes do not, so a receiver that lost a byte starts
afresh at the next command byte. A 14-bit value travels as two data bytes, low 7 bits first.
Replies carry no framing and no checksum: the host knows their length from the command it sent.

Units (the Maestro's own, used unchanged everywhere on the wire side of robotd):

* target and position: quarter-microseconds of servo pulse (6000 = 1500 µs); 0 = send no pulses;
* speed: 0.25 µs per 10 ms of pulse change (1 = 25 µs/s; 0 = no limit);
* acceleration: 0.25 µs per 10 ms, per 80 ms (0 = no limit; at most 255).

With "Enable CRC" set in the Maestro's serial settings every command ends in a CRC-7 byte (the
polynomial 0x91 taken least significant bit first); a command whose CRC byte is wrong is ignored and
sets the CRC error bit. Replies never carry one.
"""

from __future__ import annotations

from dataclasses import dataclass

SET_TARGET, SET_SPEED, SET_ACCEL = 0x84, 0x87, 0x89
GET_POSITION, GET_MOVING, GET_ERRORS, GO_HOME = 0x90, 0x93, 0xA1, 0xA2
STOP_SCRIPT, GET_SCRIPT_STATUS = 0xA4, 0xAE

DATA_BYTES = {
    SET_TARGET: 3,
    SET_SPEED: 3,
    SET_ACCEL: 3,
    GET_POSITION: 1,
    GET_MOVING: 0,
    GET_ERRORS: 0,
    GO_HOME: 0,
    STOP_SCRIPT: 0,
    GET_SCRIPT_STATUS: 0,
}
REPLY_BYTES = {GET_POSITION: 2, GET_MOVING: 1, GET_ERRORS: 2, GET_SCRIPT_STATUS: 1}
NAMES = {
    SET_TARGET: "set target",
    SET_SPEED: "set speed",
    SET_ACCEL: "set acceleration",
    GET_POSITION: "get position",
    GET_MOVING: "get moving state",
    GET_ERRORS: "get errors",
    GO_HOME: "go home",
    STOP_SCRIPT: "stop script",
    GET_SCRIPT_STATUS: "get script status",
}

MAX_VALUE = 0x3FFF  # 14 bits: the largest target or speed
MAX_ACCEL = 255
MAX_CHANNEL = 0x7F

# The error register: bit -> (name, what it means for a cube rig).
ERROR_BITS = {
    0: (
        "serial signal error",
        "a byte arrived without its stop bit where expected: the host's baud rate differs "
        "from the Maestro's, or noise on the serial line",
    ),
    1: ("serial overrun error", "the Maestro's UART received a byte before it had read the previous one"),
    2: ("serial buffer full", "the Maestro's serial receive buffer filled up and bytes were lost"),
    3: (
        "serial CRC error",
        "a command's CRC byte was wrong and the command was ignored: line noise, or CRC "
        "enabled on the Maestro but not on the host",
    ),
    4: (
        "serial protocol error",
        "a malformed command: a data byte where a command byte belonged, an unknown "
        "command, a command cut short by the next one, or a channel the Maestro lacks",
    ),
    5: ("serial timeout", "no valid command within the Maestro's serial timeout, so it sent every servo home"),
    6: ("script stack error", "the Maestro's script overflowed or underflowed its data stack, and stopped"),
    7: (
        "script call stack error",
        "the Maestro's script nested subroutines too deep or returned with none to return to, and stopped",
    ),
    8: ("script program counter error", "the Maestro's script jumped outside its program, and stopped"),
}
ERROR_MASK = (1 << len(ERROR_BITS)) - 1
PROTOCOL_ERROR = 1 << 4
CRC_ERROR = 1 << 3
SERIAL_ERRORS = 0x3F
SCRIPT_ERRORS = 0x1C0


def crc7(packet: bytes) -> int:
    """The Maestro's CRC-7 of a command packet (its CRC byte when CRC is enabled)."""
    crc = 0
    for byte in packet:
        crc ^= byte
        for _ in range(8):
            crc = (crc ^ 0x91) >> 1 if crc & 1 else crc >> 1
    return crc


def packet(command: int, *data: int, crc: bool = False) -> bytes:
    """One command packet: the command byte, its data bytes, and the CRC byte when ``crc``."""
    if command not in DATA_BYTES or len(data) != DATA_BYTES[command]:
        raise ValueError(f"command 0x{command:02X} takes {DATA_BYTES.get(command)} data bytes, got {len(data)}")
    if any(not 0 <= d <= 0x7F for d in data):
        raise ValueError(f"data bytes must be 0..127, got {data}")
    body = bytes((command, *data))
    return body + bytes((crc7(body),)) if crc else body


def _channel_value(command: int, channel: int, value: int, limit: int, crc: bool) -> bytes:
    if not 0 <= channel <= MAX_CHANNEL:
        raise ValueError(f"channel must be 0..{MAX_CHANNEL}, got {channel}")
    if not 0 <= value <= limit:
        raise ValueError(f"{NAMES[command]} value must be 0..{limit}, got {value}")
    return packet(command, channel, value & 0x7F, value >> 7, crc=crc)


def set_target(channel: int, target: int, *, crc: bool = False) -> bytes:
    """Set a channel's target in quarter-microseconds (0: stop sending pulses)."""
    return _channel_value(SET_TARGET, channel, target, MAX_VALUE, crc)


def set_speed(channel: int, speed: int, *, crc: bool = False) -> bytes:
    return _channel_value(SET_SPEED, channel, speed, MAX_VALUE, crc)


def set_accel(channel: int, accel: int, *, crc: bool = False) -> bytes:
    return _channel_value(SET_ACCEL, channel, accel, MAX_ACCEL, crc)


def get_position(channel: int, *, crc: bool = False) -> bytes:
    if not 0 <= channel <= MAX_CHANNEL:
        raise ValueError(f"channel must be 0..{MAX_CHANNEL}, got {channel}")
    return packet(GET_POSITION, channel, crc=crc)


def simple(command: int, *, crc: bool = False) -> bytes:
    """A command without data: GET_MOVING, GET_ERRORS, GO_HOME, STOP_SCRIPT, GET_SCRIPT_STATUS."""
    return packet(command, crc=crc)


def word(reply: bytes) -> int:
    """A two-byte reply (position, error register): little-endian."""
    return reply[0] | reply[1] << 8


def error_names(bits: int) -> list[str]:
    return [ERROR_BITS[bit][0] for bit in sorted(ERROR_BITS) if bits >> bit & 1]


def describe_errors(bits: int) -> str:
    """Every set bit of the error register, named and explained; '' when none."""
    return "; ".join(
        f"{name} (bit {bit}): {meaning}" for bit, (name, meaning) in sorted(ERROR_BITS.items()) if bits >> bit & 1
    )


def packet_size(command: int, crc: bool) -> int | None:
    """Bytes in a whole packet that starts with ``command`` (None: not a command the Maestro knows)."""
    if command not in DATA_BYTES:
        return None
    return 1 + DATA_BYTES[command] + (1 if crc else 0)


@dataclass(frozen=True)
class Command:
    """A command as the device received it."""

    code: int
    data: tuple[int, ...] = ()

    @property
    def channel(self) -> int:
        return self.data[0]

    @property
    def value(self) -> int:
        """The 14-bit value of a set target / speed / acceleration."""
        return self.data[1] | self.data[2] << 7


class CommandParser:
    """The Maestro's receiving end: bytes in, whole commands out. Malformed input sets bits in
    ``errors`` (the device's error register) as the Maestro does and is dropped."""

    def __init__(self, crc: bool = False):
        self.crc = crc
        self.errors = 0
        self._packet = bytearray()

    def reset(self) -> None:
        self._packet.clear()

    def feed(self, data: bytes) -> list[Command]:
        out = []
        for byte in data:
            command = self._take(byte)
            if command is not None:
                out.append(command)
        return out

    def _take(self, byte: int) -> Command | None:
        if byte & 0x80:
            if self._packet:  # the previous command was cut short
                self.errors |= PROTOCOL_ERROR
                self._packet.clear()
            if byte not in DATA_BYTES:
                self.errors |= PROTOCOL_ERROR
                return None
        elif not self._packet:  # a data byte where a command byte belonged
            self.errors |= PROTOCOL_ERROR
            return None
        self._packet.append(byte)
        if len(self._packet) < (packet_size(self._packet[0], self.crc) or 0):
            return None
        whole = bytes(self._packet)
        self._packet.clear()
        if self.crc:
            if crc7(whole[:-1]) != whole[-1]:
                self.errors |= CRC_ERROR
                return None
            whole = whole[:-1]
        return Command(whole[0], tuple(whole[1:]))
