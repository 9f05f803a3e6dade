"""Protocol v1: framing, checksums, message round trips, the decoder under fuzzing, and the device's rules."""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware_interface.errors import ConfigError
from firmware_interface.robotd.device import Firmware, MotorTiming
from firmware_interface.robotd.framelog import describe, escape, format_entry, parse_entry, unescape
from firmware_interface.robotd.protocol import (
    MAX_LINE,
    Ack,
    Boot,
    Command,
    DecodeError,
    Decoder,
    Done,
    Estop,
    EstopReply,
    FaultReport,
    Frame,
    Hello,
    HelloReply,
    Nak,
    Ping,
    Rej,
    Report,
    StatusQuery,
    Text,
    crc16,
    encode_frame,
    parse_device,
    parse_host,
    seq_add,
    seq_diff,
)
from firmware_interface.robotd.step_parser import parse_step
from firmware_interface.steps import SIX_AXIS, Step
from firmware_interface.virtual_cube import VirtualCube
from solver import apply
from solver.puzzles.cube.cubie import solved_facelets

FUZZ = settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


def decode_one(frame: bytes):
    items = Decoder().feed(frame)
    assert len(items) == 1, items
    return items[0]


# ---------------------------------------------------------------- framing


def test_crc_is_ccitt_false_with_its_check_value():
    assert crc16(b"123456789") == 0x29B1
    assert crc16(b"") == 0xFFFF


def test_frame_layout():
    assert encode_frame("STATUS 1") == b"STATUS 1*448E\n"
    assert decode_one(b"STATUS 1*448e\r\n") == Frame("STATUS 1", b"STATUS 1*448e")


@pytest.mark.parametrize("body", ["", "A  B", " A", "A*B", "caf\u00e9", "x" * MAX_LINE])
def test_encoder_refuses_bodies_it_cannot_send(body):
    with pytest.raises(ValueError):
        encode_frame(body)


@pytest.mark.parametrize(
    "line,code,words",
    [
        (b"STATUS 1*448F\n", "CRC", "does not match"),
        (b"STATUS 1\n", "FRAME", "no '*'"),
        (b"STATUS 1*44\n", "FRAME", "4 hex digits"),
        (b"STATUS\x00 1*448E\n", "FRAME", "column 7"),
        (b"STATUS  1*448E\n", "FRAME", "spacing"),
        (b"A" * 250 + b"\n", "LONG", "251 bytes"),
    ],
)
def test_damaged_lines_are_decode_errors(line, code, words):
    item = decode_one(line)
    assert isinstance(item, DecodeError) and item.code == code and words in str(item)


def test_text_lines_and_empty_lines():
    items = Decoder().feed(b"\n\r\n# motor U: 200 steps\nACK 5*" + b"%04X" % crc16(b"ACK 5") + b"\n")
    assert isinstance(items[0], Text) and items[0].text == "motor U: 200 steps"
    assert parse_device(items[1]) == Ack(5)


def test_decoder_recovers_after_a_line_without_newline():
    decoder = Decoder()
    assert decoder.feed(b"x" * (MAX_LINE + 10)) == []
    items = decoder.feed(b"yyy\n" + Ack(7).encode())
    assert [type(i).__name__ for i in items] == ["DecodeError", "Frame"]
    assert items[0].code == "LONG" and parse_device(items[1]) == Ack(7)


# ---------------------------------------------------------------- messages

u16 = st.integers(0, 65535)
mid = st.integers(1, 65535)
hex8 = st.integers(0, 2**32 - 1).map(lambda n: f"{n:08X}")
code = st.sampled_from(["CRC", "SEQ", "STALL", "LIMIT", "ESTOP", "HOSTLOST", "QFULL", "BADARG"])
motor = st.sampled_from("URFDLB")
name = st.from_regex(r"[A-Za-z][A-Za-z0-9_.+/-]{0,15}", fullmatch=True)

