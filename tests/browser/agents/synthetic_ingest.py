"""Ingests one synthetic big run into a Mindgate server over /ingest, speaking
wire protocol v1 like a GraphMind client (hello → hello.ack → events).

Usage: synthetic_ingest.py ws://127.0.0.1:PORT/ingest NODES EVENTS [--tail]
Prints `RUN <runId> <events sent>` when every frame has been sent.
With --tail the run stays open (no run.finished) and the connection too: each
line read from stdin sends one node.started of a new node `tool:live-<line>`
under the root agent, its input carrying `sentAt` (epoch ms, sub-ms), and
prints `SENT <line>`; at the end of stdin the run finishes.
The shape matches ui/dist/js/perf.js: agent → 50 chains → 500 agents → leaves,
then repeated executions of the leaves until the event budget is spent.
"""

from __future__ import annotations

import json
import sys
import time

from websockets.sync.client import connect


def many_runs(url: str, count: int) -> int:
    """`synthetic_ingest.py URL runs COUNT`: COUNT small finished runs, one ms apart."""
    base = int(time.time() * 1000) - count * 1000
    with connect(url, max_size=None, open_timeout=10) as ws:
        ws.send(json.dumps({"gm": 1, "seq": 0, "ts": base, "runId": "*", "type": "hello",
                            "payload": {"versions": {"protocol": 1, "client": "synthetic"}, "capabilities": [], "app": "many"}}))
        json.loads(ws.recv(timeout=10))
        for i in range(count):
            run_id = f"run_many_{i:05d}"
            ts = base + i * 1000
            frames = [
                ("run.started", {"app": "many", "sdk": {"name": "synthetic", "version": "0"}, "meta": {"name": f"run-{i:05d}"}}),
                ("node.started", {"nodeId": "agent:many", "kind": "agent", "name": "many", "instanceId": run_id}),
                ("node.finished", {"nodeId": "agent:many", "instanceId": run_id, "durationMs": 5, "status": "ok"}),
                ("run.finished", {"status": "ok" if i % 10 else "error"}),
            ]
            for seq, (type_, payload) in enumerate(frames):
                ws.send(json.dumps({"gm": 1, "seq": seq, "ts": ts + seq, "runId": run_id, "type": type_, "payload": payload}))
    print(f"RUNS {count}", flush=True)
    return 0


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[2] == "runs":
        return many_runs(sys.argv[1], int(sys.argv[3]))
    tail = "--tail" in sys.argv[4:]
    url, nodes, events = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    run_id = f"run_synthetic_{int(time.time() * 1000)}"
    seq = 0
    ts = int(time.time() * 1000) - 600_000
    frames: list[str] = []

    def ev(type_: str, payload: dict) -> None:
        nonlocal seq, ts
        ts += 3
        frames.append(json.dumps({"gm": 1, "seq": seq, "ts": ts, "runId": run_id, "type": type_, "payload": payload}))
        seq += 1

    made = 0
    leaves: list[tuple[str, str, str]] = []
    opened: list[str] = []

    def node(node_id: str, kind: str, name: str, parent: str | None) -> str:
        nonlocal made
        made += 1
        p = {"nodeId": node_id, "kind": kind, "name": name, "instanceId": f"{node_id}#0", "input": {"step": made}}
        if parent:
            p["parentId"] = parent
        ev("node.started", p)
        return node_id

    ev("run.started", {"app": "synthetic", "sdk": {"name": "synthetic-ingest", "version": "0"}, "meta": {"name": f"synthetic {nodes} nodes"}})
    root = node("agent:synthetic", "agent", "synthetic", None)
    opened.append(root)
    fan1, fan2 = 50, 10
    per = -(-(nodes - 1 - fan1 - fan1 * fan2) // (fan1 * fan2))
    for a in range(fan1):
        if made >= nodes:
            break
        c = node(f"chain:stage-{a}", "chain", f"stage-{a}", root)
        opened.append(c)
        for b in range(fan2):
            if made >= nodes:
                break
            s = node(f"agent:worker-{a}-{b}", "agent", f"worker-{a}-{b}", c)
            opened.append(s)
            for leaf in range(per):
                if made >= nodes:
                    break
                kind = "llm" if leaf % 3 == 0 else "tool"
                name = f"{'step' if kind == 'llm' else 'search'}-{a}-{b}-{leaf}"
                nid = node(f"{kind}:w{a}-{b}-{leaf}", kind, name, s)
                leaves.append((nid, kind, name))
                ev("node.finished", {"nodeId": nid, "instanceId": f"{nid}#0", "durationMs": 5, "status": "ok", "output": {"rows": leaf}})
    k = 0
    while seq < events - len(opened) - 1:
        nid, kind, name = leaves[(k * 7919) % len(leaves)]
        inst = f"{nid}#r{k}"
        k += 1
        ev("node.started", {"nodeId": nid, "kind": kind, "name": name, "instanceId": inst})
        ev("node.finished", {"nodeId": nid, "instanceId": inst, "durationMs": 2, "status": "ok", "usage": {"inputTokens": 10, "outputTokens": 5}})
    for nid in reversed(opened):
        ev("node.finished", {"nodeId": nid, "instanceId": f"{nid}#0", "durationMs": 1000, "status": "ok"})
    if not tail:
        ev("run.finished", {"status": "ok"})

    with connect(url, max_size=None, open_timeout=10) as ws:
        ws.send(json.dumps({"gm": 1, "seq": 0, "ts": int(time.time() * 1000), "runId": "*", "type": "hello",
                            "payload": {"versions": {"protocol": 1, "client": "synthetic"}, "capabilities": [], "app": "synthetic"}}))
        ack = json.loads(ws.recv(timeout=10))
        if ack.get("type") != "hello.ack":
            print(f"unexpected handshake answer: {ack}", file=sys.stderr)
            return 1
        for f in frames:
            ws.send(f)
        print(f"RUN {run_id} {len(frames)}", flush=True)
        if not tail:
            return 0
        for line in sys.stdin:
            name = line.strip()
            if not name:
                continue
            nid = f"tool:live-{name}"
            sent_at = time.time() * 1000
            ws.send(json.dumps({"gm": 1, "seq": seq, "ts": int(time.time() * 1000), "runId": run_id, "type": "node.started",
                                "payload": {"nodeId": nid, "kind": "tool", "name": f"live-{name}", "parentId": root,
                                            "instanceId": f"{nid}#0", "input": {"sentAt": sent_at}}}))
            seq += 1
            print(f"SENT {name} {sent_at:.3f}", flush=True)
        ws.send(json.dumps({"gm": 1, "seq": seq, "ts": int(time.time() * 1000), "runId": run_id, "type": "run.finished",
                            "payload": {"status": "ok"}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
