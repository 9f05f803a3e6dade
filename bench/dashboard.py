"""Benchmark of the dashboard under load; prints one JSON object.

    python bench/dashboard.py [--quick] [--clients N] [--runs R]

Starts ``robotd --sim`` as a separate process on a free port, then:

- ``websocket``: R runs with no WebSocket client, then R runs with N clients
  connected. Reports each set's motor time (the runs' ``executing`` step,
  median) and, per client, whether it received every event of every run in
  order (contiguous ``seq``), and the delivery delay (receive time minus the
  event's time stamp), median and p99.
- ``slow_client``: the same N clients plus one that opens the event stream
  and never reads (tiny receive buffer); runs go on until the server drops
  it, once the socket buffers are full and its queue overflows
  (``stalled_client_dropped``); the others must still get
  every event, without extra delay.
- ``mjpeg``: frames per second of ``/stream/<camera>`` from the simulated
  camera over a few seconds, and the daemon process's CPU use meanwhile
  (percent of one core, from /proc).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import websockets

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # bench/serial.py would shadow pyserial

from bench.daemon_api import busy, free_port, http  # noqa: E402

CONFIG = """[robotd]
data_dir = "{data}"
[rig]
quarter_turn_s = 0.02
half_turn_s = 0.03
settle_s = 0.0
[web]
port = {port}
client_queue = {queue}
"""


def start_daemon(directory: Path, queue: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    config = directory / "robotd.toml"
    config.write_text(CONFIG.format(data=directory / "data", port=port, queue=queue))
    process = subprocess.Popen(
        [sys.executable, "-m", "robot", "--config", str(config), "--sim"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            http(f"{base}/api/status")
            return process, base
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("robotd --sim did not start: " + (process.stdout.read() if process.stdout else ""))


async def wait_idle(base: str) -> None:
    while busy(base):
        await asyncio.sleep(0.05)


async def do_runs(base: str, runs: int, seed0: int, until_dropped: bool = False) -> list[float]:
    executing = []
    for k in range(runs):
        if until_dropped and http(f"{base}/api/status")["web"]["dropped_clients"]:
            break
        run_id = http(f"{base}/api/runs", {"puzzle": 2, "seed": seed0 + k})["run_id"]
        await asyncio.sleep(0.05)
        await wait_idle(base)
        run = http(f"{base}/api/runs/{run_id}")
        executing.append(run["step_durations"].get("executing", 0.0))
    return executing


async def client(url: str, received: list) -> None:
    async with websockets.connect(url, max_queue=None) as ws:
        try:
            while True:
                message = json.loads(await ws.recv())
                if message["kind"] != "snapshot":
                    received.append((time.time(), message))
        except (websockets.ConnectionClosed, asyncio.CancelledError):
            pass


def stalled_client(base: str) -> socket.socket:
    """A browser that opens the event stream and then never reads: WebSocket handshake, tiny receive buffer."""
    host, port = base.split("//")[1].split(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    sock.connect((host, int(port)))
    sock.sendall(
        f"GET /ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    return sock


def delivery(received: list) -> dict:
    seqs = [m["seq"] for _, m in received]
    delays = sorted(t - m["t"] for t, m in received)
    in_order = seqs == list(range(seqs[0], seqs[0] + len(seqs))) if seqs else False
    return {
        "events": len(seqs),
        "in_order_no_gap": in_order,
        "delay_ms_median": round(statistics.median(delays) * 1000, 2) if delays else None,
        "delay_ms_p99": round(delays[int(0.99 * (len(delays) - 1))] * 1000, 2) if delays else None,
    }


async def with_clients(base: str, clients: int, runs: int, seed0: int, slow: bool = False) -> dict:
    url = base.replace("http", "ws") + "/ws"
    logs = [[] for _ in range(clients)]
    tasks = [asyncio.create_task(client(url, logs[i])) for i in range(clients)]
    stalled = stalled_client(base) if slow else None
    await asyncio.sleep(1.0)
    executing = await do_runs(base, runs, seed0, until_dropped=slow)
    await asyncio.sleep(0.5)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    per_client = [delivery(log) for log in logs]
    result = {
        "executing_s_median": round(statistics.median(executing), 3),
        "clients_all_events_in_order": all(c["in_order_no_gap"] for c in per_client),
        "events_per_client": sorted({c["events"] for c in per_client}),
        "delay_ms_median": round(statistics.median(c["delay_ms_median"] for c in per_client), 2),
        "delay_ms_p99_worst": max(c["delay_ms_p99"] for c in per_client),
    }
    result["server_dropped_clients_total"] = http(f"{base}/api/status")["web"]["dropped_clients"]
    if stalled is not None:
        result["stalled_client_dropped"] = result["server_dropped_clients_total"] > 0
        result["runs_while_stalled_client_connected"] = len(executing)
        stalled.close()
    return result


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def mjpeg(base: str, pid: int, seconds: float) -> dict:
    camera = http(f"{base}/api/cameras")["cameras"][0]["name"]
    frames, started, cpu0 = 0, time.perf_counter(), cpu_seconds(pid)
    with urllib.request.urlopen(f"{base}/stream/{camera}", timeout=30) as stream:
        while time.perf_counter() - started < seconds:
            line = stream.readline()
            if line.startswith(b"--frame"):
                frames += 1
    elapsed = time.perf_counter() - started
    return {
        "camera": camera,
        "fps": round(frames / elapsed, 2),
        "daemon_cpu_percent_of_one_core": round(100 * (cpu_seconds(pid) - cpu0) / elapsed, 1),
    }


async def bench(clients: int, runs: int, slow_runs: int, mjpeg_s: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        process, base = start_daemon(Path(tmp), queue=64)
        try:
            baseline = await do_runs(base, runs, 100)
            loaded = await with_clients(base, clients, runs, 100)
            slow = await with_clients(base, clients, slow_runs, 100, slow=True)
            stream = mjpeg(base, process.pid, mjpeg_s)
        finally:
            process.terminate()
            process.wait(10)
    return {
        "websocket": {
            "clients": clients,
            "runs_each": runs,
            "executing_s_median_no_clients": round(statistics.median(baseline), 3),
            "with_clients": loaded,
        },
        "slow_client": slow,
        "mjpeg": stream,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--slow-runs", type=int, default=150, help="at most this many runs while the stalled client is connected"
    )
    args = parser.parse_args()
    runs, slow_runs, mjpeg_s = (2, 40, 3.0) if args.quick else (args.runs, args.slow_runs, 10.0)
    print(json.dumps(asyncio.run(bench(args.clients, runs, slow_runs, mjpeg_s)), indent=2))


if __name__ == "__main__":
    main()