host_messages = st.one_of(
    st.builds(Hello, u16, hex8, u16),
    st.builds(Ping, u16),
    st.builds(StatusQuery, u16),
    st.builds(Estop, u16),
    st.builds(
        Command,
        u16,
        st.sampled_from(["TURN", "PAIR", "HOME", "CLEAR", "SPIN", "MOTOR", "PLAN", "JOG"]),
        st.lists(st.from_regex(r"[!-)+-~]{1,6}", fullmatch=True), max_size=4).map(tuple),
    ),
)
device_messages = st.one_of(
    st.builds(Boot, u16, name, hex8),
    st.builds(
        HelloReply,
        hex8,
        u16,
        name,
        name,
        st.lists(motor, min_size=1, max_size=6).map(tuple),
        hex8,
        u16,
        u16,
        u16,
        u16,
        st.sampled_from(["NONE", "STALL"]),
    ),
    st.builds(HelloReply, hex8, u16, name),
    st.builds(
        HelloReply,
        hex8,
        st.just(2),
        name,
        name,
        st.lists(motor, min_size=1, max_size=6).map(tuple),
        hex8,
        u16,
        u16,
        u16,
        u16,
        st.sampled_from(["NONE", "STALL"]),
        st.integers(8, 64),
        u16,
    ),
    st.builds(Ack, u16),
    st.builds(Nak, u16, code),
    st.builds(Done, u16),
    st.builds(Rej, u16, code, st.sampled_from(["", "unknown motor 'X'", "8 steps queued"])),
    st.builds(FaultReport, code, u16, st.none() | mid, st.none() | u16, st.none() | motor),
    st.builds(
        Report,
        st.none() | u16,
        hex8,
        st.sampled_from(["IDLE", "READY", "RUN", "FAULT"]),
        u16,
        u16,
        u16,
        st.sampled_from(["NONE", "STALL"]),
        st.none() | mid,
        st.none() | u16,
    ),
    st.builds(
        Report,
        u16,
        hex8,
        st.just("RUN"),
        u16,
        u16,
        u16,
        st.just("NONE"),
        st.none(),
        st.none(),
        st.lists(motor, max_size=6, unique=True).map(tuple),
        st.integers(20, 10000),
    ),
    st.builds(EstopReply, u16, u16),
)


@settings(database=None)
@given(host_messages)
def test_host_messages_round_trip(message):
    assert parse_host(decode_one(message.encode())) == message


@settings(database=None)
@given(device_messages)
def test_device_messages_round_trip(message):
    assert parse_device(decode_one(message.encode())) == message


def test_unknown_fields_are_ignored_and_missing_ones_refused():
    body = "HB boot=0000ABCD state=RUN rx=3 done=2 q=1 fault=NONE temp=41"
    assert isinstance(parse_device(decode_one(encode_frame(body))), Report)
    bad = parse_device(decode_one(encode_frame("HB boot=0000ABCD state=RUN rx=3 done=2 q=1")))
    assert isinstance(bad, DecodeError) and "missing field 'fault'" in str(bad)


def test_sequence_numbers_wrap():
    assert seq_add(65535, 1) == 0 and seq_add(0, -1) == 65535
    assert seq_diff(2, 65534) == 4 and seq_diff(65534, 2) == -4 and seq_diff(9, 9) == 0


# ---------------------------------------------------------------- fuzzing the decoder


def _check_items(items):
    for item in items:
        assert isinstance(item, (Frame, Text, DecodeError))
        if isinstance(item, Frame):
            for parse in (parse_host, parse_device):
                assert parse(item) is not None  # a message or a DecodeError, never an exception


@FUZZ
@given(st.binary(max_size=600), st.lists(st.integers(1, 50), max_size=20))
def test_random_bytes_never_raise(data, cuts):
    decoder, position = Decoder(), 0
    for cut in cuts:
        _check_items(decoder.feed(data[position : position + cut]))
        position += cut
    _check_items(decoder.feed(data[position:] + b"\n"))


