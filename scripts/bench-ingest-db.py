#!/usr/bin/env python3
"""Sustained ingest into the run store through the real binary: SQLite beside PostgreSQL.

Starts `mindgate serve` (its peak RSS read from /proc/PID/status VmHWM) on a free loopback port with
`--db` a fresh SQLite file or a fresh schema of the PostgreSQL at --postgres (default
$MINDGATE_TEST_POSTGRES_URL), then APPS processes each open one /ingest connection and send
EVENTS events of one run (a tool-call mix: node.started / node.token / node.finished with
small JSON payloads), all starting together. The figure is events stored per second, from the
first frame sent to the moment every run's stored count (`GET /api/runs/:id`) is complete.
Bounded: every loop has a count and a deadline; traffic stays on 127.0.0.1.

  scripts/bench-ingest-db.py --bin target/release/mindgate --apps 1 4 --events 100000

Prints one line per (backend, apps) with events/s, the server's peak RSS and the load average.

`--instances 2` (PostgreSQL only) starts two servers on the same schema and splits the apps
between them (app i talks to instance i mod N); the figure is still events stored per second
(read on the first instance, which sees every run through the shared store), with each
server's peak RSS. `--viewers` connects one `/ws/ui` viewer per server following the run list
(so each server's feed is busy, and on PostgreSQL each reads the other instances' events back).

  scripts/bench-ingest-db.py --backends postgres --instances 2 --apps 2 4 --events 50000
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
import uuid

from websockets.sync.client import connect


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def frames(run_id: str, events: int) -> list[str]:
    out: list[str] = []
    ts = int(time.time() * 1000)
    seq = 0

    def ev(type_: str, payload: dict) -> None:
        nonlocal seq
        out.append(json.dumps({"gm": 1, "seq": seq, "ts": ts + seq, "runId": run_id,
                               "type": type_, "payload": payload}, separators=(",", ":")))
        seq += 1

    ev("run.started", {"app": "bench", "sdk": {"name": "bench", "version": "0"},
                       "meta": {"name": run_id}})
    ev("node.started", {"nodeId": "agent:bench", "kind": "agent", "name": "bench",
                        "instanceId": run_id})
    i = 0
    while seq < events - 1:
        node = f"tool:t{i % 50}"
        inst = f"c{i}"
        ev("node.started", {"nodeId": node, "kind": "tool", "name": f"t{i % 50}",
                            "instanceId": inst, "parentId": "agent:bench",
                            "input": {"query": f"item {i}", "limit": 10}})
        ev("node.token", {"nodeId": node, "instanceId": inst,
                          "deltas": [{"t": "text", "v": "partial result "}]})
        ev("node.finished", {"nodeId": node, "instanceId": inst, "status": "ok",
                             "durationMs": 3, "output": {"hits": [i, i + 1], "ok": True}})
        i += 1
    out = out[: events - 1]
    seq = len(out)
    ev("run.finished", {"status": "ok"})
    return out


def app(url: str, run_id: str, events: int, start: mp.Event, ready: mp.Queue) -> None:
    prepared = frames(run_id, events)
    with connect(url, max_size=None, open_timeout=10) as ws:
        ws.send(json.dumps({"gm": 1, "seq": 0, "ts": int(time.time() * 1000), "runId": "*",
                            "type": "hello", "payload": {"versions": {"protocol": 1,
                            "client": "bench"}, "capabilities": [], "app": "bench"}}))
        json.loads(ws.recv(timeout=10))
        ready.put(run_id)
        start.wait(60)
        for f in prepared:
            ws.send(f)
        # Keep the connection until the server has it all (closing early is fine too:
        # frames already sent are stored), bounded.
        time.sleep(0.2)


def get(base: str, path: str) -> dict:
    with urllib.request.urlopen(base + path, timeout=10) as r:
        return json.loads(r.read())


def psql(url: str, sql: str) -> None:
    subprocess.run(["psql", url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql], check=True,
                   capture_output=True, timeout=60)


def peak_rss_mb(pid: int) -> int | None:
    """The server's peak resident set (`VmHWM`), in MB."""
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return None


def viewer(port: int, stop: threading.Event, seen: list[int]) -> None:
    """A viewer following the run list; counts the messages it gets until `stop`."""
    with connect(f"ws://127.0.0.1:{port}/ws/ui", max_size=None, open_timeout=10) as ws:
        ws.send(json.dumps({"type": "subscribe", "runId": "*"}))
        while not stop.is_set():
            try:
                ws.recv(timeout=0.5)
                seen[0] += 1
            except TimeoutError:
                continue


