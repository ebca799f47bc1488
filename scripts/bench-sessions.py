#!/usr/bin/env python3
"""Issue 31 figures: the session catalog and the session search index over many sessions.

Writes N synthetic Claude Code sessions of our own (default 1,000; each a few turns of user
messages, model text, tool calls and tool output drawn from a word list) into a temporary
folder, then measures the whole path a user runs:

1. `mindgate tasks --json`             — discovery + reading every session (the catalog), cold
2. `mindgate tasks --search WORD`      — the first search: builds the index in a fresh home
3. `mindgate tasks --search WORD`      — again: the index is current (only the stamps checked)
4. `mindgate serve` + `GET /task-graph/api/search?q=…` — p50 / p95 / max over many queries once
   the server's catalog and the index are warm; and `GET /task-graph/api/usage` likewise.

Prints wall times (and peak RSS for the CLI runs via /usr/bin/time when present). Speed is
reported, never asserted. Usage: scripts/bench-sessions.py [sessions (1000)] [queries (50)]
Environment: MINDGATE_BIN (default target/release/mindgate).
"""

import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = os.environ.get("MINDGATE_BIN", str(ROOT / "target/release/mindgate"))
WORDS = (
    "upload parser retry config cache token index schema migration render widget queue "
    "socket payload header cursor buffer thread kernel module vector matrix tensor graph "
    "router handler session cookie request response timeout deadline backoff jitter ledger "
    "invoice account balance report export import archive bucket object stream channel"
).split()


def write_session(path: Path, n: int, rng: random.Random) -> None:
    sid = f"bench-{n:05d}"
    t0 = 1_780_000_000_000 + n * 3_600_000
    lines = []
    seq = 0

    def stamp(ms: int) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"

    def line(kind: str, msg: dict, ms: int) -> None:
        nonlocal seq
        seq += 1
        lines.append(json.dumps({
            "type": kind, "uuid": f"{sid}-{seq}", "sessionId": sid, "cwd": f"/work/p{n % 37}",
            "timestamp": stamp(ms), "version": "2.0.0", "message": msg,
        }))

    ms = t0
    for turn in range(rng.randint(2, 5)):
        words = " ".join(rng.choice(WORDS) for _ in range(12))
        line("user", {"role": "user", "content": f"please fix the {words}"}, ms)
        for step in range(rng.randint(2, 6)):
            ms += rng.randint(500, 4000)
            call = f"toolu_{n}_{turn}_{step}"
            text = " ".join(rng.choice(WORDS) for _ in range(30))
            line("assistant", {
                "id": f"msg_{n}_{turn}_{step}", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": text},
                            {"type": "tool_use", "id": call, "name": "Bash",
                             "input": {"command": f"grep -rn {rng.choice(WORDS)} src/"}}],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": rng.randint(10, 900), "output_tokens": rng.randint(20, 400),
                          "cache_read_input_tokens": rng.randint(0, 20000),
                          "cache_creation_input_tokens": rng.randint(0, 3000)},
            }, ms)
            ms += rng.randint(100, 3000)
            out = "\n".join(f"src/{rng.choice(WORDS)}.ts:{i}: {' '.join(rng.choice(WORDS) for _ in range(8))}"
                            for i in range(rng.randint(3, 30)))
            line("user", {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call, "content": out}]}, ms)
        ms += 1000
        line("assistant", {"id": f"msg_{n}_{turn}_end", "role": "assistant", "model": "claude-sonnet-4-5",
                           "content": [{"type": "text", "text": "done: " + " ".join(rng.choice(WORDS) for _ in range(20))}],
                           "stop_reason": "end_turn",
                           "usage": {"input_tokens": 10, "output_tokens": 50, "cache_read_input_tokens": 100}}, ms)
        ms += rng.randint(10_000, 60_000)
    path.write_text("\n".join(lines) + "\n")


