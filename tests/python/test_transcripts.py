"""A model call read as a conversation (docs/transcripts.md) from what the real
`graphmind-ai` 0.5.1 client sends: its Anthropic integration wraps a stand-in client (no
`anthropic` package, no network) whose `messages.create` answers with thinking, text and a
`tool_use` block; node detail (`GET /api/runs/:id/nodes/llm:step`) carries the transcript
with the system prompt, the tool round trip and the answer."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

AGENT = r'''
import sys
from types import SimpleNamespace as NS

import graphmind as gm

gm.configure(app="anthropic-agent")


class Messages:
    def create(self, **kwargs):
        answered = any(isinstance(m.get("content"), list) and m["content"][0].get("type") == "tool_result"
                       for m in kwargs["messages"])
        if answered:
            content = [NS(type="thinking", thinking="The tool says 08:25."), NS(type="text", text="Take the 08:25 train.")]
            stop = "end_turn"
        else:
            content = [NS(type="text", text="Let me look."),
                       NS(type="tool_use", id="toolu_1", name="search_trains", input={"to": "Bergen"})]
            stop = "tool_use"
        return NS(content=content, stop_reason=stop, model="claude-haiku-4-5",
                  usage=NS(input_tokens=30, output_tokens=9))


client = gm.instrument_anthropic(NS(messages=Messages()))
if not gm.ready(5.0):
    print("NOT-ATTACHED")
    sys.exit(2)
messages = [{"role": "user", "content": "Train to Bergen tomorrow?"}]
with gm.run("anthropic-run"):
    first = client.messages.create(model="claude-haiku-4-5", max_tokens=256, system="You book trains.", messages=messages)
    messages.append({"role": "assistant", "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_1", "name": "search_trains", "input": {"to": "Bergen"}}]})
    messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "08:25, 12:25"}]})
    client.messages.create(model="claude-haiku-4-5", max_tokens=256, system="You book trains.", messages=messages)
gm.dispose()
print("RUN-END")
'''


def finished_run(server: Any, name: str, timeout: float = 15.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    runs: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        runs = server.get("/api/runs")["runs"]
        run = next((r for r in runs if r["name"] == name and r["status"] != "running"), None)
        if run is not None:
            return run
        time.sleep(0.05)
    raise AssertionError(f"no finished run {name!r} among {runs}")


def test_graphmind_anthropic_calls_read_as_a_conversation(mindgate, tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(AGENT, encoding="utf-8")
    env = dict(os.environ, GRAPHMIND_URL=mindgate["ingest"])
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "RUN-END" in done.stdout, done.stdout + done.stderr
    run = finished_run(mindgate, "anthropic-run")
    detail = mindgate.get(f"/api/runs/{run['id']}/nodes/llm%3Astep")
    assert detail["label"] == "claude-haiku-4-5"
    first, second = (i["transcript"] for i in detail["instances"])
    assert first["messages"][-1] == {
        "role": "assistant",
        "parts": [
            {"type": "text", "content": "Let me look."},
            {"type": "tool_call", "id": "toolu_1", "name": "search_trains", "arguments": {"to": "Bergen"}},
        ],
    }
    assert first["finishReason"] == "tool_use"
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool", "assistant"]
    assert second["messages"][0]["parts"] == [{"type": "text", "content": "You book trains."}]
    assert second["messages"][3]["parts"] == [
        {"type": "tool_call_response", "id": "toolu_1", "response": "08:25, 12:25"}
    ]
    assert second["messages"][4]["parts"] == [
        {"type": "reasoning", "content": "The tool says 08:25."},
        {"type": "text", "content": "Take the 08:25 train."},
    ]
    assert second["finishReason"] == "end_turn"
    assert second["inputCount"] == 4
    assert second["usage"] == {"inputTokens": 30, "outputTokens": 9}
