"""`mindgate serve` with `MINDGATE_CHAT_*` in its environment: the consolidation route
asks that endpoint (a stand-in on 127.0.0.1, Python's http.server, answering fixed
completions), the records land quarantined, and a half-configured chat model stops the
server at start with the reason.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import pytest

from conftest import BIN, MindgateServer, free_port

EXTRACTION = {
    "summary": "Ana talks about keeping bees.",
    "facts": [{"text": "Ana keeps bees", "subject": "Ana", "predicate": "keeps", "object": "bees", "evidence": ["m1"]}],
}
REFLECTION = {"insights": [{"text": "Ana has a hobby with animals", "cites": ["f1", "m1"]}]}


class StandIn:
    """An OpenAI-compatible /v1/chat/completions answering `answers` in order."""

    def __init__(self, answers: list[dict[str, Any]]) -> None:
        self.answers = answers
        self.requests: list[tuple[dict[str, str], dict[str, Any]]] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                stand_in.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                content = stand_in.answers[min(len(stand_in.requests), len(stand_in.answers)) - 1]
                answer = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": json.dumps(content)}, "finish_reason": "stop"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    s = StandIn([EXTRACTION, REFLECTION])
    try:
        yield s
    finally:
        s.close()


def test_serve_consolidates_through_the_configured_chat_model(
    tmp_path: pathlib.Path, stand_in: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINDGATE_CHAT_URL", stand_in.url)
    monkeypatch.setenv("MINDGATE_CHAT_MODEL", "stand-in")
    monkeypatch.setenv("MINDGATE_CHAT_API_KEY", "sk-python")
    server = MindgateServer(tmp_path / "home", free_port(), ["--memory-user", "ana"]).start()
    try:
        status, _ = server.request("POST", "/api/memory/sessions/hive/messages", {"message": {"role": "user", "content": "I keep bees on my balcony."}})
        assert status == 201
        status, report = server.request("POST", "/api/memory/sessions/hive/consolidate", {})
        assert status == 200, report
        assert [f["text"] for f in report["facts"]] == ["Ana keeps bees"]
        assert {r["status"] for r in report["facts"] + report["episodes"] + report["insights"]} == {"quarantined"}
        assert report["insights"][0]["provenance"] == "reflection"
        assert report["insights"][0]["cites"][0] == report["facts"][0]["id"]
        queue = server.get("/api/memory/quarantine?userId=ana")["records"]
        assert len(queue) == 3
        assert [h["authorization"] for h, _ in stand_in.requests] == ["Bearer sk-python"] * 2
        assert all(b["model"] == "stand-in" for _, b in stand_in.requests)
        status, body = server.request("POST", "/api/memory/sessions/hive/consolidate", {}, token=False)
        assert (status, body["code"]) == (401, "unauthorized")
    finally:
        server.stop()


def test_a_half_configured_chat_model_stops_serve_at_start(tmp_path: pathlib.Path) -> None:
    env = dict(os.environ, MINDGATE_HOME=str(tmp_path / "home"), MINDGATE_CHAT_URL="http://127.0.0.1:9/v1")
    env.pop("MINDGATE_CHAT_MODEL", None)
    done = subprocess.run(
        [BIN, "serve", "--no-open", "--port", str(free_port())],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode != 0, done.stderr
    assert "MINDGATE_CHAT_MODEL" in done.stderr, done.stderr
