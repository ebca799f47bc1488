"""Issue #10 replays against the real binary: slowloris and idle connections,
the connection cap, the `wait=1e20` panic, and WebSocket protocol errors.

Raw sockets only, so each test sends exactly the bytes of the finding. Every
wait is bounded (a few seconds); all traffic stays on 127.0.0.1.
"""

from __future__ import annotations

import base64
import json
import os
import pathlib
import socket
import struct
import threading
import time

import pytest

from mindgate_harness import MindgateServer, free_port

PATIENCE = 5.0


def start_server(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, **env: str) -> MindgateServer:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return MindgateServer(tmp_path / "home", free_port()).start()


def read_to_close(sock: socket.socket, timeout: float = PATIENCE) -> bytes | None:
    """Everything the server sends until it closes; None if it stays open past `timeout`."""
    sock.settimeout(timeout)
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(4096)
        except socket.timeout:
            return None
        except ConnectionResetError:
            return out
        if not chunk:
            return out
        out += chunk
    return None


def raw_get(port: int, path: str) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=PATIENCE) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
        got = read_to_close(s)
        assert got is not None, f"GET {path} was never answered"
        return got


def test_slowloris_and_idle_connections_are_closed(tmp_path, monkeypatch):
    server = start_server(tmp_path, monkeypatch, MINDGATE_HEADER_TIMEOUT_MS="500")
    try:
        port = server["port"]
        slow = socket.create_connection(("127.0.0.1", port))
        slow.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
        silent = socket.create_connection(("127.0.0.1", port))
        started = time.monotonic()
        for name, sock in (("slowloris", slow), ("silent", silent)):
            got = read_to_close(sock)
            assert got is not None, f"the {name} connection was never closed"
            sock.close()
        # Closed by the 500 ms timeout, not by anything slower.
        assert time.monotonic() - started < PATIENCE
        assert raw_get(port, "/health").startswith(b"HTTP/1.1 200")
    finally:
        server.stop()


def test_idle_connections_cannot_lock_out_health(tmp_path, monkeypatch):
    """The 1,030-idle-connections finding, scaled down with a small cap."""
    server = start_server(
        tmp_path,
        monkeypatch,
        MINDGATE_MAX_CONNECTIONS="8",
        MINDGATE_MAX_CONNECTIONS_PER_IP="8",
        MINDGATE_HEADER_TIMEOUT_MS="1500",
    )
    idle: list[socket.socket] = []
    try:
        port = server["port"]
        for _ in range(12):
            idle.append(socket.create_connection(("127.0.0.1", port)))
        answer = raw_get(port, "/health")
        assert answer.startswith(b"HTTP/1.1 503"), answer
        assert b"retry-after: 1" in answer.lower()
        assert b"too many open connections" in answer
        # The idle sockets time out; /health answers again without anyone closing them.
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            if raw_get(port, "/health").startswith(b"HTTP/1.1 200"):
                break
            time.sleep(0.1)
        else:
            raise AssertionError("/health stayed locked out")
        log = server.log.read_text(errors="replace")
        assert "connection limit reached" in log, log
    finally:
        for s in idle:
            s.close()
        server.stop()


def test_a_huge_pause_wait_answers_instead_of_panicking(mindgate):
    """`GET /api/pauses?wait=1e20` used to panic the handler (Duration overflow)."""
    answer: dict = {}

    def poll() -> None:
        answer["reply"] = mindgate.request("GET", "/api/pauses?runId=w&wait=1e20", token=False)

    t = threading.Thread(target=poll)
    t.start()
    ws = RawWs(mindgate["port"], "/ingest")
    try:
        ws.send_text(hello())
        assert b"hello.ack" in ws.next_frame()[1]
        ws.send_text(frame("w", 1, "run.started", {"app": "a", "sdk": {"name": "t", "version": "1"}}))
        ws.send_text(frame("w", 2, "exec.paused", {"pauseId": "p", "nodeId": "tool:x", "point": "before"}))
        t.join(PATIENCE)
        assert not t.is_alive(), "the long poll never answered"
        status, body = answer["reply"]
        assert status == 200, body
        assert body["pauses"][0]["pauseId"] == "p"
    finally:
        ws.close()


# ---- WebSocket protocol errors ------------------------------------------------


def hello() -> str:
    return json.dumps(
        {
            "gm": 1,
            "seq": 0,
            "ts": 0,
            "runId": "*",
            "type": "hello",
            "payload": {
                "versions": {"protocol": 1, "client": "attack"},
                "capabilities": ["pause"],
                "app": "attack",
                "sdk": {"name": "raw", "version": "0"},
            },
        }
    )


def frame(run: str, seq: int, ty: str, payload: dict) -> str:
    return json.dumps({"gm": 1, "seq": seq, "ts": 1_700_000_000_000 + seq, "runId": run, "type": ty, "payload": payload})


def ws_frame(first_byte: int, payload: bytes, masked: bool = True) -> bytes:
    mask_bit = 0x80 if masked else 0
    n = len(payload)
    head = bytes([first_byte])
    if n < 126:
        head += bytes([n | mask_bit])
    else:
        head += bytes([126 | mask_bit]) + struct.pack(">H", n)
    if not masked:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


