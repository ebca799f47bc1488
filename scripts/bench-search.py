#!/usr/bin/env python3
"""Search across everything, through the real binary: `GET /api/search` latency over a large
store, the index's bytes per event, and the ingest rate with and without the index, for the
SQLite FTS5 `trigram` tokenizer (what ships) beside `unicode61` (docs/search.md).

For each --modes entry, a fresh SQLite store (the index is a sibling file, `<db>.search`,
filled by the server's indexer thread behind the writer; docs/search.md):

1. `mindgate serve --db FILE` starts once (creating the schema and the index file) and stops.
2. The store is set up for the mode with apsw (a Python SQLite with FTS5's
   `contentless_delete`, SQLite >= 3.43; the Debian one is older):
   - `trigram`: as the binary made it;
   - `unicode61`: the index file's `search_fts` re-created with `tokenize = 'unicode61'`;
   - `off`: the run database's `search_queue` replaced by a view whose INSTEAD OF
     triggers do nothing, so the same binary stores every event, queues none and its
     indexer has nothing to index (the baseline ingest rate).
3. The server starts again; APPS processes each open one `/ingest` connection and send
   their share of EVENTS events as runs of RUN_EVENTS events (tool calls whose input and
   output carry sentences of a Zipf-distributed vocabulary of pseudo-words), all starting
   together. The ingest rate is events stored per second from the first frame to every
   app's last run being stored complete (`GET /api/runs/:id`; an app's runs are stored in
   the order it sent them), checked against the total at the end. Then the index lag:
   seconds from there until the index file's watermark reaches the queue's high water
   (every stored event indexed).
4. QUERIES searches (`GET /api/search?q=…&limit=20`, one at a time) over words of three
   frequency bands (rare / mid / common), a substring inside a word (trigram finds it,
   unicode61 does not) and a word no event holds; p50 / p95 overall and per band.
5. The server stops; `dbstat` sums the pages of the index file's tables (`search_rows`, its
   index, the `search_fts` shadow tables): index bytes per stored event.

Bounded: every loop has a count or a deadline; traffic stays on 127.0.0.1.

  nice scripts/bench-search.py --bin target/release/mindgate --events 1000000

Prints one JSON line per mode.
"""

from __future__ import annotations

import argparse
import bisect
import json
import multiprocessing as mp
import os
import random
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
import uuid

import apsw
from websockets.sync.client import connect

VOCAB = 20_000
WORDS_PER_TEXT = 12


def vocabulary() -> tuple[list[str], list[float]]:
    """VOCAB pseudo-words (5–10 letters, deterministic) and Zipf cumulative weights."""
    rng = random.Random(27)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < VOCAB:
        w = "".join(rng.choice(letters) for _ in range(rng.randint(5, 10)))
        if w not in seen:
            seen.add(w)
            words.append(w)
    cum: list[float] = []
    total = 0.0
    for rank in range(1, VOCAB + 1):
        total += 1.0 / rank
        cum.append(total)
    return words, cum


def frames(app_no: int, events: int, run_events: int) -> tuple[list[str], list[tuple[str, int]]]:
    """The app's frames (runs of `run_events` events) and its runs with their event counts."""
    words, cum = vocabulary()
    rng = random.Random(1000 + app_no)
    out: list[str] = []
    runs: list[tuple[str, int]] = []

    def sentence() -> str:
        return " ".join(rng.choices(words, cum_weights=cum, k=WORDS_PER_TEXT))

    left = events
    r = 0
    while left > 0:
        n = min(run_events, left)
        if n < 4:
            n = left
        run_id = f"bs{app_no}_{r}_{uuid.uuid4().hex[:6]}"
        ts = int(time.time() * 1000)
        seq = 0
        run_frames: list[str] = []

        def ev(type_: str, payload: dict) -> None:
            nonlocal seq
            run_frames.append(json.dumps({"gm": 1, "seq": seq, "ts": ts + seq, "runId": run_id,
                                          "type": type_, "payload": payload},
                                         separators=(",", ":")))
            seq += 1

        ev("run.started", {"app": "bench-search", "sdk": {"name": "bench", "version": "0"},
                           "meta": {"name": f"search bench {app_no}.{r}"}})
        i = 0
        while len(run_frames) < n - 1:
            node = f"tool:t{i % 40}"
            inst = f"c{i}"
            ev("node.started", {"nodeId": node, "kind": "tool", "name": f"t{i % 40}",
                                "instanceId": inst, "input": {"query": sentence()}})
            ev("node.finished", {"nodeId": node, "instanceId": inst, "status": "ok",
                                 "durationMs": 3, "output": {"text": sentence()}})
            i += 1
        del run_frames[n - 1:]
        seq = len(run_frames)
        ev("run.finished", {"status": "ok"})
        out.extend(run_frames)
        runs.append((run_id, len(run_frames)))
        left -= len(run_frames)
        r += 1
    return out, runs


