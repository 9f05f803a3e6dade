"""The health of the computer robotd runs on (a Raspberry Pi, usually): CPU temperature, throttling, disk,
memory and load, each with a line in words.

Every source is optional: a part that cannot be read here (no thermal zone in a
container, no ``vcgencmd`` off a Pi) is reported as ``available: false`` with
"not available here" and why, never as an error. The paths and the command are
parameters (``HealthSources``), so that tests feed fake files.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

NOT_HERE = "not available here"
VCGENCMD_TIMEOUT_S = 2.0
# vcgencmd get_throttled: bit n is "now", bit n + 16 "since boot"
THROTTLE_BITS = {
    0: "under-voltage",
    1: "ARM frequency capped",
    2: "throttled",
    3: "soft temperature limit",
}
SINCE_BOOT_SHIFT = 16


@dataclass(frozen=True)
class HealthSources:
    thermal: Path = Path("/sys/class/thermal/thermal_zone0/temp")
    meminfo: Path = Path("/proc/meminfo")
    loadavg: Path = Path("/proc/loadavg")
    vcgencmd: str = "vcgencmd"  # a name looked up on PATH, or a path


def health(data_dir: Path, sources: HealthSources = HealthSources()) -> dict:
    """Each part: ``available``, ``text`` (in words) and its figures."""
    return {
        "temperature": temperature(sources.thermal),
        "throttling": throttling(sources.vcgencmd),
        "disk": disk(data_dir),
        "memory": memory(sources.meminfo),
        "load": load(sources.loadavg),
    }


def missing(why: str) -> dict:
    return {"available": False, "text": f"{NOT_HERE} ({why})"}


def temperature(path: Path) -> dict:
    try:
        celsius = int(path.read_text().strip()) / 1000
    except OSError:
        return missing(f"no {path}")
    except ValueError:
        return missing(f"{path} holds no temperature")
    return {"available": True, "celsius": round(celsius, 1), "text": f"{celsius:.1f} °C"}


def decode_throttled(value: int) -> dict:
    """``get_throttled``'s bits as words: what holds now and what happened since boot."""
    now = [words for bit, words in THROTTLE_BITS.items() if value >> bit & 1]
    since = [words for bit, words in THROTTLE_BITS.items() if value >> (bit + SINCE_BOOT_SHIFT) & 1]
    if not now and not since:
        text = "none (no under-voltage or throttling since boot)"
    else:
        text = "; ".join(
            f"{when}: {', '.join(words)}" for when, words in (("now", now), ("since boot", since)) if words
        )
    return {"available": True, "raw": f"0x{value:x}", "now": now, "since_boot": since, "text": text}


def throttling(command: str) -> dict:
    found, name = shutil.which(command), Path(command).name
    if found is None:
        return missing(f"no {name} on PATH: not a Raspberry Pi OS")
    try:
        result = subprocess.run(
            [found, "get_throttled"], capture_output=True, text=True, timeout=VCGENCMD_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return missing(f"{name} get_throttled failed: {error}")
    _, _, value = result.stdout.strip().partition("=")
    try:
        return decode_throttled(int(value, 16))
    except ValueError:
        answer = (result.stdout.strip() or result.stderr.strip() or f"exit status {result.returncode}")[:200]
        return missing(f"{name} get_throttled answered {answer!r}")


def _size(n: float) -> str:
    for unit in ("bytes", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


def disk(path: Path) -> dict:
    try:
        usage = shutil.disk_usage(path)
    except OSError as error:
        return missing(f"{path}: {error.strerror}")
    share = 100 * usage.free / usage.total if usage.total else 0.0
    return {
        "available": True,
        "path": str(path),
        "free_bytes": usage.free,
        "total_bytes": usage.total,
        "text": f"{_size(usage.free)} free of {_size(usage.total)} ({share:.0f} %) in {path}",
    }


def memory(path: Path) -> dict:
    try:
        fields = dict(line.split(":", 1) for line in path.read_text().splitlines() if ":" in line)
        total = int(fields["MemTotal"].split()[0]) * 1024
        available = int(fields["MemAvailable"].split()[0]) * 1024
    except OSError:
        return missing(f"no {path}")
    except (KeyError, ValueError, IndexError):
        return missing(f"{path} has no MemTotal and MemAvailable")
    return {
        "available": True,
        "available_bytes": available,
        "total_bytes": total,
        "text": f"{_size(available)} available of {_size(total)}",
    }


def load(path: Path) -> dict:
    try:
        one, five, fifteen = (float(part) for part in path.read_text().split()[:3])
    except OSError:
        return missing(f"no {path}")
    except ValueError:
        return missing(f"{path} holds no load averages")
    cpus = os.cpu_count() or 1
    return {
        "available": True,
        "averages": [one, five, fifteen],
        "cpus": cpus,
        "text": f"{one:.2f}, {five:.2f}, {fifteen:.2f} over 1, 5, 15 min ({cpus} CPU{'s' if cpus > 1 else ''})",
    }
