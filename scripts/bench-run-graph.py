#!/usr/bin/env python3
"""The two run-graph designs on the server side: what `mindgate serve` spends to bring
N viewers a big stored run over `/ws/ui` — the event replay a client folds itself
(`subscribe {runId, events: true}`; the viewer folded it before) against the server
projection (`subscribe {runId}`, what the viewer follows: a snapshot, then deltas). See docs/architecture.md § "One run graph".

    scripts/bench-run-graph.py [--bin target/release/mindgate] [--nodes 5000] [--events 100000] [--viewers 1 8]

1. Starts `mindgate serve` on a free loopback port with a temporary MINDGATE_HOME and
   stores one synthetic run (tests/browser/agents/synthetic_ingest.py: the run the browser
   perf tests open).
2. For each design and viewer count: restarts the server (cold caches, a fresh peak),
   connects that many viewers at once, each subscribes and reads until its graph is
   complete (`replay.end`, or the last `graph.snapshot` part), and reports per viewer the wall time
   (subscribe → complete) and the bytes received, and for the server the CPU time it
   spent (user + system, /proc/PID/stat) and its peak RSS (VmHWM).

The viewers here only count bytes; the page's share (parse, apply, draw) is measured in
chromium by tests/browser/projection.test.mjs (MINDGATE_PERF_PROJECTION=1). The viewers
run in this Python process, so with 8 of them their wall time includes this process's
share of the machine; the server CPU figure does not. Traffic stays on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from websockets.asyncio.client import connect

REPO = pathlib.Path(__file__).resolve().parents[1]
PYTHON = sys.executable
TICK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(bin_path: str, home: pathlib.Path, port: int) -> subprocess.Popen:
    env = dict(os.environ, MINDGATE_HOME=str(home), MINDGATE_LOG="warn")
    cmd = [bin_path, "serve", "--port", str(port), "--no-open", "--keep-runs", "0", "--keep-days", "0"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):
                return proc
        except (urllib.error.URLError, OSError):
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("server did not start")


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)


def cpu_seconds(pid: int) -> float:
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def peak_rss_mb(pid: int) -> float:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def wait_stored(port: int, run: str, events: int) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/runs/{run}", timeout=5) as r:
                if json.load(r)["counts"]["events"] >= events:
                    return
        except urllib.error.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit("events were not stored in time")


async def viewer(port: int, run: str, projection: bool) -> tuple[float, int, int]:
    """Subscribes and reads until the graph is complete: (seconds, bytes, messages)."""
    async with connect(f"ws://127.0.0.1:{port}/ws/ui", max_size=None, compression=None, open_timeout=30) as ws:
        await ws.recv()  # welcome
        sub = {"type": "subscribe", "runId": run, "projection": True} if projection else {"type": "subscribe", "runId": run, "events": True}
        t0 = time.perf_counter()
        await ws.send(json.dumps(sub))
        received = 0
        messages = 0
        while True:
            msg = await ws.recv(decode=False)
            received += len(msg)
            messages += 1
            head = msg[:40]
            if projection and head.startswith(b'{"type":"graph.snapshot"') and msg.endswith(b'"more":false}'):
                return time.perf_counter() - t0, received, messages
            if not projection and len(msg) < 200 and b'"type":"replay.end"' in msg:
                return time.perf_counter() - t0, received, messages


async def viewers(port: int, run: str, projection: bool, count: int) -> list[tuple[float, int, int]]:
    return await asyncio.gather(*(viewer(port, run, projection) for _ in range(count)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "mindgate"))
    ap.add_argument("--nodes", type=int, default=5_000)
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--viewers", type=int, nargs="+", default=[1, 8])
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = pathlib.Path(tmp)
        port = free_port()
        proc = start(args.bin, home, port)
        ingest = subprocess.run(
            [PYTHON, str(REPO / "tests/browser/agents/synthetic_ingest.py"), f"ws://127.0.0.1:{port}/ingest",
             str(args.nodes), str(args.events)],
            capture_output=True, text=True, timeout=600, check=True)
        _, run, sent = ingest.stdout.split()[:3]
        wait_stored(port, run, int(sent))
        stop(proc)
        print(f"stored run {run}: {args.nodes} nodes / {sent} events; load {os.getloadavg()}")
        rows = []
        for projection in (False, True):
            for count in args.viewers:
                proc = start(args.bin, home, port)
                idle_mb = peak_rss_mb(proc.pid)
                cpu0 = cpu_seconds(proc.pid)
                t0 = time.perf_counter()
                results = asyncio.run(viewers(port, run, projection, count))
                wall = time.perf_counter() - t0
                cpu = cpu_seconds(proc.pid) - cpu0
                peak = peak_rss_mb(proc.pid)
                stop(proc)
                row = {
                    "design": "server projection" if projection else "event replay (page folds)",
                    "viewers": count,
                    "wallS": round(wall, 2),
                    "perViewerCompleteS": [round(r[0], 2) for r in results],
                    "bytesPerViewer": results[0][1],
                    "messagesPerViewer": results[0][2],
                    "serverCpuS": round(cpu, 2),
                    "serverPeakRssMB": round(peak, 1),
                    "serverIdleRssMB": round(idle_mb, 1),
                    "load": [round(x, 2) for x in os.getloadavg()],
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
    print("BENCH-RUN-GRAPH " + json.dumps(rows))


if __name__ == "__main__":
    main()
