#!/usr/bin/env python3
"""Control latency across two `mindgate serve` instances on one PostgreSQL.

Starts instances A and B (`--db` a fresh schema of the PostgreSQL at --postgres, default
$MINDGATE_TEST_POSTGRES_URL) on free loopback ports. One app (a raw /ingest WebSocket, so
the client adds no latency of its own) attaches to A and holds GATES gates one after the
other. For each gate it measures:

* held → listed on B: from sending `exec.paused` to A until B's `GET /api/pauses?wait=`
  (a long poll woken by B's hub) lists it;
* resume on B → `exec.resume` at the app on A: from just before `POST …/resume` to B until
  the app's socket reads the control;
* the same resume made on A (the app's own instance), as the baseline.

Prints p50 / p95 / p99 / max in ms of each, and the servers' peak RSS and the load average.
Bounded: GATES gates, every wait has a deadline, traffic on 127.0.0.1 only.

  scripts/bench-cluster-control.py --bin target/release/mindgate --gates 300
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.request
import uuid

from websockets.sync.client import connect

import importlib.util

_spec = importlib.util.spec_from_file_location(
    "bench_ingest_db", os.path.join(os.path.dirname(__file__), "bench-ingest-db.py")
)
_ingest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_ingest)
free_port, psql, peak_rss_mb, wait_healthy = (
    _ingest.free_port, _ingest.psql, _ingest.peak_rss_mb, _ingest.wait_healthy)


def request(base: str, method: str, path: str, token: str, body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def frame(run: str, seq: int, type_: str, payload: dict) -> str:
    return json.dumps({"gm": 1, "seq": seq, "ts": int(time.time() * 1000), "runId": run,
                       "type": type_, "payload": payload})


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def summary(name: str, ms: list[float]) -> str:
    return (f"{name:<36} n={len(ms):<4} p50 {pct(ms, 50):7.2f}  p95 {pct(ms, 95):7.2f}  "
            f"p99 {pct(ms, 99):7.2f}  max {max(ms):7.2f} ms  (mean {statistics.mean(ms):.2f})")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/mindgate")
    ap.add_argument("--gates", type=int, default=300)
    ap.add_argument("--postgres", default=os.environ.get("MINDGATE_TEST_POSTGRES_URL"))
    args = ap.parse_args()
    if not args.postgres:
        print("skipped: no --postgres and MINDGATE_TEST_POSTGRES_URL not set")
        return 0
    schema = f"mg_bench_cl_{uuid.uuid4().hex[:10]}"
    psql(args.postgres, f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in args.postgres else "?"
    url = f"{args.postgres}{sep}options=-csearch_path%3D{schema}"
    token = "bench-cluster-token-" + uuid.uuid4().hex
    env = dict(os.environ, MINDGATE_TOKEN=token, MINDGATE_LOG="warn")
    servers = []
    try:
        for name in ("a", "b"):
            home = tempfile.mkdtemp(prefix=f"mg-bench-cl-{name}-")
            port = free_port()
            proc = subprocess.Popen(
                [args.bin, "serve", "--port", str(port), "--no-open", "--otlp-port", "0",
                 "--db", url],
                env=dict(env, MINDGATE_HOME=home), stdout=subprocess.DEVNULL,
                stderr=open(os.path.join(home, "serve.log"), "wb"))
            base = f"http://127.0.0.1:{port}"
            wait_healthy(base)
            servers.append((proc, port, base))
        (_, port_a, base_a), (_, _, base_b) = servers
        got: "queue.Queue[tuple[str, float]]" = queue.Queue()
        run = "bench-cl-" + uuid.uuid4().hex[:8]
        with connect(f"ws://127.0.0.1:{port_a}/ingest", max_size=None, open_timeout=10) as app:
            app.send(json.dumps({"gm": 1, "seq": 0, "ts": 0, "runId": "*", "type": "hello",
                                 "payload": {"versions": {"protocol": 1, "client": "bench"},
                                             "capabilities": ["pause", "run-claim"],
                                             "app": "bench", "sdk": {"name": "bench",
                                                                     "version": "1"}}}))
            json.loads(app.recv(timeout=10))
            stop = threading.Event()

            def read() -> None:
                while not stop.is_set():
                    try:
                        msg = json.loads(app.recv(timeout=0.5))
                    except TimeoutError:
                        continue
                    except Exception:  # noqa: BLE001 - the socket closed at the end
                        return
                    if msg.get("type") == "exec.resume":
                        got.put((msg["payload"]["pauseId"], time.perf_counter()))

            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            seq = 1
            app.send(frame(run, seq, "run.started", {"app": "bench",
                                                     "sdk": {"name": "bench", "version": "1"}}))
            listed_ms: list[float] = []
            cross_ms: list[float] = []
            local_ms: list[float] = []
            for i in range(args.gates):
                pause = f"p{i}"
                seq += 1
                app.send(frame(run, seq, "node.started", {"nodeId": f"tool:t{i}", "kind": "tool",
                                                          "name": f"t{i}", "instanceId": f"i{i}"}))
                seq += 1
                t0 = time.perf_counter()
                app.send(frame(run, seq, "exec.paused", {"pauseId": pause, "nodeId": f"tool:t{i}",
                                                         "point": "before",
                                                         "reason": "breakpoint"}))
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline:
                    listed = request(base_b, "GET", f"/api/pauses?runId={run}&wait=2", token)
                    if any(p["pauseId"] == pause for p in listed["pauses"]):
                        break
                else:
                    raise RuntimeError(f"B never listed {pause}")
                listed_ms.append((time.perf_counter() - t0) * 1000)
                # Alternate: even gates resumed on B (cross-instance), odd ones on A (local).
                base = base_b if i % 2 == 0 else base_a
                answer: dict = {}

                def post() -> None:
                    answer.update(request(base, "POST", f"/api/runs/{run}/pauses/{pause}/resume",
                                          token, {"action": "continue"}))

                t1 = time.perf_counter()
                poster = threading.Thread(target=post)
                poster.start()
                got_pause, at = got.get(timeout=10)
                assert got_pause == pause, (got_pause, pause)
                (cross_ms if i % 2 == 0 else local_ms).append((at - t1) * 1000)
                seq += 1
                app.send(frame(run, seq, "exec.resumed", {"pauseId": pause,
                                                          "action": "continue"}))
                poster.join(15)
                assert answer.get("result") == "resumed", answer
            stop.set()
        print(f"{args.gates} gates, one app on A, load average {os.getloadavg()}")
        print(summary("held on A -> listed on B", listed_ms))
        print(summary("resume on B -> exec.resume at app on A", cross_ms))
        print(summary("resume on A -> exec.resume (same inst.)", local_ms))
        for name, (proc, _, _) in zip("AB", servers):
            print(f"server {name} peak RSS {peak_rss_mb(proc.pid)} MB")
    finally:
        for proc, _, _ in servers:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
        psql(args.postgres, f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
