"""A chat agent on the real GraphMind client (graphmind-ai 0.5.1) and its OpenAI
integration, calling a stand-in OpenAI endpoint on loopback (nothing leaves the machine).

The stand-in answers the first chat completion with a `get_weather` tool call and the
second, which carries the tool's result, with text: the viewer reads the two model calls
as a conversation with a tool call, its result and the answer (docs/transcripts.md).
Environment: GRAPHMIND_URL, AGENT_RUN_NAME.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import graphmind as gm
import openai

REPLY = "It is sunny and 18 °C in Oslo.\n\n    a fine day for a walk by the fjord"


def completion(body: dict[str, Any]) -> dict[str, Any]:
    """A tool call first; the answer once the tool's result is in the messages."""
    answered = any(m.get("role") == "tool" for m in body.get("messages", []))
    if answered:
        message: dict[str, Any] = {"role": "assistant", "content": REPLY}
        finish = "stop"
    else:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_weather_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": json.dumps({"city": "Oslo", "unit": "C"})},
                }
            ],
        }
        finish = "tool_calls"
    return {
        "id": "chatcmpl-standin",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52},
    }


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        raw = json.dumps(completion(body)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *_args: Any) -> None:
        pass


gm.configure(app="chat-agent")


@gm.tool
def get_weather(city: str, unit: str) -> dict[str, Any]:
    return {"city": city, "forecast": "sunny", "high": 18, "unit": unit}


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}}},
        },
    }
]


def main() -> int:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    client = gm.instrument_openai(openai.OpenAI(base_url=f"http://{host}:{port}/v1", api_key="standin"))
    if not gm.ready(5.0):
        print("NOT-ATTACHED", flush=True)
        return 2
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a travel assistant. Use tools for facts."},
        {"role": "user", "content": "What is the weather in Oslo today?"},
    ]
    with gm.run(os.environ.get("AGENT_RUN_NAME", "chat-run")):
        first = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
        call = first.choices[0].message.tool_calls[0]
        result = get_weather(**json.loads(call.function.arguments))
        messages.append(first.choices[0].message.model_dump(exclude_none=True))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
        client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
    # Every frame is flushed before the test reads the run.
    gm.dispose()
    server.shutdown()
    print("RUN-END ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
