"""A raw protocol client speaking the GraphMind head's messages against `mindgate serve`:
`hello.ack.hubCapabilities`, an editable gate resumed with an edited `input`,
`exec.refused` with a code, and the `principal` the hub stamps on `exec.resumed`."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from typing import Any

from websockets.sync.client import connect

from conftest import MindgateServer

RUN = "head-run"


class RawApp:
    """One app connection that writes frames by hand."""

    def __init__(self, url: str) -> None:
        self.stack = contextlib.ExitStack()
        self.ws = self.stack.enter_context(connect(url, open_timeout=5))
        self.seq = 0
        self.send("*", "hello", {
            "versions": {"protocol": 1, "client": "0.6.0-head"},
            "capabilities": ["pause", "inject", "retry", "abort", "run-claim", "edit-input"],
            "app": "raw-head",
            "sdk": {"name": "raw", "version": "0"},
        })
        self.ack = self.recv("hello.ack")

    def send(self, run_id: str, type_: str, payload: dict[str, Any]) -> None:
        self.ws.send(json.dumps({"gm": 1, "seq": self.seq, "ts": time.time() * 1000,
                                 "runId": run_id, "type": type_, "payload": payload}))
        self.seq += 1

    def recv(self, type_: str, timeout: float = 5.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            frame = json.loads(self.ws.recv(timeout=max(0.01, deadline - time.monotonic())))
            if frame["type"] == type_:
                return frame

    def close(self) -> None:
        self.stack.close()


def resume_async(mindgate: MindgateServer, pause_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST the resume in a thread (it waits for the app's answer); returns a box."""
    box: dict[str, Any] = {}

    def go() -> None:
        box["status"], box["body"] = mindgate.request(
            "POST", f"/api/runs/{RUN}/pauses/{pause_id}/resume", body)

    box["thread"] = threading.Thread(target=go, daemon=True)
    box["thread"].start()
    return box


def test_the_head_messages_round_trip_through_the_hub(mindgate):
    app = RawApp(mindgate["ingest"])
    try:
        assert app.ack["payload"]["hubCapabilities"] == ["edit-input", "replay", "principal"]
        app.send(RUN, "run.started", {"app": "raw-head", "sdk": {"name": "raw", "version": "0"},
                                      "meta": {"name": "head"}})
        app.send(RUN, "node.started", {"nodeId": "tool:search", "kind": "tool", "name": "search",
                                       "instanceId": "i1", "input": {"q": "osloo"}})
        app.send(RUN, "exec.paused", {"pauseId": "p1", "nodeId": "tool:search", "point": "before",
                                      "reason": "breakpoint", "editable": True})
        pause = mindgate.wait_pause(RUN)
        assert pause["editable"] is True and pause["reason"] == "breakpoint"

        # The app refuses the first edit: the resume answers `refused`, the gate is held again.
        box = resume_async(mindgate, "p1", {"action": "continue", "input": ["osloo"]})
        resume = app.recv("exec.resume")["payload"]
        assert resume["input"] == ["osloo"] and resume["action"] == "continue"
        app.send(RUN, "exec.refused", {"pauseId": "p1", "code": "shape",
                                       "message": "the input must be an object",
                                       "requestId": resume.get("requestId")})
        box["thread"].join(10)
        assert box["body"] == {"result": "refused", "message": "the input must be an object"}
        assert mindgate.wait_pause(RUN)["pauseId"] == "p1"

        # The second edit is taken: the app runs with it and says so.
        box = resume_async(mindgate, "p1", {"action": "continue", "input": {"q": "oslo"}})
        resume = app.recv("exec.resume")["payload"]
        assert resume["input"] == {"q": "oslo"}
        app.send(RUN, "exec.resumed", {"pauseId": "p1", "action": "continue",
                                       "edited": {"after": {"q": "oslo"}}})
        box["thread"].join(10)
        assert box["body"] == {"result": "resumed"}
        app.send(RUN, "node.finished", {"nodeId": "tool:search", "instanceId": "i1", "status": "ok",
                                        "durationMs": 3, "output": ["Oslo"], "finishReason": "stop",
                                        "usage": {"inputTokens": 5, "outputTokens": 2, "inclusive": True}})
        # A gate the app did not mark editable: the hub refuses an input itself.
        app.send(RUN, "exec.paused", {"pauseId": "p2", "nodeId": "tool:search", "point": "after"})
        assert mindgate.wait_pause(RUN)["pauseId"] == "p2"
        status, body = mindgate.request("POST", f"/api/runs/{RUN}/pauses/p2/resume",
                                        {"action": "continue", "input": {"q": "x"}})
        assert status == 200 and body["result"] == "refused" and "editable" in body["message"]
        app.send(RUN, "exec.resumed", {"pauseId": "p2", "action": "continue"})  # released by the app
        app.send(RUN, "run.finished", {"status": "ok"})
        run = mindgate.wait_run(RUN, "ok")
        assert run["usage"]["inputTokens"] == 0  # inclusive usage is not summed into the run
    finally:
        app.close()

    events = mindgate.events(RUN)
    by_type: dict[str, list[dict[str, Any]]] = {}
    for e in events:
        by_type.setdefault(e["type"], []).append(e["payload"])
    assert by_type["exec.refused"][0]["code"] == "shape"
    first, second = by_type["exec.resumed"]
    assert first["principal"] == {"kind": "http"} and first["edited"] == {"after": {"q": "oslo"}}
    assert second["principal"] == {"kind": "fail-open"}
    assert by_type["node.finished"][0]["finishReason"] == "stop"
    detail = mindgate.get(f"/api/runs/{RUN}/nodes/tool:search")
    assert [p["principal"]["kind"] for p in detail["instances"][0]["pauses"]] == ["http", "fail-open"]
