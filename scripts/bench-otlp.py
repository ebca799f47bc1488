#!/usr/bin/env python3
"""Spans/s over OTLP/HTTP protobuf into a real `mindgate serve` (release build advised).

Run it in the OpenTelemetry test environment (it encodes with `opentelemetry-proto`):

    .venv-otel/bin/python scripts/bench-otlp.py --bin target/release/mindgate \
        --spans 200000 --batch 512 --senders 1 4

Each trace is an agent with 3 model calls (usage, messages) and 4 tool calls (8 spans,
children first as exporters send them); batches are gzip protobuf, `--senders` threads post
at once. Prints spans/s and events/s (a span is 2 events: started + finished) per sender
count, the server's peak RSS (VmHWM) and the load average. Bounded: `--spans` in total,
loopback only; the server and its temporary home are removed at the end.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def kv(key: str, value) -> KeyValue:
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=value))


MESSAGES = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Plan a trip to Lisbon"}]}])


def trace_spans(rng: random.Random) -> list[Span]:
    trace = rng.randbytes(16)
    root = rng.randbytes(8)
    now = time.time_ns()
    spans = []
    for i in range(7):
        llm = i % 2 == 0
        attrs = (
            [kv("gen_ai.operation.name", "chat"), kv("gen_ai.request.model", "gpt-4o"),
             kv("gen_ai.usage.input_tokens", 120), kv("gen_ai.usage.output_tokens", 30),
             kv("gen_ai.input.messages", MESSAGES)]
            if llm
            else [kv("gen_ai.operation.name", "execute_tool"), kv("gen_ai.tool.name", f"tool_{i}"),
                  kv("gen_ai.tool.call.arguments", '{"city": "Lisbon"}')]
        )
        spans.append(Span(trace_id=trace, span_id=rng.randbytes(8), parent_span_id=root,
                          name="chat gpt-4o" if llm else f"execute_tool tool_{i}",
                          start_time_unix_nano=now + i * 1000, end_time_unix_nano=now + i * 1000 + 500,
                          attributes=attrs))
    spans.append(Span(trace_id=trace, span_id=root, name="invoke_agent planner",
                      start_time_unix_nano=now, end_time_unix_nano=now + 10_000,
                      attributes=[kv("gen_ai.operation.name", "invoke_agent"), kv("gen_ai.agent.name", "planner")]))
    return spans


def bodies(total: int, batch: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    out, spans = [], []
    made = 0
    while made < total:
        spans.extend(trace_spans(rng))
        made += 8
        if len(spans) >= batch or made >= total:
            req = ExportTraceServiceRequest(resource_spans=[ResourceSpans(
                resource={"attributes": [kv("service.name", "bench")]},
                scope_spans=[ScopeSpans(spans=spans)])])
            out.append(gzip.compress(req.SerializeToString(), 1))
            spans = []
    return out


def vm_hwm_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/mindgate")
    ap.add_argument("--spans", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--senders", type=int, nargs="+", default=[1, 4])
    args = ap.parse_args()
    for senders in args.senders:
        home = tempfile.mkdtemp(prefix="mindgate-bench-otlp-")
        port, otlp = free_port(), free_port()
        proc = subprocess.Popen([args.bin, "serve", "--port", str(port), "--otlp-port", str(otlp), "--no-open",
                                 "--keep-runs", "0"],
                                env=dict(os.environ, MINDGATE_HOME=home, MINDGATE_LOG="warn"),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
                    break
                except OSError:
                    time.sleep(0.05)
            per = [bodies(args.spans // senders, args.batch, seed) for seed in range(senders)]
            url = f"http://127.0.0.1:{otlp}/v1/traces"
            errors = []

            def send(chunk: list[bytes]) -> None:
                for body in chunk:
                    req = urllib.request.Request(url, data=body, method="POST", headers={
                        "Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"})
                    with urllib.request.urlopen(req, timeout=60) as r:
                        if r.status != 200:
                            errors.append(r.status)

            threads = [threading.Thread(target=send, args=(c,)) for c in per]
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.perf_counter() - t0
            spans = (args.spans // senders) * senders
            print(f"senders={senders} spans={spans} batch={args.batch} wall={wall:.2f}s "
                  f"spans/s={spans / wall:,.0f} events/s={2 * spans / wall:,.0f} "
                  f"peak_rss={vm_hwm_mb(proc.pid):.0f}MB errors={len(errors)} load={os.getloadavg()}")
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
