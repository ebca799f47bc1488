"""Measures `mindgate serve` lifecycle figures on the real binary (reported, never asserted).

* SIGTERM -> exit with a half-sent HTTP request, and with a held graphmind-ai gate.
* kill -9 loss: ~100,000 events streamed, SIGKILL mid-stream, restart, count what is stored.
  - raw: one WebSocket app that never replays (what the server itself loses, plus what
    was still in the kernel's socket buffers);
  - graphmind-ai 0.5.1: the real client, which replays its ring buffer on reconnect.

Usage: MINDGATE_BIN=target/release/mindgate .venv/bin/python scripts/measure_lifecycle.py
"""

from __future__ import annotations

import asyncio
import json
import pathlib
import signal
import socket
import sqlite3
import sys
import tempfile
import threading
import time
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

import graphmind  # noqa: E402
import websockets  # noqa: E402

from conftest import BIN, MindgateServer, free_port  # noqa: E402

TOTAL = 100_000
KILL_AT = 50_000


def stored(db: str, run_id: str) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        (n,) = conn.execute(
            "SELECT COUNT(*) FROM events JOIN runs ON runs.key = events.run_key WHERE runs.id = ?", (run_id,)
        ).fetchone()
        return int(n)
    finally:
        conn.close()


def sigterm_time(server: MindgateServer) -> float:
    assert server.proc is not None
    t0 = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    server.proc.wait(timeout=30)
    server.proc = None
    return time.monotonic() - t0


def shutdown_with_half_sent_request(home: pathlib.Path) -> float:
    server = MindgateServer(home, free_port()).start()
    s = socket.create_connection(("127.0.0.1", server.port))
    s.sendall(f"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nX-Half".encode())
    with urllib.request.urlopen(server["base"] + "/health") as r:
        r.read()
    took = sigterm_time(server)
    s.close()
    return took


def shutdown_with_held_gate(home: pathlib.Path) -> float:
    server = MindgateServer(home, free_port()).start()
    server.request("POST", "/api/breakpoints", {"kind": "tool"})
    gm = graphmind.GraphMind(app="measure", url=server["ingest"], connect_timeout=2.0, handshake_timeout=2.0)
    assert gm.ready(5.0)

    @gm.tool
    def held(x: int) -> int:
        return x

    def body() -> None:
        with gm.run("held"):
            held(1)

    t = threading.Thread(target=body, daemon=True)
    t.start()
    server.wait_pause()
    took = sigterm_time(server)
    t.join(5)
    gm.dispose()
    return took


async def raw_stream(server: MindgateServer, run_id: str) -> int:
    """Streams TOTAL events; SIGKILLs the server after KILL_AT. Returns frames written."""
    hello = {
        "gm": 1, "seq": 0, "ts": 0, "runId": "*", "type": "hello",
        "payload": {"versions": {"protocol": 1, "client": "measure"}, "capabilities": ["run-claim"],
                    "app": "measure", "sdk": {"name": "measure", "version": "0"}},
    }
    written = 0
    async with websockets.connect(server["ingest"], max_size=None) as ws:
        await ws.send(json.dumps(hello))
        await ws.recv()
        now = int(time.time() * 1000)
        for seq in range(TOTAL):
            if seq == 0:
                payload = {"app": "measure", "sdk": {"name": "measure", "version": "0"}}
                ty = "run.started"
            else:
                payload = {"nodeId": "llm:m", "instanceId": "m1", "deltas": [{"t": "text", "v": f"tok{seq}"}]}
                ty = "node.token"
            frame = {"gm": 1, "seq": seq, "ts": now + seq, "runId": run_id, "type": ty, "payload": payload}
            try:
                await ws.send(json.dumps(frame))
            except websockets.ConnectionClosed:
                break
            written += 1
            if written == KILL_AT:
                server.kill()
                break
    return written


def kill9_raw(home: pathlib.Path) -> tuple[int, int]:
    server = MindgateServer(home, free_port()).start()
    written = asyncio.run(raw_stream(server, "raw-kill9"))
    server.start()
    n = stored(server["db"], "raw-kill9")
    server.stop()
    return written, n


def kill9_graphmind(home: pathlib.Path, buffer_size: int | None = None) -> tuple[int, int, int]:
    server = MindgateServer(home, free_port()).start()
    extra = {} if buffer_size is None else {"buffer_size": buffer_size}
    gm = graphmind.GraphMind(
        app="measure", url=server["ingest"], connect_timeout=2.0, handshake_timeout=2.0, retry_interval=0.1, **extra
    )
    assert gm.ready(5.0)

    @gm.tool
    def step(i: int) -> int:
        return i

    calls = TOTAL // 2
    killed = threading.Event()

    def killer() -> None:
        # Kill once about half the events have been emitted, then restart at once.
        while gm.stats().seq < KILL_AT:
            time.sleep(0.001)
        server.kill()
        killed.set()
        server.start()

    k = threading.Thread(target=killer, daemon=True)
    k.start()
    with gm.run("gm-kill9") as ctx:
        run_id = ctx.run_id
        for i in range(calls):
            step(i)
    k.join(30)
    assert killed.is_set()
    assert gm.ready(10.0)
    emitted = gm.stats().seq
    dropped = gm.stats().dropped
    # Wait until the replay has landed (bounded).
    deadline = time.monotonic() + 30
    last = -1
    while time.monotonic() < deadline:
        n = stored(server["db"], run_id)
        if n == last:
            break
        last = n
        time.sleep(0.5)
    gm.dispose()
    server.stop()
    return emitted, stored(server["db"], run_id), dropped


def main() -> None:
    print(f"binary: {BIN}")
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        print(f"SIGTERM -> exit, half-sent request: {shutdown_with_half_sent_request(root / 'a'):.2f} s")
        print(f"SIGTERM -> exit, held graphmind-ai gate: {shutdown_with_held_gate(root / 'b'):.3f} s")
        written, n = kill9_raw(root / "c")
        print(f"kill -9, raw app without replay: {written} frames written before SIGKILL, {n} stored, "
              f"{written - n} lost (server queue + kernel socket buffers)")
        for buffer_size in (None, 200_000):
            emitted, n, dropped = kill9_graphmind(root / f"d{buffer_size}", buffer_size)
            label = "default 2,000" if buffer_size is None else f"{buffer_size:,}"
            print(f"kill -9, graphmind-ai (ring buffer {label}) with replay: {emitted} events emitted, "
                  f"{n} stored, {emitted - n} lost (client evictions: {dropped})")


if __name__ == "__main__":
    main()