def app(url: str, app_no: int, events: int, run_events: int, start, ready) -> None:
    prepared, runs = frames(app_no, events, run_events)
    with connect(url, max_size=None, open_timeout=10) as ws:
        ws.send(json.dumps({"gm": 1, "seq": 0, "ts": int(time.time() * 1000), "runId": "*",
                            "type": "hello", "payload": {"versions": {"protocol": 1,
                            "client": "bench"}, "capabilities": [], "app": "bench-search"}}))
        json.loads(ws.recv(timeout=10))
        ready.put(runs)
        start.wait(600)
        for f in prepared:
            ws.send(f)
        time.sleep(0.2)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(base: str, path: str) -> dict:
    with urllib.request.urlopen(base + path, timeout=60) as r:
        return json.loads(r.read())


def serve(bin_: str, db: str, home: str, port: int) -> subprocess.Popen:
    env = dict(os.environ, MINDGATE_HOME=home, MINDGATE_LOG="warn")
    p = subprocess.Popen([bin_, "serve", "--port", str(port), "--no-open", "--keep-runs", "0",
                          "--keep-days", "0", "--db", db], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            get(base, "/health")
            return p
        except OSError:
            if time.monotonic() > deadline or p.poll() is not None:
                p.kill()
                raise RuntimeError("server did not start")
            time.sleep(0.05)


def stop(p: subprocess.Popen) -> None:
    p.terminate()
    try:
        p.wait(60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def index_file(db: str) -> str:
    return db + ".search"


def set_mode(db: str, mode: str) -> None:
    """Sets up a fresh store for `mode` (see the module's text)."""
    if mode == "trigram":
        return
    if mode == "unicode61":
        c = apsw.Connection(index_file(db))
        c.execute("BEGIN")
        c.execute("DROP TABLE search_fts")
        c.execute("CREATE VIRTUAL TABLE search_fts USING fts5(body, content = '', "
                  "contentless_delete = 1, tokenize = 'unicode61')")
    elif mode == "off":
        c = apsw.Connection(db)
        c.execute("BEGIN")
        c.execute("DROP TABLE search_queue")
        c.execute("CREATE VIEW search_queue(id, run_key, first_seq, last_seq) AS "
                  "SELECT 0, 0, 0, 0 WHERE 0")
        c.execute("CREATE TRIGGER search_queue_off INSTEAD OF INSERT ON search_queue "
                  "BEGIN SELECT 1; END")
        c.execute("CREATE TRIGGER search_queue_off_del INSTEAD OF DELETE ON search_queue "
                  "BEGIN SELECT 1; END")
    else:
        raise ValueError(mode)
    c.execute("COMMIT")
    c.close()


def index_lag(db: str, deadline_s: float = 3600) -> float:
    """Seconds until the index file's watermark reaches the run database's queue high water."""
    t0 = time.perf_counter()
    deadline = time.monotonic() + deadline_s
    main = apsw.Connection(db, flags=apsw.SQLITE_OPEN_READONLY)
    idx = apsw.Connection(index_file(db), flags=apsw.SQLITE_OPEN_READONLY)
    main.set_busy_timeout(5000)
    idx.set_busy_timeout(5000)
    try:
        while time.monotonic() < deadline:
            high = next(main.execute("SELECT COALESCE((SELECT seq FROM sqlite_sequence "
                                     "WHERE name = 'search_queue'), 0)"))[0]
            row = list(idx.execute("SELECT value FROM search_meta WHERE key = 'watermark'"))
            if row and row[0][0] >= high:
                return round(time.perf_counter() - t0, 2)
            time.sleep(0.05)
    finally:
        main.close()
        idx.close()
    raise RuntimeError("the index did not catch up")


def index_bytes(db: str) -> tuple[int, int, int, int]:
    """(index bytes, run file bytes, index file bytes, stored events) of a stopped store."""
    c = apsw.Connection(db)
    events = next(c.execute("SELECT COUNT(*) FROM events"))[0]
    c.close()
    index = 0
    path = index_file(db)
    if os.path.exists(path):
        c = apsw.Connection(path)
        sizes = dict(c.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"))
        index = sum(v for k, v in sizes.items() if k.startswith("search_"))
        c.close()
    size_idx = os.path.getsize(path) if os.path.exists(path) else 0
    return index, os.path.getsize(db), size_idx, events


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return round(s[min(len(s) - 1, int(q * len(s)))], 1)


def queries(n: int) -> list[tuple[str, str]]:
    """`n` searches: rare / mid / common words, a substring inside a word, an absent word."""
    words, _ = vocabulary()
    rng = random.Random(5)
    bands = [("rare", 15_000, 19_999), ("mid", 200, 999), ("common", 0, 9)]
    out: list[tuple[str, str]] = []
    for i in range(n):
        k = i % 5
        if k < 3:
            name, lo, hi = bands[k]
            out.append((name, words[rng.randint(lo, hi)]))
        elif k == 3:
            w = words[rng.randint(50, 500)]
            out.append(("substring", w[1:5]))
        else:
            out.append(("absent", "zq" + "".join(rng.choice("xyz") for _ in range(6))))
    return out


def search_latency(base: str, n: int) -> dict:
    by: dict[str, list[float]] = {}
    hits: dict[str, list[int]] = {}
    all_ms: list[float] = []
    for band, q in queries(n):
        t0 = time.perf_counter()
        got = get(base, f"/api/search?q={urllib.parse.quote(q)}&limit=20")
        ms = (time.perf_counter() - t0) * 1000
        all_ms.append(ms)
        by.setdefault(band, []).append(ms)
        hits.setdefault(band, []).append(len(got.get("hits", [])))
    out = {"p50_ms": pct(all_ms, 0.5), "p95_ms": pct(all_ms, 0.95), "max_ms": round(max(all_ms), 1)}
    for band, xs in by.items():
        out[band] = {"p50_ms": pct(xs, 0.5), "p95_ms": pct(xs, 0.95),
                     "mean_hits": round(statistics.mean(hits[band]), 1)}
    return out


def ingest(bin_: str, db: str, home: str, apps: int, events: int, run_events: int) -> tuple[dict, str, subprocess.Popen]:
    port = free_port()
    server = serve(bin_, db, home, port)
    base = f"http://127.0.0.1:{port}"
    start = mp.Event()
    ready: mp.Queue = mp.Queue()
    share = events // apps
    procs = [mp.Process(target=app, args=(f"ws://127.0.0.1:{port}/ingest", i, share, run_events,
                                          start, ready)) for i in range(apps)]
    for p in procs:
        p.start()
    runs: list[list[tuple[str, int]]] = [ready.get(timeout=600) for _ in procs]
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    start.set()
    want = {r[-1][0]: r[-1][1] for r in runs}
    deadline = time.monotonic() + 1800
    while want and time.monotonic() < deadline:
        for run_id in list(want):
            try:
                got = get(base, f"/api/runs/{run_id}")["counts"]["events"]
            except OSError:
                got = 0
            if got >= want[run_id]:
                del want[run_id]
        if want:
            time.sleep(0.05)
    elapsed = time.perf_counter() - t0
    for p in procs:
        p.join(60)
    if want:
        stop(server)
        raise RuntimeError(f"not all events stored: {want}")
    total = apps * share
    return ({"events": total, "runs": sum(len(r) for r in runs), "seconds": round(elapsed, 2),
             "events_per_s": round(total / elapsed), "load_at_start": round(load, 1),
             "load_at_end": round(os.getloadavg()[0], 1)}, base, server)


def one(bin_: str, mode: str, apps: int, events: int, run_events: int, n_queries: int) -> dict:
    home = tempfile.mkdtemp(prefix="mg-bench-search-")
    db = os.path.join(home, "bench.db")
    try:
        stop(serve(bin_, db, os.path.join(home, "h0"), free_port()))
        set_mode(db, mode)
        result, base, server = ingest(bin_, db, os.path.join(home, "h1"), apps, events, run_events)
        try:
            result = {"mode": mode, "apps": apps, **result}
            if mode != "off":
                result["index_lag_s"] = index_lag(db)
                indexed = result["seconds"] + result["index_lag_s"]
                result["indexed_events_per_s"] = round(result["events"] / indexed)
                result["search"] = search_latency(base, n_queries)
        finally:
            stop(server)
        idx, size, size_idx, stored = index_bytes(db)
        if stored != result["events"]:
            raise RuntimeError(f"{stored} events stored, {result['events']} sent")
        result["index_bytes_per_event"] = round(idx / stored, 1)
        result["file_bytes_per_event"] = round(size / stored, 1)
        result["index_file_bytes_per_event"] = round(size_idx / stored, 1)
        return result
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/mindgate")
    ap.add_argument("--events", type=int, default=1_000_000, help="events in all")
    ap.add_argument("--apps", type=int, default=4)
    ap.add_argument("--run-events", type=int, default=5_000, help="events per run")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--modes", nargs="+", default=["off", "trigram"])
    args = ap.parse_args()
    for mode in args.modes:
        print(json.dumps(one(args.bin, mode, args.apps, args.events, args.run_events,
                             args.queries)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
