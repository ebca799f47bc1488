"""A raw protocol app for the pause-panel test: one tool call held at an editable
`before` gate (the GraphMind head's `exec.paused.editable`). Prints `HELD`, then
`RESUME <payload>` for every `exec.resume` it gets; it refuses an input that is not
an object (`exec.refused` code `shape`) and runs with an accepted one, then `DONE`."""

from __future__ import annotations

import json
import os
import sys
import time

from websockets.sync.client import connect

URL = os.environ["GRAPHMIND_URL"]
RUN = "edit-run"
NAME = os.environ.get("AGENT_RUN_NAME", "edit-1")


def main() -> int:
    seq = 0
    with connect(URL, open_timeout=5) as ws:
        def send(run_id: str, type_: str, payload: dict) -> None:
            nonlocal seq
            ws.send(json.dumps({"gm": 1, "seq": seq, "ts": time.time() * 1000, "runId": run_id,
                                "type": type_, "payload": payload}))
            seq += 1

        send("*", "hello", {"versions": {"protocol": 1, "client": "head"}, "app": "edit-app",
                            "capabilities": ["pause", "inject", "retry", "abort", "edit-input"]})
        ack = json.loads(ws.recv(timeout=5))
        assert ack["type"] == "hello.ack", ack
        send(RUN, "run.started", {"app": "edit-app", "sdk": {"name": "raw", "version": "0"},
                                  "meta": {"name": NAME}})
        send(RUN, "node.started", {"nodeId": "tool:search", "kind": "tool", "name": "search",
                                   "instanceId": "call-1", "input": {"q": "osloo", "limit": 3}})
        send(RUN, "exec.paused", {"pauseId": "p1", "nodeId": "tool:search", "point": "before",
                                  "reason": "breakpoint", "editable": True, "instanceId": "call-1"})
        print("HELD", flush=True)
        while True:
            frame = json.loads(ws.recv(timeout=60))
            if frame["type"] != "exec.resume":
                continue
            resume = frame["payload"]
            print("RESUME " + json.dumps(resume), flush=True)
            edited = resume.get("input")
            if edited is not None and not isinstance(edited, dict):
                send(RUN, "exec.refused", {"pauseId": "p1", "code": "shape",
                                           "message": "the input must be an object",
                                           "requestId": resume.get("requestId")})
                continue
            released = {"pauseId": "p1", "action": resume["action"]}
            if edited is not None:
                released["edited"] = {"after": edited}
            if resume.get("requestId"):
                released["requestId"] = resume["requestId"]
            send(RUN, "exec.resumed", released)
            query = (edited or {"q": "osloo"})["q"]
            send(RUN, "node.finished", {"nodeId": "tool:search", "instanceId": "call-1", "status": "ok",
                                        "durationMs": 5, "output": {"hits": [query.title()]}})
            send(RUN, "run.finished", {"status": "ok"})
            time.sleep(0.2)
            print("DONE", flush=True)
            return 0


if __name__ == "__main__":
    sys.exit(main())
