"""Peak RSS that an unauthenticated 80 MB PUT adds to a running ``robotd --sim`` (network-bound, key required).

    python bench/web_body.py

Sends the body three ways (with Content-Length, chunked, and without the
dashboard's header) and prints one JSON object: per way the reply and the
peak RSS added (``/proc/PID/status`` VmHWM, reset before each request).
Target (issue 17): at most 10 MiB added. Linux only.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[0] = str(REPO)  # bench/serial.py would shadow pyserial

from bench.daemon_api import free_port  # noqa: E402

TARGET_MIB = 10
SIZE = 80 * 1024 * 1024
KEY = "a-long-enough-key-1234"


def memory(pid: int) -> dict:
    fields = dict(line.split(":", 1) for line in open(f"/proc/{pid}/status"))
    return {k: int(fields[k].split()[0]) // 1024 for k in ("VmRSS", "VmHWM")}  # MiB


def put(port, chunked, extra=b""):
    head = (
        f"PUT /api/calibration HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n".encode()
        + extra
    )
    head += b"Transfer-Encoding: chunked\r\n\r\n" if chunked else f"Content-Length: {SIZE}\r\n\r\n".encode()
    piece = b"x" * (1024 * 1024)
    started = time.time()
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(head)
        try:
            while sent < SIZE:
                s.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
                sent += len(piece)
            if chunked:
                s.sendall(b"0\r\n\r\n")
        except OSError:  # the server answered and closed while we were still sending
            pass
        s.settimeout(120)
        reply = b""
        try:
            while b"\r\n\r\n" not in reply:
                data = s.recv(65536)
                if not data:
                    break
                reply += data
        except OSError:
            pass
    status = reply.split(b"\r\n", 1)[0].decode(errors="replace")
    return status, sent, time.time() - started


def main() -> None:
    work = tempfile.mkdtemp()
    port = free_port()
    config = os.path.join(work, "robotd.toml")
    with open(config, "w") as f:
        f.write(f'[robotd]\ndata_dir = "{work}/data"\n[web]\nhost = "0.0.0.0"\nport = {port}\napi_key = "{KEY}"\n')
    process = subprocess.Popen(
        [sys.executable, "-m", "robot", "--config", config, "--sim"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.time() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert process.poll() is None, process.stdout.read()
                assert time.time() < deadline
                time.sleep(0.2)
        time.sleep(2)
        rows = []
        for chunked, extra in ((False, b"X-Robotd: 1\r\n"), (True, b"X-Robotd: 1\r\n"), (False, b"")):
            with open(f"/proc/{process.pid}/clear_refs", "w") as f:
                f.write("5")  # reset the peak (VmHWM) to the current RSS
            before = memory(process.pid)
            status, sent, seconds = put(port, chunked, extra)
            time.sleep(1)
            after = memory(process.pid)
            rows.append(
                {
                    "body": "chunked" if chunked else "content-length",
                    "x_robotd": bool(extra),
                    "reply": status,
                    "sent_mib": sent // 2**20,
                    "seconds": round(seconds, 2),
                    "rss_before_mib": before["VmRSS"],
                    "peak_after_mib": after["VmHWM"],
                    "peak_added_mib": after["VmHWM"] - before["VmRSS"],
                }
            )
        worst = max(row["peak_added_mib"] for row in rows)
        print(
            json.dumps(
                {"cases": rows, "peak_added_mib_max": worst, "target_mib": TARGET_MIB, "met": worst <= TARGET_MIB},
                indent=2,
            )
        )
    finally:
        process.terminate()
        process.wait(10)


if __name__ == "__main__":
    main()