class RawWs:
    """A WebSocket over a plain socket, so tests can send broken frames."""

    def __init__(self, port: int, path: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=PATIENCE)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 101"), head

    def _fill(self) -> None:
        chunk = self.sock.recv(4096)
        if not chunk:
            raise ConnectionError("socket closed")
        self.buf += chunk

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send_text(self, text: str) -> None:
        self.send(ws_frame(0x81, text.encode()))

    def next_frame(self) -> tuple[int, bytes]:
        while True:
            if len(self.buf) >= 2:
                n, at = self.buf[1] & 0x7F, 2
                if n == 126 and len(self.buf) >= 4:
                    n, at = struct.unpack(">H", self.buf[2:4])[0], 4
                elif n == 127 and len(self.buf) >= 10:
                    n, at = struct.unpack(">Q", self.buf[2:10])[0], 10
                if n < 126 or at > 2:
                    if len(self.buf) >= at + n:
                        opcode, payload = self.buf[0] & 0x0F, self.buf[at : at + n]
                        self.buf = self.buf[at + n :]
                        return opcode, payload
            self._fill()

    def close_frame(self) -> tuple[int, str]:
        """Skips frames until the server's close frame: (code, reason)."""
        while True:
            try:
                opcode, payload = self.next_frame()
            except (ConnectionError, socket.timeout) as e:
                raise AssertionError(f"connection dropped without a close frame ({e})") from e
            if opcode == 8:
                assert len(payload) >= 2, "close frame without a code"
                return struct.unpack(">H", payload[:2])[0], payload[2:].decode(errors="replace")

    def close(self) -> None:
        self.sock.close()


BAD_FRAMES = [
    pytest.param(ws_frame(0x81, b'{"x":1}', masked=False), 1002, id="unmasked"),
    pytest.param(ws_frame(0x81, b"{\xff\xfe}"), 1007, id="invalid-utf8"),
    pytest.param(ws_frame(0x81 | 0x70, b"{}"), 1002, id="reserved-bits"),
    pytest.param(ws_frame(0x83, b"{}"), 1002, id="reserved-data-opcode"),
    pytest.param(ws_frame(0x8B, b""), 1002, id="reserved-control-opcode"),
]


@pytest.mark.parametrize("bad, code", BAD_FRAMES)
def test_ingest_closes_protocol_errors_with_a_code(mindgate, bad, code):
    ws = RawWs(mindgate["port"], "/ingest")
    try:
        ws.send_text(hello())
        assert b"hello.ack" in ws.next_frame()[1]
        ws.send(bad)
        got, reason = ws.close_frame()
        assert got == code, reason
        assert reason
    finally:
        ws.close()
    assert mindgate.get("/health")["ok"] is True


@pytest.mark.parametrize("bad, code", BAD_FRAMES)
def test_ui_feed_closes_protocol_errors_with_a_code(mindgate, bad, code):
    ws = RawWs(mindgate["port"], "/ws/ui")
    try:
        assert b"welcome" in ws.next_frame()[1]
        ws.send(bad)
        got, reason = ws.close_frame()
        assert got == code, reason
        assert reason
    finally:
        ws.close()


def test_concurrent_graph_readers_all_get_the_same_graph_and_pages_cover_it(mindgate):
    """Issue #10 item 3, scaled down: many unauthenticated readers of one big run at once."""
    nodes = 2_000
    ws = RawWs(mindgate["port"], "/ingest")
    try:
        ws.send_text(hello())
        assert b"hello.ack" in ws.next_frame()[1]
        batch = [ws_frame(0x81, frame("big", 1, "run.started", {"app": "a", "sdk": {"name": "t", "version": "1"}}).encode())]
        for i in range(nodes):
            started = {"nodeId": f"tool:t{i}", "kind": "tool", "name": f"t{i}", "instanceId": f"i{i}", "input": {"q": i}}
            if i:
                started["parentId"] = "tool:t0"
            batch.append(ws_frame(0x81, frame("big", 2 + i, "node.started", started).encode()))
        ws.send(b"".join(batch))
        deadline = time.monotonic() + 20
        while True:
            code, run = mindgate.request("GET", "/api/runs/big", token=False)
            if code == 200 and run["counts"]["events"] >= nodes + 1:
                break
            assert time.monotonic() < deadline, f"events were not stored: {code} {run}"
            time.sleep(0.05)
    finally:
        ws.close()

    bodies: list[tuple[int, bytes]] = []
    lock = threading.Lock()

    def read() -> None:
        got = raw_get(mindgate["port"], "/api/runs/big/graph")
        with lock:
            bodies.append((int(got.split(b" ", 2)[1]), got.split(b"\r\n\r\n", 1)[1]))

    readers = [threading.Thread(target=read) for _ in range(16)]
    for t in readers:
        t.start()
    for t in readers:
        t.join(20)
    assert len(bodies) == 16 and all(code == 200 for code, _ in bodies), [c for c, _ in bodies]
    # Each streamed (chunked) answer is complete: it ends with the last chunk.
    assert all(body.endswith(b"0\r\n\r\n") for _, body in bodies)
    full = mindgate.get("/api/runs/big/graph")
    assert len(full["nodes"]) == nodes
    paged_nodes: list = []
    paged_edges: list = []
    after = 0
    while True:
        page = mindgate.get(f"/api/runs/big/graph?limit=700&after={after}")
        paged_nodes += page["nodes"]
        paged_edges += page["edges"]
        after = page["nextAfter"]
        if not page["hasMore"]:
            break
    assert paged_nodes == full["nodes"]
    assert paged_edges == full["edges"]
    assert mindgate.get("/health")["ok"] is True
