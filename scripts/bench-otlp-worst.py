#!/usr/bin/env python3
"""Worst-case OTLP requests against a fresh `mindgate serve`: time to answer and the
server's peak RSS (VmHWM) for each, reported, never asserted (docs/otlp.md, Figures). The multiple is the peak RSS over the
idle server's, divided by the request's decompressed size.

    python3 scripts/bench-otlp-worst.py --bin target/release/mindgate

Rows (each on a fresh server, protobuf, gzip):
  * chain   — 250,000 spans of one trace, each the parent of the next (15 MB);
  * cycle   — the same spans whose parents form one cycle;
  * traces  — 250,000 spans, one trace each (250,000 runs);
  * bomb    — one span whose attribute holds 8,000,000 empty values (16 MB), plus one
              that fits;
and, while `cycle` is mapped, how long a one-span export from another client waits.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "attack"))
import otlp_wire as wire  # noqa: E402

TRACE = 0x7E57_0000_0000_0000_0000_0000_0000_0001
N = 250_000  # --spans


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def vm_kib(pid: int, field: str) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


class Server:
    def __init__(self, binary: str) -> None:
        self.home = pathlib.Path(tempfile.mkdtemp(prefix="mg-otlp-bench-"))
        self.port = free_port()
        env = dict(os.environ, MINDGATE_HOME=str(self.home), MINDGATE_LOG="warn")
        self.proc = subprocess.Popen(
            [binary, "serve", "--port", str(self.port), "--otlp-port", "0", "--no-open"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.base}/ready", timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("server did not start")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)
        shutil.rmtree(self.home, ignore_errors=True)


def spans(kind: str) -> list[bytes]:
    if kind == "chain":
        return [wire.pb_span(TRACE, i, i - 1 if i > 1 else None, "s") for i in range(1, N + 1)]
    if kind == "cycle":
        return [wire.pb_span(TRACE, i, i % N + 1, "s") for i in range(1, N + 1)]
    if kind == "traces":
        return [wire.pb_span(TRACE + i, 1, None, "s") for i in range(1, N + 1)]
    empties = wire.field(1, b"") * 8_000_000
    return [
        wire.pb_span(TRACE, 1, None, "bomb", wire.pb_attribute("huge", wire.pb_array(empties))),
        wire.pb_span(TRACE, 2, 1, "fine"),
    ]


def row(binary: str, kind: str, probe: bool) -> None:
    body = wire.pb_export(spans(kind))
    server = Server(binary)
    try:
        pid = server.proc.pid
        rss0 = vm_kib(pid, "VmRSS")
        cpu0 = cpu_s(pid)
        other: dict[str, float] = {}

        def lone() -> None:
            time.sleep(0.2)
            t = time.monotonic()
            wire.post(server.base, wire.export_json([wire.span(0xABC, 1, None, "lone")]), timeout=600)
            other["wait"] = time.monotonic() - t

        helper = threading.Thread(target=lone) if probe else None
        t0 = time.monotonic()
        if helper:
            helper.start()
        status, answer = wire.post(server.base, body, "application/x-protobuf", gz=True, timeout=900)
        took = time.monotonic() - t0
        if helper:
            helper.join(600)
        rejected, _ = wire.pb_partial(answer) if status == 200 else (-1, "")
        peak = vm_kib(pid, "VmHWM")
        # What the request cost over the idle server, as a multiple of its decompressed body.
        multiple = (peak - rss0) * 1024 / len(body)
        print(
            f"{kind:7} {len(body) / 2**20:5.1f} MiB  status {status}  rejected {rejected}  "
            f"{took:6.2f} s (server CPU {cpu_s(pid) - cpu0:6.2f} s)  RSS {rss0 / 1024:5.0f} -> peak {peak / 1024:5.0f} MiB "
            f"({multiple:4.1f}x the body)"
            + (f"  other client waited {other.get('wait', float('nan')):.2f} s" if probe else ""),
            flush=True,
        )
    finally:
        server.close()


def main() -> None:
    global N
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=str(REPO / "target" / "debug" / "mindgate"))
    ap.add_argument("--rows", nargs="*", default=["bomb", "chain", "cycle", "traces"])
    ap.add_argument("--spans", type=int, default=N)
    args = ap.parse_args()
    N = args.spans
    for kind in args.rows:
        row(args.bin, kind, probe=kind == "cycle")


if __name__ == "__main__":
    main()