@FUZZ
@given(st.lists(st.one_of(host_messages, device_messages), min_size=1, max_size=6), st.data())
def test_mutated_frames_never_raise(messages, data):
    stream = bytearray(b"".join(m.encode() for m in messages))
    for _ in range(data.draw(st.integers(1, 6))):
        kind = data.draw(st.sampled_from(["flip", "insert", "delete", "truncate", "repeat"]))
        i = data.draw(st.integers(0, max(0, len(stream) - 1)))
        if kind == "flip" and stream:
            stream[i] ^= 1 << data.draw(st.integers(0, 7))
        elif kind == "insert":
            stream[i:i] = data.draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del stream[i : i + data.draw(st.integers(1, 8))]
        elif kind == "truncate":
            del stream[i:]
        else:
            stream[i:i] = stream[i : i + data.draw(st.integers(1, 30))]
    _check_items(Decoder().feed(bytes(stream)))


@FUZZ
@given(st.one_of(host_messages, device_messages), st.data())
def test_any_single_damaged_byte_is_caught(message, data):
    frame = bytearray(message.encode())
    i = data.draw(st.integers(0, len(frame) - 2))  # not the newline
    frame[i] = (frame[i] + data.draw(st.integers(1, 255))) % 256
    frames = [item for item in Decoder().feed(bytes(frame)) if isinstance(item, Frame)]
    # caught, or turned into a '#' text line, or a checksum digit changed case (the same frame)
    assert all(f.body == message.encode()[:-6].decode() for f in frames)


@FUZZ
@given(st.binary(max_size=200))
def test_log_escaping_round_trips_and_describe_never_raises(raw):
    assert unescape(escape(raw)) == raw
    entry = parse_entry(format_entry(1.5, "<", raw))
    assert entry == (1.5, "<", raw)
    for direction in ("<", ">", None):
        assert isinstance(describe(direction, raw), str)


# ---------------------------------------------------------------- the command set


@pytest.mark.parametrize(
    "verb,args,expected",
    [
        ("TURN", ("3", "R", "1"), Step("TURN", 3, (("R", 1),))),
        ("TURN", ("3", "R", "-2"), Step("TURN", 3, (("R", -2),))),
        ("PAIR", ("4", "U", "1", "D", "-1"), Step("PAIR", 4, (("U", 1), ("D", -1)))),
        ("HOME", ("5",), Step("HOME", 5)),
        ("ENABLE", ("6", "U", "R"), Step("ENABLE", 6, motors=("U", "R"))),
        ("SPEED", ("7", "120"), Step("SPEED", 7, quarter_ms=120)),
    ],
)
def test_steps_parse_and_print(verb, args, expected):
    step = parse_step(verb, args, SIX_AXIS)
    assert step == expected and step.args() == args


@pytest.mark.parametrize(
    "verb,args,code,words",
    [
        ("SPIN", ("1",), "BADCMD", "unknown command"),
        ("TURN", ("0", "U", "1"), "BADARG", "motion id"),
        ("TURN", ("1", "X", "1"), "BADARG", "unknown motor 'X'"),
        ("TURN", ("1", "U", "3"), "BADARG", "-2 -1 1 2"),
        ("TURN", ("1", "U"), "BADARG", "TURN takes"),
        ("PAIR", ("1", "U", "1", "R", "1"), "BADARG", "not an opposite pair"),
        ("SPEED", ("1", "5"), "BADARG", "20..10000"),
        ("HOME", ("1", "U", "U"), "BADARG", "at most once"),
    ],
)
def test_bad_steps_name_the_problem(verb, args, code, words):
    got_code, reason = parse_step(verb, args, SIX_AXIS)
    assert got_code == code and words in reason


# ---------------------------------------------------------------- the device's rules


class Device:
    """The reference firmware with a hand-driven clock."""

    def __init__(self, proto: int = 2, queue: int = 16, **timing):
        self.fw = Firmware(timing=MotorTiming(**timing), rng=random.Random(1), proto=proto, queue=queue)
        self.now = 0.0
        self.fw.power_on(self.now)
        self.out = []

    def send(self, *frames: bytes) -> list:
        for frame in frames:
            self.fw.receive(frame, self.now)
        return self.take()

    def take(self) -> list:
        return [parse_device(decode_one(f)) for f in self.fw.take_output()]

    def run(self, seconds: float) -> list:
        out = []
        steps = int(seconds / 0.005)
        for _ in range(steps):
            self.now += 0.005
            self.fw.tick(self.now)
            out += self.take()
        return out

    def session(self, first: int = 100, proto: int = 1) -> None:
        self.take()
        assert isinstance(self.send(Hello(proto, "0000ABCD", first).encode())[0], HelloReply)
        assert self.send(Command(first, "ENABLE", ("1",)).encode()) == [Ack(first)]


