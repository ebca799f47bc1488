#!/usr/bin/env python3
"""Peak RSS of `mindgate serve` while N clients read one big run's graph at once.

    scripts/bench-graph-reads.py [--bin target/release/mindgate] [--nodes 100000] [--readers 8 16]

1. Starts `mindgate serve` on a free loopback port with a temporary MINDGATE_HOME and
   ingests one synthetic run of `--nodes` nodes over /ingest (node.started with a small
   input, node.finished with an output; every 10th node an llm with streamed tokens).
2. For each reader count: restarts the server under `/usr/bin/time -v`, fires that many
   concurrent `GET /api/runs/<id>/graph`, and reports the answers (status, bytes), the
   wall time and the server's "Maximum resident set size".

Needs the `websockets` package (in the test venv). Traffic stays on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

from websockets.sync.client import connect

REPO = pathlib.Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(bin_path: str, home: pathlib.Path, port: int, timed: bool) -> subprocess.Popen:
    env = dict(os.environ, MINDGATE_HOME=str(home), MINDGATE_LOG="warn")
    cmd = [bin_path, "serve", "--port", str(port), "--no-open", "--keep-runs", "0", "--keep-days", "0"]
    if timed:
        cmd = ["/usr/bin/time", "-v", *cmd]
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


def stop(proc: subprocess.Popen) -> str:
    # /usr/bin/time does not forward signals: stop the server it runs.
    children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
    for pid in children or [str(proc.pid)]:
        os.kill(int(pid), signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    return err


def frame(run: str, seq: int, ty: str, payload: dict) -> str:
    return json.dumps({"gm": 1, "seq": seq, "ts": 1_700_000_000_000 + seq, "runId": run, "type": ty, "payload": payload})


def ingest(port: int, run: str, nodes: int) -> int:
    hello = {
        "gm": 1, "seq": 0, "ts": 0, "runId": "*", "type": "hello",
        "payload": {"versions": {"protocol": 1, "client": "bench"}, "capabilities": ["pause"],
                    "app": "bench", "sdk": {"name": "bench", "version": "0"}},
    }
    seq = 0
    with connect(f"ws://127.0.0.1:{port}/ingest", max_size=None) as ws:
        ws.send(json.dumps(hello))
        ws.recv()

        def send(ty: str, payload: dict) -> None:
            nonlocal seq
            seq += 1
            ws.send(frame(run, seq, ty, payload))

        send("run.started", {"app": "bench", "sdk": {"name": "bench", "version": "0"}, "meta": {"name": "big"}})
        send("node.started", {"nodeId": "agent:root", "kind": "agent", "name": "root", "instanceId": "root"})
        for i in range(nodes - 1):
            llm = i % 10 == 0
            node_id = f"{'llm' if llm else 'tool'}:step-{i}"
            parent = "agent:root" if i < 100 else f"tool:step-{(i // 100) * 100 + 1}"
            send("node.started", {"nodeId": node_id, "kind": "llm" if llm else "tool", "name": f"step-{i}",
                                  "instanceId": f"i{i}", "parentId": parent,
                                  "input": {"query": f"look up item {i} in the catalogue", "limit": 10}})
            if llm:
                send("node.token", {"nodeId": node_id, "instanceId": f"i{i}",
                                    "deltas": [{"t": "text", "v": "The answer is "}, {"t": "text", "v": f"{i}."}]})
            send("node.finished", {"nodeId": node_id, "instanceId": f"i{i}", "status": "ok", "durationMs": 12.5,
                                   "output": {"items": [i, i + 1, i + 2], "note": "found"},
                                   **({"usage": {"inputTokens": 120, "outputTokens": 8}} if llm else {})})
        send("node.finished", {"nodeId": "agent:root", "instanceId": "root", "status": "ok", "durationMs": 1})
        send("run.finished", {"status": "ok"})
    return seq


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


def read_graphs(port: int, run: str, readers: int) -> list[tuple[int, int]]:
    results: list[tuple[int, int]] = [(0, 0)] * readers
    barrier = threading.Barrier(readers)

    def one(k: int) -> None:
        barrier.wait()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/runs/{run}/graph", timeout=300) as r:
                results[k] = (r.status, len(r.read()))
        except urllib.error.HTTPError as e:
            results[k] = (e.code, len(e.read()))
        except OSError:
            results[k] = (-1, 0)

    threads = [threading.Thread(target=one, args=(k,)) for k in range(readers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "mindgate"))
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--readers", type=int, nargs="+", default=[8, 16])
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = pathlib.Path(tmp)
        port = free_port()
        proc = start(args.bin, home, port, timed=False)
        t0 = time.monotonic()
        events = ingest(port, "big", args.nodes)
        wait_stored(port, "big", events)
        print(f"ingested {args.nodes} nodes / {events} events in {time.monotonic() - t0:.1f} s")
        stop(proc)
        for readers in [0, *args.readers]:
            proc = start(args.bin, home, port, timed=True)
            t0 = time.monotonic()
            results = read_graphs(port, "big", readers) if readers else []
            wall = time.monotonic() - t0
            err = stop(proc)
            m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
            peak_mb = int(m.group(1)) / 1024 if m else float("nan")
            codes: dict[int, int] = {}
            for code, _ in results:
                codes[code] = codes.get(code, 0) + 1
            size = max((n for _, n in results), default=0)
            print(f"{readers:>3} concurrent graph reads: peak RSS {peak_mb:.0f} MB, wall {wall:.1f} s, "
                  f"answers {codes}, body {size / 1e6:.1f} MB")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
