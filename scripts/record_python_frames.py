#!/usr/bin/env python3
"""Record the frames the real Python client (graphmind-ai 0.5.1) sends.

Starts a tiny recording viewer on 127.0.0.1:<free port> (the `websockets`
package, which graphmind-ai depends on), points an instrumented agent at it
and writes every frame the client sent, one JSON text frame per line, to
``crates/protocol/tests/fixtures/graphmind-ai-0.5.1.jsonl``; the frames the
viewer sent back (hello.ack and controls) go to ``...-0.5.1.viewer.jsonl``.

The agent covers: a run with ``@gm.tool`` tools, an llm node streaming token
deltas (text, reasoning, tool-args) with usage (through ``instrument_openai``
on a duck-typed stand-in client, no network), a breakpoint pause resumed with
``continue``, a tool that raises (error pause resumed with ``inject``), the
loop guard holding a third identical call, a run that fails (error pause
resumed with ``continue``), a span whose input holds a lone surrogate, a graph
hint, and a second session with redaction switched on.

Run it with the interpreter that has graphmind-ai installed:

    .venv/bin/python scripts/record_python_frames.py [OUT_DIR]

Ids, timestamps and durations differ on every run; the shape does not.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import threading
from pathlib import Path
from typing import Any

import websockets
from websockets.asyncio.server import serve

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "crates" / "protocol" / "tests" / "fixtures"
BREAKPOINT_TOOL = "search_flights"
RECORD_TIMEOUT = 60.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Recorder:
    """The recording viewer: answers hello, resumes pauses, keeps every frame."""

    def __init__(self) -> None:
        self.received: list[str] = []
        self.sent: list[str] = []
        self.seq = 0
        self.lock = threading.Lock()

    def envelope(self, type_: str, payload: dict[str, Any], run_id: str = "*") -> str:
        with self.lock:
            self.seq += 1
            seq = self.seq
        frame = json.dumps(
            {
                "gm": 1,
                "seq": seq,
                "ts": 1_756_200_000_000 + seq,
                "runId": run_id,
                "type": type_,
                "payload": payload,
            },
            separators=(",", ":"),
        )
        self.sent.append(frame)
        return frame

    def resume_for(self, paused: dict[str, Any], run_id: str) -> str:
        """continue for breakpoint and loop holds; inject at the first error
        pause of `parse_date`, continue at the others."""
        payload = paused["payload"]
        action: dict[str, Any] = {"pauseId": payload["pauseId"], "action": "continue"}
        if payload.get("point") == "error" and payload.get("nodeId") == "tool:parse_date":
            action = {
                "pauseId": payload["pauseId"],
                "action": "inject",
                "output": {"date": "2025-09-01", "source": "injected by the recorder"},
            }
        return self.envelope("exec.resume", action, run_id)

    async def handle(self, ws: Any) -> None:
        async for raw in ws:
            text = raw if isinstance(raw, str) else raw.decode("utf-8", "replace")
            self.received.append(text)
            try:
                frame = json.loads(text)
            except ValueError:
                continue
            type_ = frame.get("type")
            if type_ == "hello":
                await ws.send(
                    self.envelope(
                        "hello.ack",
                        {
                            "versions": {"protocol": 1, "viewer": "mindgate-recorder"},
                            "capabilities": ["pause", "step", "inject", "retry", "abort"],
                            "breakpoints": [
                                {"point": "error"},
                                {"kind": "tool", "name": BREAKPOINT_TOOL},
                            ],
                            "mode": "run",
                            "sessionToken": "st_recorder_0001",
                        },
                    )
                )
                # Controls the client must tolerate: add and drop a matcher,
                # re-assert the mode.
                await ws.send(
                    self.envelope("breakpoint.set", {"matcher": {"kind": "llm", "point": "after"}})
                )
                await ws.send(
                    self.envelope(
                        "breakpoint.clear", {"matcher": {"kind": "llm", "point": "after"}}
                    )
                )
                await ws.send(self.envelope("mode.set", {"mode": "run"}))
            elif type_ == "exec.paused":
                await ws.send(self.resume_for(frame, frame.get("runId", "*")))


# ------------------------------------------------------------------ the agent


class _Obj:
    """Attribute bag standing in for the openai SDK's response objects."""

    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)


def _chunk(content: str | None = None, reasoning: str | None = None,
           args: str | None = None, usage: Any = None, finish: str | None = None) -> _Obj:
    tool_calls = None
    if args is not None:
        tool_calls = [_Obj(index=0, id="call_0", function=_Obj(name=BREAKPOINT_TOOL, arguments=args))]
    delta = _Obj(content=content, reasoning_content=reasoning, reasoning=reasoning,
                 tool_calls=tool_calls)
    return _Obj(choices=[_Obj(delta=delta, finish_reason=finish)], usage=usage)