def turn(seq, mid, face="U", q=1):
    return Command(seq, "TURN", (str(mid), face, str(q))).encode()


def test_boot_frame_and_new_boot_id_each_reset():
    device = Device()
    boot = device.take()[0]
    device.fw.power_on(1.0)
    again = device.take()[0]
    assert isinstance(boot, Boot) and isinstance(again, Boot) and boot.boot != again.boot


def test_duplicates_are_answered_but_not_executed():
    device = Device(quarter_ms=0, half_ms=0)
    device.session()
    assert device.send(turn(101, 2)) == [Ack(101)]
    assert device.send(turn(101, 2), turn(100, 1)) == [Ack(101), Ack(101)]
    device.run(0.02)
    assert [s.mid for s in device.fw.executed] == [1, 2]


def test_a_gap_gets_one_nak_and_later_frames_are_dropped():
    device = Device()
    device.session()
    assert device.send(turn(102, 3), turn(103, 4), b"damaged*0000\n") == [Nak(101, "SEQ")]
    assert device.send(turn(101, 2), turn(102, 3)) == [Ack(101), Ack(102)]
    assert device.send(b"damaged*0000\n") == [Nak(103, "CRC")]


def test_without_a_session_commands_are_refused():
    device = Device()
    device.take()
    assert device.send(turn(5, 1)) == [Rej(5, "NOSESSION")]


def test_a_refusal_latches_until_clear():
    device = Device()
    device.session()
    out = device.send(Command(101, "TURN", ("2", "X", "1")).encode(), turn(102, 3))
    assert [type(m).__name__ for m in out] == ["Rej", "FaultReport", "Rej"]
    assert out[0].code == "BADARG" and out[2].code == "FAULTED"
    assert device.fw.report().fault == "BADARG" and device.fw.report().fseq == 101
    assert device.send(Command(103, "CLEAR").encode(), turn(104, 4)) == [Ack(103), Ack(104)]


def test_queue_full_is_refused():
    fw = Firmware(queue=2, rng=random.Random(1))
    fw.power_on(0.0)
    fw.receive(Hello(1, "0000ABCD", 1).encode() + turn(1, 1) + turn(2, 2) + turn(3, 3), 0.0)
    replies = [parse_device(decode_one(f)) for f in fw.take_output()][2:]
    assert replies[:2] == [Ack(1), Ack(2)] and replies[2].code == "QFULL"


def test_estop_is_handled_ahead_of_the_queue_and_behind_a_gap():
    device = Device(quarter_ms=50)
    device.session()
    device.send(*(turn(101 + i, 2 + i) for i in range(5)))
    device.run(0.06)
    out = device.send(turn(107, 8), Estop(9).encode())  # 106 is missing: the ESTOP still acts
    assert out[0] == Nak(106, "SEQ") and out[1] == EstopReply(9, 2) and out[2].code == "ESTOP"
    assert device.fw.report().q == 0 and device.fw.report().fault == "ESTOP"
    assert device.send(Estop(10).encode()) == [EstopReply(10, 2)]  # answered again, nothing else
    assert not any(isinstance(m, Done) for m in device.run(0.3))


def test_host_silence_stops_a_moving_device_but_not_an_idle_one():
    idle = Device()
    idle.session()
    assert all(m.fault == "NONE" for m in idle.run(1.5) if isinstance(m, Report))
    moving = Device(quarter_ms=400)
    moving.session()
    moving.send(*(turn(101 + i, 2 + i) for i in range(5)))
    out = moving.run(1.1)
    faults = [m for m in out if isinstance(m, FaultReport)]
    assert [f.code for f in faults] == ["HOSTLOST"] and moving.fw.report().q == 0


def test_repeated_hello_changes_nothing_and_a_new_session_stops_motion():
    device = Device(quarter_ms=500)
    device.session()
    device.send(turn(101, 2))
    device.run(0.05)
    again = device.send(Hello(1, "0000ABCD", 100).encode())
    assert isinstance(again[0], HelloReply) and device.fw.report().q == 1
    device.send(Hello(1, "00001111", 7).encode())
    assert device.fw.report().q == 0 and device.fw.report().rx == 6


