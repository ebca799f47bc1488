"""A stand-in OpenAI endpoint on loopback: answers `POST …/chat/completions` with one fixed
chat completion (usage included) and records the requests, so a README snippet that calls a
model runs in CI with `OPENAI_BASE_URL` pointing here. Nothing leaves the machine.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = "Sunny and 18 °C in Oslo — a fine day for a walk."


class OpenAIStandIn:
    """`with OpenAIStandIn() as model:` serves on a free loopback port; `model.base_url`
    is the `OPENAI_BASE_URL` to give a client; `model.requests` the JSON bodies received."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = {}
                if not self.path.endswith("/chat/completions"):
                    self._answer(404, {"error": {"message": f"no route {self.path}"}})
                    return
                standin.requests.append(body)
                self._answer(200, completion(body.get("model", "gpt-4o-mini")))

            def _answer(self, status: int, body: dict[str, Any]) -> None:
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *_args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> "OpenAIStandIn":
        self._thread.start()
        return self

    def __exit__(self, *_exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()


def completion(model: str) -> dict[str, Any]:
    """One OpenAI chat completion, as the API answers it."""
    return {
        "id": "chatcmpl-standin",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": REPLY},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 21, "completion_tokens": 12, "total_tokens": 33},
    }
