"""The computer's health (``robot.health``, ``GET /api/health``) from fake sysfs and proc files and a fake
vcgencmd; every missing source says "not available here", never an error."""

import os
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from robot.health import HealthSources, decode_throttled, health
from robot.web import WebSettings, create_app
from robot_doubles import make_daemon

CAPPED_HOT = ["ARM frequency capped", "soft temperature limit"]
MEMINFO = "MemTotal:        3884088 kB\nMemFree:          120000 kB\nMemAvailable:    2911240 kB\nBuffers: 1 kB\n"


def fake_vcgencmd(folder: Path, answer: str, status: int = 0) -> str:
    script = folder / "vcgencmd"
    script.write_text(f"#!/bin/sh\n[ \"$1\" = get_throttled ] || exit 9\necho '{answer}'\nexit {status}\n")
    script.chmod(0o755)
    return str(script)


def pi(folder: Path, throttled: str = "throttled=0x50005") -> HealthSources:
    """A Raspberry Pi's files: 61.3 °C, 3.7 GiB of memory, a loaded CPU, and vcgencmd."""
    (folder / "temp").write_text("61334\n")
    (folder / "meminfo").write_text(MEMINFO)
    (folder / "loadavg").write_text("1.52 0.98 0.40 2/301 4242\n")
    return HealthSources(
        thermal=folder / "temp",
        meminfo=folder / "meminfo",
        loadavg=folder / "loadavg",
        vcgencmd=fake_vcgencmd(folder, throttled),
    )


def test_a_pi_reports_temperature_throttling_disk_memory_and_load_in_words(tmp_path):
    report = health(tmp_path, pi(tmp_path))
    assert report["temperature"] == {"available": True, "celsius": 61.3, "text": "61.3 °C"}
    throttling = report["throttling"]
    assert throttling["raw"] == "0x50005"
    assert throttling["now"] == ["under-voltage", "throttled"]
    assert throttling["since_boot"] == ["under-voltage", "throttled"]
    assert throttling["text"] == "now: under-voltage, throttled; since boot: under-voltage, throttled"
    memory = report["memory"]
    assert (memory["total_bytes"], memory["available_bytes"]) == (3884088 * 1024, 2911240 * 1024)
    assert memory["text"] == "3.0 GB available of 4.0 GB"
    assert report["load"]["averages"] == [1.52, 0.98, 0.4] and report["load"]["text"].startswith("1.52, 0.98, 0.40")
    usage = os.statvfs(tmp_path)
    assert report["disk"]["total_bytes"] == usage.f_blocks * usage.f_frsize
    assert report["disk"]["path"] == str(tmp_path) and " free of " in report["disk"]["text"]


@pytest.mark.parametrize(
    ("value", "now", "since_boot"),
    [
        (0x0, [], []),
        (0x80000, [], ["soft temperature limit"]),
        (
            0xA000A,
            ["ARM frequency capped", "soft temperature limit"],
            ["ARM frequency capped", "soft temperature limit"],
        ),
        (0x10000, [], ["under-voltage"]),
    ],
)
def test_the_throttled_bits_are_decoded_into_now_and_since_boot(value, now, since_boot):
    decoded = decode_throttled(value)
    assert (decoded["now"], decoded["since_boot"]) == (now, since_boot)
    if not value:
        assert decoded["text"] == "none (no under-voltage or throttling since boot)"


def test_a_machine_that_is_no_pi_says_not_available_here_for_each_missing_source(tmp_path):
    nowhere = tmp_path / "absent"
    sources = HealthSources(
        thermal=nowhere / "temp", meminfo=nowhere / "meminfo", loadavg=nowhere / "loadavg", vcgencmd="no-vcgencmd-here"
    )
    report = health(nowhere, sources)
    assert all(part["available"] is False for part in report.values())
    assert all(part["text"].startswith("not available here (") for part in report.values())
    assert report["temperature"]["text"] == f"not available here (no {nowhere / 'temp'})"
    assert report["throttling"]["text"] == "not available here (no no-vcgencmd-here on PATH: not a Raspberry Pi OS)"


def test_garbled_files_and_a_vcgencmd_that_fails_are_not_available_either(tmp_path):
    sources = pi(tmp_path, throttled="VCHI initialization failed")
    (tmp_path / "temp").write_text("hot\n")
    (tmp_path / "meminfo").write_text("nothing useful\n")
    (tmp_path / "loadavg").write_text("\n")
    report = health(tmp_path, sources)
    assert report["throttling"] == {
        "available": False,
        "text": "not available here (vcgencmd get_throttled answered 'VCHI initialization failed')",
    }
    for part in ("temperature", "memory", "load"):
        assert report[part]["available"] is False and report[part]["text"].startswith("not available here"), part
    assert report["disk"]["available"] is True


def test_api_health_reads_the_data_directorys_disk(tmp_path):
    daemon = make_daemon(tmp_path)
    with TestClient(create_app(daemon, WebSettings(allowed_hosts=("testserver",)))) as client:
        report = client.get("/api/health").json()
    daemon.close()
    assert set(report) == {"temperature", "throttling", "disk", "memory", "load"}
    assert report["disk"]["available"] and report["disk"]["path"] == str(tmp_path)
    for part in report.values():
        assert part["available"] or part["text"].startswith("not available here ("), part