def test_other_protocol_versions_get_the_device_version_and_no_session():
    device = Device(proto=1)
    device.take()
    reply = device.send(Hello(2, "0000ABCD", 1).encode())[0]
    assert reply == HelloReply("0000ABCD", 1, "robotd-sim/1.0") and device.fw.session is None


def test_sequence_numbers_wrap_on_the_device():
    device = Device(quarter_ms=0, half_ms=0)
    device.session(first=65534)
    replies = device.send(turn(65535, 2), turn(0, 3), turn(1, 4))
    assert replies == [Ack(65535), Ack(0), Ack(1)]
    device.run(0.02)
    assert [s.mid for s in device.fw.executed] == [1, 2, 3, 4]


@pytest.mark.parametrize("fault,code,verb", [("stalled", "STALL", "TURN"), ("limit", "LIMIT", "HOME")])
def test_motor_faults(fault, code, verb):
    device = Device()
    device.session()
    getattr(device.fw, fault).add("R")
    frame = turn(101, 2, "R") if verb == "TURN" else Command(101, "HOME", ("2", "R")).encode()
    device.send(frame, turn(102, 3))
    faults = [m for m in device.run(0.5) if isinstance(m, FaultReport)]
    assert faults == [FaultReport(code, 1, 2, None, "R")]
    assert device.fw.report().q == 0


def test_turning_a_disabled_motor_is_a_fault():
    device = Device()
    device.take()
    device.send(Hello(1, "0000ABCD", 1).encode(), turn(1, 1))
    faults = [m for m in device.run(0.1) if isinstance(m, FaultReport)]
    assert faults == [FaultReport("DISABLED", 0, 1, None, "U")]


def test_turns_update_the_virtual_cube_like_the_solver():
    device = Device(quarter_ms=0, half_ms=0)
    device.session()
    frames = [turn(101, 2, "R", 1), turn(102, 3, "U", -1), Command(103, "PAIR", ("4", "F", "2", "B", "-1")).encode()]
    device.send(*frames)
    device.run(0.02)
    assert device.fw.cube.facelets == apply(solved_facelets(3), "R U' F2 B'")


def test_virtual_cube_keeps_its_letters_and_refuses_impossible_states():
    scrambled = apply("W" * 9 + "R" * 9 + "G" * 9 + "Y" * 9 + "O" * 9 + "B" * 9, "R U F")
    cube = VirtualCube(scrambled)
    cube.turn("F", -1)
    assert cube.facelets == apply(scrambled, "F'")
    with pytest.raises(ConfigError, match="simulator cube state"):
        cube.set_state(solved_facelets(3)[:-2] + "LB")


# ---------------------------------------------------------------- version 2: MOTOR, PLAN, JOG, negotiation

from firmware_interface.robotd.device import cruise_rate, profile_seconds  # noqa: E402
from firmware_interface.robotd.step_parser import parse_plan  # noqa: E402


@pytest.mark.parametrize(
    "verb,args,expected",
    [
        (
            "MOTOR",
            ("1", "U", "steps=400", "rate=8000", "accel=2000", "dir=1"),
            Step("MOTOR", 1, motors=("U",), setup=(400, 8000, 2000, 1)),
        ),
        (
            "MOTOR",
            ("2", "B", "dir=-1", "accel=1", "rate=1", "steps=20000"),
            Step("MOTOR", 2, motors=("B",), setup=(20000, 1, 1, -1)),
        ),
        ("JOG", ("3", "U", "25", "D", "-32767"), Step("JOG", 3, (("U", 25), ("D", -32767)))),
    ],
)
def test_v2_steps_parse(verb, args, expected):
    step = parse_step(verb, args, SIX_AXIS, 2)
    assert step == expected
    assert parse_step(verb, step.args(), SIX_AXIS, 2) == step  # what the host sends parses back