def wait_healthy(base: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            get(base, "/health")
            return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.05)


def one(bin_: str, backend: str, pg: str | None, apps: int, events: int, instances: int = 1,
        viewers: bool = False) -> dict:
    home = tempfile.mkdtemp(prefix="mg-bench-")
    schema = None
    if backend == "postgres":
        schema = f"mg_bench_{uuid.uuid4().hex[:10]}"
        psql(pg, f"CREATE SCHEMA {schema}")
        sep = "&" if "?" in pg else "?"
        db = f"{pg}{sep}options=-csearch_path%3D{schema}"
    else:
        db = os.path.join(home, "bench.db")
    ports = [free_port() for _ in range(instances)]
    servers = []
    stop_viewers = threading.Event()
    watchers: list[threading.Thread] = []
    for n, port in enumerate(ports):
        env = dict(os.environ, MINDGATE_HOME=os.path.join(home, f"home{n}"), MINDGATE_LOG="warn")
        servers.append(subprocess.Popen([bin_, "serve", "--port", str(port), "--no-open",
                                         "--keep-runs", "0", "--keep-days", "0", "--db", db],
                                        env=env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL))
    base = f"http://127.0.0.1:{ports[0]}"
    try:
        for port in ports:
            wait_healthy(f"http://127.0.0.1:{port}")
        seen = [[0] for _ in ports]
        if viewers:
            for port, count in zip(ports, seen):
                t = threading.Thread(target=viewer, args=(port, stop_viewers, count), daemon=True)
                t.start()
                watchers.append(t)
        start = mp.Event()
        ready: mp.Queue = mp.Queue()
        run_ids = [f"bench_{backend}_{apps}_{i}_{uuid.uuid4().hex[:6]}" for i in range(apps)]
        procs = [mp.Process(target=app, args=(f"ws://127.0.0.1:{ports[i % instances]}/ingest",
                                              r, events, start, ready))
                 for i, r in enumerate(run_ids)]
        for p in procs:
            p.start()
        for _ in procs:
            ready.get(timeout=120)
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        start.set()
        want = {r: events for r in run_ids}
        deadline = time.monotonic() + 600
        while want and time.monotonic() < deadline:
            for r in list(want):
                try:
                    got = get(base, f"/api/runs/{r}")["counts"]["events"]
                except OSError:
                    got = 0
                if got >= events:
                    del want[r]
            if want:
                time.sleep(0.02)
        elapsed = time.perf_counter() - t0
        for p in procs:
            p.join(30)
        if want:
            raise RuntimeError(f"not all events stored: {want}")
        failed = sum(get(f"http://127.0.0.1:{p}", "/health")["store"]["failedRows"]
                     for p in ports)
        rss = [peak_rss_mb(s.pid) for s in servers]
        out = {"peak_rss_mb": rss[0] if instances == 1 else rss, "backend": backend,
               "instances": instances, "apps": apps, "events": apps * events,
               "seconds": round(elapsed, 2), "events_per_s": round(apps * events / elapsed),
               "load_at_start": round(load, 1), "load_at_end": round(os.getloadavg()[0], 1),
               "failed_rows": failed}
        if viewers:
            out["viewer_messages"] = [c[0] for c in seen]
        return out
    finally:
        stop_viewers.set()
        for t in watchers:
            t.join(5)
        for s in servers:
            s.terminate()
        for s in servers:
            try:
                s.wait(30)
            except subprocess.TimeoutExpired:
                s.kill()
                s.wait()
        if schema:
            psql(pg, f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        shutil.rmtree(home, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/mindgate")
    ap.add_argument("--apps", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--events", type=int, default=100_000, help="events per app")
    ap.add_argument("--backends", nargs="+", default=["sqlite", "postgres"])
    ap.add_argument("--postgres", default=os.environ.get("MINDGATE_TEST_POSTGRES_URL"))
    ap.add_argument("--instances", type=int, nargs="+", default=[1],
                    help="servers on one database (more than 1: PostgreSQL only)")
    ap.add_argument("--viewers", action="store_true",
                    help="one run-list viewer per server during the run")
    args = ap.parse_args()
    for apps in args.apps:
        for backend in args.backends:
            if backend == "postgres" and not args.postgres:
                print("postgres: skipped (no --postgres / MINDGATE_TEST_POSTGRES_URL)")
                continue
            for instances in args.instances:
                if instances > 1 and backend != "postgres":
                    continue  # one server per SQLite file
                r = one(args.bin, backend, args.postgres, apps, args.events, instances,
                        args.viewers)
                print(json.dumps(r), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
