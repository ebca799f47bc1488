#!/usr/bin/env python3
"""Whole-binary hub benchmark (issue #10): what app churn costs `mindgate serve`
with many viewers attached, and what connections waiting for `hello` cost.

    scripts/bench_hub.py BIN [--apps 300] [--viewers 500] [--prehello 128]

Starts BIN (`mindgate serve`) on a free loopback port with a temporary home and
raised connection caps, then
1. opens `--prehello` /ingest connections that never say hello, and reports the
   server's CPU time and RSS while they wait and after the hello timeout closed them;
2. connects `--viewers` /ws/ui viewers, attaches `--apps` apps (each writes one
   event) and detaches them, and reports the server's CPU time, its peak RSS, the
   bytes every viewer received, and the RSS once everything is closed.
Reported, never asserted. Needs `websockets` (tests/python/requirements.txt).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import pathlib
import socket
import subprocess
import tempfile
import time
import urllib.request

from websockets.asyncio.client import connect


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proc:
    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.tick = os.sysconf("SC_CLK_TCK")

    def cpu(self) -> float:
        fields = open(f"/proc/{self.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self.tick

    def mem(self, key: str) -> int:
        for line in open(f"/proc/{self.pid}/status"):
            if line.startswith(key):
                return int(line.split()[1]) // 1024
        return 0


def frame(run: str, seq: int, ty: str, payload: dict) -> str:
    return json.dumps({"gm": 1, "seq": seq, "ts": int(time.time() * 1000), "runId": run, "type": ty, "payload": payload})


def hello(app: str) -> str:
    return frame("*", 0, "hello", {"versions": {"protocol": 1, "client": "bench"}, "capabilities": [], "app": app})


def prehello(port: int, proc: Proc, count: int) -> None:
    c0 = proc.cpu()
    socks = []
    for i in range(count):
        s = socket.create_connection(("127.0.0.1", port), source_address=(f"127.0.0.{2 + i % 8}", 0))
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall(
            f"GET /ingest HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        socks.append(s)
    for s in socks:
        s.settimeout(5)
        s.recv(4096)
    print(f"prehello: {count} waiting: cpu +{proc.cpu() - c0:.2f} s, rss {proc.mem('VmRSS')} MB")
    for s in socks:
        s.settimeout(30)
        try:
            while s.recv(4096):
                pass
        except OSError:
            pass
        s.close()
    print(f"prehello: all closed by the hello timeout: cpu +{proc.cpu() - c0:.2f} s, rss {proc.mem('VmRSS')} MB")


async def churn(port: int, token: str, proc: Proc, apps: int, viewers: int) -> None:
    received = [0] * viewers
    stop = asyncio.Event()
    detached = [0] * viewers

    async def viewer(i: int) -> None:
        async with connect(f"ws://127.0.0.1:{port}/ws/ui?token={token}", max_size=None) as ws:
            ready.release()
            async for msg in ws:
                received[i] += len(msg)
                if '"app.detached"' in msg:
                    detached[i] += 1
                if stop.is_set():
                    return

    ready = asyncio.Semaphore(0)
    tasks = [asyncio.create_task(viewer(i)) for i in range(viewers)]
    for _ in range(viewers):
        await ready.acquire()
    rss0, c0 = proc.mem("VmRSS"), proc.cpu()
    t0 = time.monotonic()
    conns = []
    for i in range(apps):
        ws = await connect(f"ws://127.0.0.1:{port}/ingest", max_size=None)
        await ws.send(hello(f"app-{i}"))
        await ws.recv()
        await ws.send(frame(f"run-{i}", 0, "node.token", {"nodeId": "llm:step", "deltas": []}))
        conns.append(ws)
    for ws in conns:
        await ws.close()
    # Wait until every viewer saw every detach (or 120 s).
    deadline = time.monotonic() + 120
    while min(detached) < apps and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    took = time.monotonic() - t0
    cpu = proc.cpu() - c0
    print(
        f"churn: {apps} apps attach+detach, {viewers} viewers: {took:.1f} s wall, server cpu {cpu:.2f} s, "
        f"rss {rss0} -> peak {proc.mem('VmHWM')} MB, per viewer {sum(received) / viewers / 1024:.1f} KiB received, "
        f"all detaches seen by {sum(1 for d in detached if d >= apps)}/{viewers}"
    )
    stop.set()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("--apps", type=int, default=300)
    ap.add_argument("--viewers", type=int, default=500)
    ap.add_argument("--prehello", type=int, default=128)
    args = ap.parse_args()
    home = pathlib.Path(tempfile.mkdtemp())
    port = free_port()
    env = dict(os.environ, MINDGATE_HOME=str(home), MINDGATE_LOG="warn",
               MINDGATE_MAX_CONNECTIONS="10000", MINDGATE_MAX_CONNECTIONS_PER_IP="10000")
    server = subprocess.Popen([args.bin, "serve", "--port", str(port), "--no-open"], env=env,
                              stdout=subprocess.DEVNULL, stderr=open(home / "serve.log", "w"))
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except OSError:
                time.sleep(0.05)
        token = json.loads((home / "run" / f"serve-{port}.json").read_text())["token"]
        proc = Proc(server.pid)
        print(f"idle: rss {proc.mem('VmRSS')} MB")
        if args.prehello:
            prehello(port, proc, args.prehello)
        if args.apps and args.viewers:
            asyncio.run(churn(port, token, proc, args.apps, args.viewers))
        time.sleep(2)
        print(f"after load, everything closed: rss {proc.mem('VmRSS')} MB (peak {proc.mem('VmHWM')} MB)")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
