"""Fixtures of the real-exporter tests: a `mindgate serve` with its OTLP port.

These tests run in their own environment (`.venv-otel`, from `tests/otel/requirements.txt`,
made by `scripts/test.sh`): the OpenTelemetry SDK and exporters, the OpenAI
instrumentations and the `openai` client, whose HTTP transport is mocked (nothing leaves
the machine). The binary is `$MINDGATE_BIN` (default `target/debug/mindgate`).
"""

from __future__ import annotations

import json
import os
import pathlib
import socket
import subprocess
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("MINDGATE_BIN", str(REPO / "target" / "debug" / "mindgate"))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A running `mindgate serve --otlp-port P` and a small reader of its HTTP API."""

    def __init__(self, home: pathlib.Path) -> None:
        self.port = free_port()
        self.otlp_port = free_port()
        self.home = home
        env = dict(os.environ, MINDGATE_HOME=str(home), MINDGATE_LOG="warn")
        self.log = home / "serve.log"
        home.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [BIN, "serve", "--port", str(self.port), "--otlp-port", str(self.otlp_port), "--no-open"],
            env=env,
            stdout=open(self.log, "ab"),
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mindgate serve exited: {self.log.read_text()}")
            try:
                with urllib.request.urlopen(self.url("/health"), timeout=1):
                    break
            except (urllib.error.URLError, OSError):
                time.sleep(0.05)
        else:
            raise RuntimeError("mindgate serve did not become healthy")

    @property
    def otlp_endpoint(self) -> str:
        return f"http://127.0.0.1:{self.otlp_port}"

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def get(self, path: str) -> tuple[int, Any]:
        try:
            with urllib.request.urlopen(self.url(path), timeout=5) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def wait_for(self, what: str, check, timeout: float = 15.0):
        """Polls `check()` until it returns something truthy (bounded)."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            last = check()
            if last:
                return last
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}; last: {last!r}")

    def graph(self, run_id: str) -> dict | None:
        status, body = self.get(f"/api/runs/{run_id}/graph")
        return body if status == 200 else None

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path / "home")
    yield s
    s.stop()


def run_id_of(trace_id: int) -> str:
    return f"otlp-{trace_id:032x}"


def node(graph: dict, node_id: str) -> dict:
    for n in graph["nodes"]:
        if n["nodeId"] == node_id:
            return n
    raise AssertionError(f"no node {node_id} in {[n['nodeId'] for n in graph['nodes']]}")
