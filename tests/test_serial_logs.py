"""The serial trace rotates by size and the fault dumps are pruned, so the link's files stay bounded."""

import time

import pytest

from firmware_interface import ConfigError, DeviceFault, LogLimits, RigLink, SimulatedFirmware
from firmware_interface.__main__ import main as cli
from firmware_interface.fault_logs import FaultLogs
from firmware_interface.robotd.framelog import HEADER, MAX_ENTRY_CHARS, TrafficLog, format_entry
from firmware_interface.robotd.protocol import encode_frame

FAST = {"quarter_ms": 2, "half_ms": 3, "home_ms": 5}


def traced(path, max_bytes=2048, backups=2, entries=400) -> TrafficLog:
    log = TrafficLog(10, path, LogLimits(trace_max_bytes=max_bytes, trace_backups=backups))
    log.open_trace("/dev/ttyACM0")
    start = time.monotonic()  # entries are timed from the log's creation: about k seconds each
    for k in range(entries):
        log.add(">", encode_frame(f"{k % 64} TURN 1 U -1").rstrip(b"\n"), start + k)
        log.add("<", encode_frame(f"ACK {k % 64}").rstrip(b"\n"), start + k)
    log.close()
    return log


def test_the_trace_rotates_at_its_size_and_keeps_only_its_backups(tmp_path):
    traced(tmp_path / "trace.log", max_bytes=2048, backups=2)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["trace.log", "trace.log.1", "trace.log.2"]
    for path in tmp_path.iterdir():
        assert path.stat().st_size <= 2048
        assert path.read_text().startswith(HEADER + " port=/dev/ttyACM0 started=")  # each file decodes alone


def test_a_rotated_trace_decodes_file_by_file_and_as_a_set(tmp_path, capsys):
    traced(tmp_path / "trace.log")
    assert cli(["decode", str(tmp_path / "trace.log.1")]) == 0
    out = capsys.readouterr().out
    assert "TURN      #" in out and "ACK       received through #" in out and "BAD" not in out
    paths = [str(tmp_path / name) for name in ("trace.log.2", "trace.log.1", "trace.log")]
    assert cli(["decode", *paths]) == 0
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if line.startswith("== ")] == [f"== {p}" for p in paths]
    seconds = [float(line.split()[0]) for line in out.splitlines() if line.split()[1:2] == ["host>dev"]]
    assert seconds == sorted(seconds) and round(seconds[-1]) == 399  # oldest first, the newest frame last


def test_restarting_appends_to_the_trace_and_still_rotates(tmp_path):
    for _ in range(3):
        traced(tmp_path / "trace.log", max_bytes=4096, backups=1, entries=60)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace.log", "trace.log.1"]
    assert all(p.stat().st_size <= 4096 for p in tmp_path.iterdir())


def test_fault_logs_keep_the_newest_and_leave_other_files_alone(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    logs = FaultLogs(tmp_path, keep=3)
    written = [logs.save(f"{HEADER} fault={k}\n") for k in range(5)]
    assert [str(p) for p in logs.files()] == written[2:]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*(p.name for p in logs.files()), "notes.txt"])


def test_keeping_no_fault_logs_writes_none(tmp_path):
    assert FaultLogs(tmp_path / "faults", keep=0).save("x\n") is None
    assert not (tmp_path / "faults").exists()


def test_a_link_keeps_only_the_newest_fault_dumps(tmp_path, capsys):
    sim = SimulatedFirmware(timing=FAST)
    sim.start()
    link = RigLink(sim.path, fault_log_dir=tmp_path, log_limits=LogLimits(fault_logs=2))
    try:
        link.connect()
        link.enable().wait(5)
        sim.stall("D")
        for _ in range(3):
            with pytest.raises(DeviceFault):
                link.turn("D", 1).wait(5)
            link.clear()
    finally:
        link.close()
        sim.stop()
    dumps = sorted(tmp_path.iterdir())
    assert len(dumps) == 2
    for dump in dumps:
        assert cli(["decode", str(dump)]) == 0
        assert "FAULT     STALL" in capsys.readouterr().out


def test_an_overlong_line_or_note_is_cut_in_the_log():
    garbage = format_entry(1.0, "<", b"\x00" * 5000)
    note = format_entry(1.0, "!", "x" * 5000)
    assert len(garbage) <= MAX_ENTRY_CHARS and garbage.endswith("more bytes not logged]")
    assert len(note) <= MAX_ENTRY_CHARS and note.endswith("[cut]")
    frame = encode_frame("5 TURN 1 U -1").rstrip(b"\n")
    assert format_entry(1.0, ">", frame) == f"1.000000 > {frame.decode()}"


@pytest.mark.parametrize(
    "field, value",
    [("trace_max_bytes", 100), ("trace_backups", 0), ("fault_logs", -1), ("trace_backups", 2.5), ("fault_logs", True)],
)
def test_log_limits_refuse_bad_values(field, value):
    with pytest.raises(ConfigError, match=field):
        LogLimits(**{field: value})
