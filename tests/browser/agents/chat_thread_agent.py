"""A three-turn chat on the real GraphMind client (graphmind-ai 0.5.1) and its OpenAI
integration against a stand-in OpenAI endpoint on loopback: each turn is one run whose
meta names the thread (`threadId`), the user (`userId`) and tags, so the three runs form
one thread (docs/threads.md).

The history grows across turns (each turn's model calls carry the earlier turns), the
second turn's weather tool fails once before it answers (one `node.error`), and the third
turn's booking tool returns a desk name the agent never passes to the model: the word
appears only in that tool's output. Environment: GRAPHMIND_URL, THREAD_ID.
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

QUESTIONS = [
    "What is the weather in Oslo today?",
    "And in Bergen?",
    "Book me the Fjord Hotel in Bergen for Friday.",
]
CALLS = {
    0: ("get_weather", {"city": "Oslo"}),
    1: ("get_weather", {"city": "Bergen"}),
    2: ("book_hotel", {"hotel": "Fjord Hotel", "day": "Friday"}),
}
ANSWERS = {
    0: "It is sunny and 18 °C in Oslo.",
    1: "Bergen has light rain and 12 °C; bring an umbrella.",
    2: "Booked: the Fjord Hotel on Friday, reference BK-7.",
}


def completion(body: dict[str, Any]) -> dict[str, Any]:
    """A tool call for the latest question; its answer once the tool's result follows it."""
    messages = body.get("messages", [])
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    turn = len(users) - 1
    answered = any(m.get("role") == "tool" for m in messages[users[-1] :])
    if answered:
        message: dict[str, Any] = {"role": "assistant", "content": ANSWERS[turn]}
        finish = "stop"
    else:
        name, args = CALLS[turn]
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": f"call_{turn + 1}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            ],
        }
        finish = "tool_calls"
    return {
        "id": f"chatcmpl-standin-{turn}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 40 + 30 * turn, "completion_tokens": 12, "total_tokens": 52 + 30 * turn},
    }


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        length = int(self.headers.get("Content-Length") or 0)
        raw = json.dumps(completion(json.loads(self.rfile.read(length) or b"{}"))).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *_args: Any) -> None:
        pass


gm.configure(app="chat-thread-agent")
FAILED_ONCE: set[str] = set()


@gm.tool
def get_weather(city: str) -> dict[str, Any]:
    if city == "Bergen" and city not in FAILED_ONCE:
        FAILED_ONCE.add(city)
        raise TimeoutError("the weather service timed out")
    forecast = {"Oslo": ("sunny", 18), "Bergen": ("light rain", 12)}[city]
    return {"city": city, "forecast": forecast[0], "high": forecast[1]}


@gm.tool
def book_hotel(hotel: str, day: str) -> dict[str, Any]:
    # The desk's name stays in this tool's output: the agent tells the model the reference only.
    return {"reference": "BK-7", "hotel": hotel, "day": day, "note": "keys at the Fjordlyst desk after 3 pm"}


TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "book_hotel", "parameters": {"type": "object", "properties": {"hotel": {"type": "string"}, "day": {"type": "string"}}}}},
]


def run_tool(name: str, args: dict[str, Any]) -> dict[str, Any]:
    if name == "book_hotel":
        booked = book_hotel(**args)
        return {"reference": booked["reference"]}
    try:
        return get_weather(**args)
    except TimeoutError:
        return get_weather(**args)  # the second try answers


def turn(client: openai.OpenAI, messages: list[dict[str, Any]], question: str) -> None:
    messages.append({"role": "user", "content": question})
    first = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
    call = first.choices[0].message.tool_calls[0]
    result = run_tool(call.function.name, json.loads(call.function.arguments))
    messages.append(first.choices[0].message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
    answer = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
    messages.append({"role": "assistant", "content": answer.choices[0].message.content})


def main() -> int:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    client = gm.instrument_openai(openai.OpenAI(base_url=f"http://{host}:{port}/v1", api_key="standin"))
    if not gm.ready(5.0):
        print("NOT-ATTACHED", flush=True)
        return 2
    thread = os.environ.get("THREAD_ID", "chat-thread")
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a travel assistant. Use tools for facts."}]
    for i, question in enumerate(QUESTIONS):
        meta = {"threadId": thread, "userId": "ada", "tags": ["travel", f"turn-{i + 1}"]}
        with gm.run(f"chat turn {i + 1}", meta=meta):
            turn(client, messages, question)
    gm.dispose()
    server.shutdown()
    print("RUN-END ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