def test_plan_parses_into_one_step_per_turn_with_consecutive_mids():
    steps = parse_step("PLAN", ("65534", "R1", "U-1", "F2", "U1D-1", "B-2"), SIX_AXIS, 2)
    assert steps == [
        Step("TURN", 65534, (("R", 1),)),
        Step("TURN", 65535, (("U", -1),)),
        Step("TURN", 1, (("F", 2),)),
        Step("PAIR", 2, (("U", 1), ("D", -1))),
        Step("TURN", 3, (("B", -2),)),
    ]
    assert [s.plan_token() for s in steps] == ["R1", "U-1", "F2", "U1D-1", "B-2"]


@pytest.mark.parametrize(
    "verb,args,words",
    [
        ("MOTOR", ("1", "U", "steps=400", "rate=8000", "accel=2000"), "MOTOR takes"),
        ("MOTOR", ("1", "U", "steps=0", "rate=8000", "accel=2000", "dir=1"), "steps must be 1..20000"),
        ("MOTOR", ("1", "U", "steps=400", "rate=40001", "accel=2000", "dir=1"), "rate must be 1..40000"),
        ("MOTOR", ("1", "U", "steps=400", "rate=800", "accel=0", "dir=1"), "accel must be 1..65535"),
        ("MOTOR", ("1", "U", "steps=400", "rate=800", "accel=5", "dir=2"), "dir must be 1 or -1"),
        ("MOTOR", ("1", "U", "steps=400", "steps=400", "accel=5", "dir=1"), "given twice"),
        ("MOTOR", ("1", "U", "steps=400", "speed=400", "accel=5", "dir=1"), "MOTOR takes"),
        ("MOTOR", ("1", "X", "steps=400", "rate=800", "accel=5", "dir=1"), "unknown motor 'X'"),
        ("PLAN", ("1",), "one or more turns"),
        ("PLAN", ("1", "R1", "X1"), "turn 2 'X1': unknown motor"),
        ("PLAN", ("1", "R3"), "turn 1 'R3'"),
        ("PLAN", ("1", "U1R1"), "not an opposite pair"),
        ("PLAN", ("1", "R1*"), "turn 1"),
        ("PLAN", ("1", *["R1"] * 49), "at most 48"),
        ("PLAN", ("0", "R1"), "motion id"),
        ("JOG", ("1", "U"), "JOG takes"),
        ("JOG", ("1", "U", "0"), "not 0"),
        ("JOG", ("1", "U", "40000"), "-32767..32767"),
        ("JOG", ("1", "U", "5", "U", "6"), "more than once"),
    ],
)
def test_bad_v2_steps_name_the_problem(verb, args, words):
    got_code, reason = parse_step(verb, args, SIX_AXIS, 2)
    assert got_code == "BADARG" and words in reason


@pytest.mark.parametrize("verb", ["MOTOR", "PLAN", "JOG"])
def test_v2_commands_are_unknown_in_a_v1_session(verb):
    code, reason = parse_step(verb, ("1", "R1"), SIX_AXIS, 1)
    assert code == "BADCMD" and "version-1" in reason


def test_plan_turn_limit_is_the_device_plan_size():
    assert parse_plan(("1", "R1", "U1", "F1"), SIX_AXIS, 2) == "plan of 3 turns: at most 2 in one frame"


def test_a_v2_device_negotiates():
    device = Device()
    assert device.take()[0].proto == 2  # BOOT says the highest version
    reply = device.send(Hello(2, "0000ABCD", 1).encode())[0]
    assert reply.proto == 2 and reply.plan == 16 and reply.rate == 40000  # plan never above the queue (16)
    old = device.send(Hello(1, "00001111", 1).encode())[0]  # an older host: a v1 session
    assert old.proto == 1 and old.plan is None and old.rate is None and device.fw.session == "00001111"
    rejected = Rej(1, "BADCMD", "unknown command 'PLAN' in a version-1 session")
    assert device.send(Command(1, "PLAN", ("1", "R1")).encode())[0] == rejected
    future = device.send(Hello(3, "00002222", 1).encode())[0]  # a newer host: no session
    assert future == HelloReply("00002222", 2, "robotd-sim/1.0") and device.fw.session == "00001111"
    assert Device(queue=64).send(Hello(2, "0000ABCD", 1).encode())[-1].plan == 48