class _Stream:
    """A sync chat-completions stream with a tiny pause between chunks so the
    client's ~34 ms token batcher splits deltas over several frames."""

    def __init__(self) -> None:
        self._chunks = [
            _chunk(reasoning="The user wants flights; "),
            _chunk(reasoning="call the search tool."),
            _chunk(content="Let me "),
            _chunk(content="look that up"),
            _chunk(content=" for you."),
            _chunk(args='{"origin": "SFO", '),
            _chunk(args='"destination": "JFK"}', finish="tool_calls"),
            _chunk(usage=_Obj(prompt_tokens=182, completion_tokens=37, total_tokens=219)),
        ]

    def __iter__(self) -> Any:
        import time

        for chunk in self._chunks:
            time.sleep(0.02)
            yield chunk


class FakeOpenAI:
    """Duck-typed `openai.OpenAI`: chat.completions.create only, no network."""

    def __init__(self) -> None:
        def create(**kwargs: Any) -> Any:
            if kwargs.get("stream"):
                return _Stream()
            return _Obj(
                choices=[_Obj(message=_Obj(content="Booked.", tool_calls=None, parsed=None),
                              finish_reason="stop")],
                usage=_Obj(prompt_tokens=240, completion_tokens=3),
            )

        self.chat = _Obj(completions=_Obj(create=create))


def run_agent(url: str) -> None:
    import graphmind as gm
    from graphmind.api import GraphMind

    agent = gm.configure(app="recorder-agent", url=url)
    if not gm.ready(5.0):
        raise SystemExit("the client did not attach to the recorder")

    @gm.tool
    def search_flights(origin: str, destination: str, max_results: int = 3) -> list[dict[str, Any]]:
        return [{"flight": "GM101", "from": origin, "to": destination, "usd": 212.5}][:max_results]

    @gm.tool
    def parse_date(text: str) -> dict[str, str]:
        raise ValueError(f"cannot parse date: {text!r}")

    @gm.tool
    def poll_status(job: str) -> str:
        return "pending"

    @gm.tool(name="charge_card")
    def charge(amount_usd: float) -> dict[str, Any]:
        raise RuntimeError("card declined")

    client = gm.instrument_openai(FakeOpenAI())

    with gm.run("book-trip", meta={"user": "u_42", "tags": ["recording"]}):
        gm.graph_hint([
            {"nodeId": "tool:parse_date", "kind": "tool", "name": "parse_date"},
            {"nodeId": "retriever:policy", "kind": "retriever", "name": "policy"},
        ])
        stream = client.chat.completions.create(
            model="gpt-test", stream=True, temperature=0.2,
            messages=[{"role": "user", "content": "Find me a flight SFO to JFK on Sept 1"}],
            tools=[{"type": "function", "function": {"name": BREAKPOINT_TOOL}}],
        )
        for _ in stream:
            pass
        search_flights("SFO", "JFK")  # held by the tool breakpoint, resumed with continue
        parse_date("first of sept")  # raises; held at the error gate, resumed with inject
        for _ in range(3):
            poll_status("job-7")  # the third identical call is held by the loop guard
        # A lone surrogate (e.g. from surrogateescape-decoded bytes): the client
        # writes it as a `\udXXX` escape, which JavaScript accepts.
        with gm.span("policy", kind="retriever", input={"query": "refunds \udca9"}) as span:
            span.set_output({"docs": 2})
        client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "ok"}])

    try:
        with gm.run("failing-run"):
            charge(99.0)  # error pause resumed with continue: the run fails
    except RuntimeError:
        pass

    gm.reset()

    # A second session with redaction switched on (node.started carries `redaction`).
    hidden = GraphMind(app="recorder-agent-redacted", url=url, hide_inputs=True, hide_outputs=True)
    if not hidden.ready(5.0):
        raise SystemExit("the redacted client did not attach to the recorder")
    lookup = hidden.tool(lambda account: {"balance": 10}, name="lookup_account")
    with hidden.run("redacted-run"):
        lookup("acct-secret-1")
    hidden.dispose()
    del agent


async def main(out_dir: Path) -> int:
    recorder = Recorder()
    port = free_port()
    url = f"ws://127.0.0.1:{port}/ingest"
    async with serve(recorder.handle, "127.0.0.1", port, max_size=16 * 1024 * 1024):
        loop = asyncio.get_running_loop()
        await asyncio.wait_for(loop.run_in_executor(None, run_agent, url), RECORD_TIMEOUT)
        await asyncio.sleep(0.3)  # let the last frames land
    out_dir.mkdir(parents=True, exist_ok=True)
    client_file = out_dir / "graphmind-ai-0.5.1.jsonl"
    viewer_file = out_dir / "graphmind-ai-0.5.1.viewer.jsonl"
    client_file.write_text("".join(f + "\n" for f in recorder.received), encoding="utf-8")
    viewer_file.write_text("".join(f + "\n" for f in recorder.sent), encoding="utf-8")
    types = sorted({json.loads(f)["type"] for f in recorder.received})
    print(f"recorded {len(recorder.received)} client frames ({', '.join(types)}) -> {client_file}")
    print(f"recorded {len(recorder.sent)} viewer frames -> {viewer_file}")
    return 0


if __name__ == "__main__":
    os.environ.pop("GRAPHMIND_DISABLED", None)
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT
    sys.exit(asyncio.run(main(target)))