def timed(cmd, env) -> tuple[float, str]:
    """Runs `cmd` (under /usr/bin/time -v when present); returns (seconds, peak RSS text)."""
    wrap = ["/usr/bin/time", "-v"] if Path("/usr/bin/time").exists() else []
    t = time.perf_counter()
    p = subprocess.run(wrap + cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    took = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {p.stderr[-2000:]}")
    rss = next((l.split(":")[1].strip() for l in p.stderr.splitlines() if "Maximum resident" in l), "?")
    return took, f"{int(rss) // 1024} MiB" if rss.isdigit() else rss


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentiles(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2], xs[min(len(xs) - 1, int(len(xs) * 0.95))], xs[-1]


def serve_figures(base: Path, home: Path, env, queries: list[str]) -> None:
    port = free_port()
    args = [BIN, "serve", "--port", str(port), "--no-default-homes", "--claude-projects", str(base)]
    proc = subprocess.Popen(args, env={**env, "MINDGATE_HOME": str(home)},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"{url}/task-graph/api/status", timeout=60).read()
                break
            except OSError:
                time.sleep(0.1)
        t = time.perf_counter()
        urllib.request.urlopen(f"{url}/task-graph/api/search?q=warmup", timeout=600).read()
        print(f"serve: first search (catalog read + index current) {time.perf_counter() - t:.2f} s")
        lat = []
        for q in queries:
            t = time.perf_counter()
            body = json.loads(urllib.request.urlopen(f"{url}/task-graph/api/search?q={q}&limit=50", timeout=60).read())
            lat.append((time.perf_counter() - t) * 1000)
            assert body["indexed"]["indexed"] == 0, body["indexed"]
        p50, p95, mx = percentiles(lat)
        print(f"serve: GET /task-graph/api/search, {len(lat)} queries: p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {mx:.1f} ms")
        lat = []
        for by in ["day", "week", "month", "session", "agent", "model", "project"] * 5:
            t = time.perf_counter()
            urllib.request.urlopen(f"{url}/task-graph/api/usage?by={by}", timeout=60).read()
            lat.append((time.perf_counter() - t) * 1000)
        p50, p95, mx = percentiles(lat)
        print(f"serve: GET /task-graph/api/usage, {len(lat)} reports: p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {mx:.1f} ms")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    q = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    if not Path(BIN).exists():
        sys.exit(f"skipped: no binary at {BIN} (cargo build --release -p mindgate-cli, or set MINDGATE_BIN)")
    work = Path(tempfile.mkdtemp(prefix="mg-bench-sessions-"))
    try:
        rng = random.Random(1)
        base = work / "projects"
        for i in range(n):
            folder = base / f"-work-p{i % 37}"
            folder.mkdir(parents=True, exist_ok=True)
            write_session(folder / f"bench-{i:05d}.jsonl", i, rng)
        size = sum(f.stat().st_size for f in base.rglob("*.jsonl"))
        print(f"{n} sessions, {size / 1e6:.1f} MB; binary {BIN}; load {os.getloadavg()[0]:.1f}")
        home = work / "home"
        env = {**os.environ, "MINDGATE_HOME": str(home)}
        flags = ["--no-default-homes", "--claude-projects", str(base)]
        took, rss = timed([BIN, "tasks", "--json", *flags], env)
        print(f"mindgate tasks --json (catalog of {n}): {took:.2f} s, peak {rss}")
        took, rss = timed([BIN, "tasks", "--search", "jitter", *flags], env)
        print(f"mindgate tasks --search (first: builds the index): {took:.2f} s, peak {rss}")
        took, rss = timed([BIN, "tasks", "--search", "ledger", *flags], env)
        print(f"mindgate tasks --search (index current): {took:.2f} s, peak {rss}")
        db = home / "session-search.db"
        print(f"index file: {db.stat().st_size / 1e6:.1f} MB")
        queries = [f"{a}+{b}" if i % 3 == 0 else a for i, (a, b) in
                   enumerate(zip(rng.choices(WORDS, k=q), rng.choices(WORDS, k=q)))]
        serve_figures(base, home, env, queries)
        print(f"load after: {os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