def test_a_v1_only_device_answers_exactly_as_before():
    device = Device(proto=1)
    assert device.take()[0].proto == 1
    reply = device.send(Hello(2, "0000ABCD", 1).encode())[0]
    assert reply.encode() == encode_frame("HELLO session=0000ABCD proto=1 fw=robotd-sim/1.0")
    assert device.fw.session is None
    full = device.send(Hello(1, "0000ABCD", 1).encode())[0]
    assert full.proto == 1 and full.plan is None and b"plan=" not in full.encode()


def test_plan_is_all_or_nothing_and_one_done_per_turn():
    device = Device(quarter_ms=0, half_ms=0, queue=6)
    device.session(proto=2)
    device.run(0.01)  # ENABLE ran
    out = device.send(Command(101, "PLAN", ("2", "R1", "U2", "X1")).encode())
    assert out[0].code == "BADARG" and "turn 3 'X1'" in out[0].detail and device.fw.report().q == 0
    device.send(Command(102, "CLEAR").encode())
    out = device.send(Command(103, "PLAN", ("2", *["R1"] * 6)).encode())  # fills the queue of 6
    assert out == [Ack(103)]
    dones = [m for m in device.run(0.05) if isinstance(m, Done)]
    assert [d.mid for d in dones] == [2, 3, 4, 5, 6, 7]
    assert device.fw.cube.facelets == apply(solved_facelets(3), "R " * 6)
    device.send(Command(104, "TURN", ("8", "U", "1")).encode())  # one place taken, 6 sent: QFULL
    out = device.send(Command(105, "PLAN", ("9", *["R1"] * 6)).encode())
    assert out[0].code == "QFULL" and device.fw.report().fault == "QFULL"


def test_motor_setup_sets_the_turn_time_and_jog_moves_no_face():
    device = Device(quarter_ms=80, half_ms=130)
    device.session(proto=2)
    assert device.fw.move_ms("TURN", "U", 1) == 80  # never set up: MotorTiming
    device.send(Command(101, "MOTOR", ("2", "U", "steps=400", "rate=2000", "accel=100", "dir=-1")).encode())
    device.run(0.01)
    assert device.fw.motor_setup["U"] == (400, 2000, 100, -1)
    # A = 10000 steps/s², v = 2000: a quarter turn of 400 steps takes 400/2000 + 2000/10000 = 0.4 s
    assert device.fw.move_ms("TURN", "U", 1) == pytest.approx(400)
    assert device.fw.move_ms("TURN", "U", 2) == pytest.approx(600)
    assert device.fw.move_ms("JOG", "U", 25) == pytest.approx(100)  # a triangle: 2·sqrt(25/10000)
    device.send(Command(102, "JOG", ("3", "U", "25", "R", "-10")).encode())
    assert [m for m in device.run(0.2) if isinstance(m, Done)] == [Done(3)]
    assert device.fw.executed[-1] == Step("JOG", 3, (("U", 25), ("R", -10)))
    assert device.fw.cube.facelets == solved_facelets(3)


def test_the_profile_honours_speed():
    assert profile_seconds(400, 2000, 10000) == pytest.approx(0.4)
    assert profile_seconds(100, 2000, 10000) == pytest.approx(0.2)  # triangle: 2·sqrt(100/10000)
    v = cruise_rate(400, 40000, 1e6, 0.5)  # fast motor, slow SPEED
    assert v < 40000 and profile_seconds(400, v, 1e6) == pytest.approx(0.5)
    assert cruise_rate(400, 2000, 10000, 0.1) == 2000  # SPEED faster than the motor can


@pytest.mark.parametrize("stop", ["estop", "hostlost"])
def test_estop_and_host_loss_turn_the_drivers_off(stop):
    device = Device(quarter_ms=400)
    device.session()
    device.send(*(turn(101 + i, 2 + i) for i in range(5)))
    device.run(0.05)
    assert device.fw.enabled
    if stop == "estop":
        device.send(Estop(1).encode())
    else:
        device.run(1.1)
    assert device.fw.enabled == set() and device.fw.report(1).en == ()
