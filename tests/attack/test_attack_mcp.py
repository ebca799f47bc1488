"""Issue #10 replays against the real binary: the MCP server (`mindgate mcp` over
stdio, `/mcp` in `mindgate serve`) and the task-graph routes.

* `get_task_graph` with `/dev/zero`, a FIFO, `/etc/passwd`, a path outside the
  session roots, a symlink under a root to `/dev/zero` or to `/etc/passwd`, a zstd
  bomb: clear tool errors in bounded time and memory, and other tools keep answering.
* A garbage stdio line gets a JSON-RPC `-32700` reply and the session goes on.
* Megabyte ids and argument values give errors of bounded length.
* `/mcp` sessions are capped (the least recently used is closed).
* The HTTP task-graph routes list none of the special files.

`mindgate mcp` is driven with raw JSON-RPC lines (exact bytes, no client library
in between). Every wait is bounded; all traffic stays on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import pathlib
import queue
import subprocess
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from mindgate_harness import BIN, MindgateServer, free_port

PATIENCE = 10.0
# `mindgate_mcp::bound::MAX_ERROR_CHARS`, plus the "Error: " prefix.
MAX_ERROR_CHARS = 2_000
# The zstd output cap is 256 MiB; a debug build holding that and its own heap stays well
# under this, while reading /dev/zero or expanding the bomb unbounded does not.
PEAK_RSS_LIMIT_MB = 900
# `mindgate_mcp::http::DEFAULT_MAX_SESSIONS`.
MAX_HTTP_SESSIONS = 32

GOOD = (
    '{"type":"session","version":1,"id":"good-1","createdAt":1000,"cwd":"/w","delegationDepth":0}\n'
    '{"type":"user/message","seq":1,"time":1000,"data":{"text":"hi"}}\n'
    '{"type":"turn/start","seq":2,"time":1000,"data":{"turn":1}}\n'
    '{"type":"turn/end","seq":3,"time":1800,"data":{"turn":1,"reason":{"kind":"completed"}}}\n'
)

pytestmark = pytest.mark.skipif(os.name != "posix", reason="FIFOs and /dev/zero are POSIX")


def rle_bomb(blocks: int) -> bytes:
    """A zstd frame of RLE blocks: 4 bytes per 128 KiB of output, hand-made."""
    block = 128 * 1024
    out = bytearray(b"\x28\xb5\x2f\xfd\x00\x38")  # magic, no content size, 128 KiB window
    for i in range(blocks):
        header = (block << 3) | (1 << 1) | (1 if i + 1 == blocks else 0)
        out += header.to_bytes(4, "little")[:3] + b"x"
    return bytes(out)


def make_roots(base: pathlib.Path) -> dict[str, pathlib.Path]:
    root = base / "sessions"
    outside = base / "elsewhere"
    (root / "good").mkdir(parents=True)
    (root / "good" / "session.jsonl").write_text(GOOD)
    (root / "bomb").mkdir()
    # 320 MiB of output from ~10 KB: past the 256 MiB cap.
    (root / "bomb" / "session.jsonl.zstd").write_bytes(rle_bomb(320 * 8))
    (root / "zero").mkdir()
    (root / "zero" / "session.jsonl").symlink_to("/dev/zero")
    (root / "fifo").mkdir()
    os.mkfifo(root / "fifo" / "session.jsonl")
    os.mkfifo(root / "pipe.jsonl")
    (root / "passwd.jsonl").symlink_to("/etc/passwd")
    (outside / "other").mkdir(parents=True)
    (outside / "other" / "session.jsonl").write_text(GOOD.replace("good-1", "other-1"))
    return {"root": root, "outside": outside}


def isolated_env(base: pathlib.Path, home: pathlib.Path) -> dict[str, str]:
    """Our Mindgate home, and no real coding-agent homes."""
    env = dict(os.environ)
    env["MINDGATE_HOME"] = str(home)
    env["HOME"] = str(base / "user")
    for var in (
        "DSH_HOME",
        "PI_CODING_AGENT_DIR",
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "GEMINI_CLI_HOME",
        "XDG_DATA_HOME",
    ):
        env[var] = str(base / "user" / var.lower())
    env.setdefault("MINDGATE_LOG", "warn")
    return env


class StdioMcp:
    """`mindgate mcp` as a child process, spoken to in raw JSON-RPC lines."""

    def __init__(self, env: dict[str, str], *args: str, log: pathlib.Path) -> None:
        self.log = open(log, "ab")
        self.proc = subprocess.Popen(
            [BIN, "mcp", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=env,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.stash: list[dict[str, Any]] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.raw(json.dumps(message).encode() + b"\n")

    def next(self, timeout: float = PATIENCE) -> dict[str, Any]:
        if self.stash:
            return self.stash.pop(0)
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no message from `mindgate mcp` within {timeout} s") from None
        return json.loads(line)

    def reply(self, id_: int, timeout: float = PATIENCE) -> dict[str, Any]:
        """The answer to request `id_`; other messages are kept for `next`."""
        deadline = time.monotonic() + timeout
        for i, m in enumerate(self.stash):
            if m.get("id") == id_:
                return self.stash.pop(i)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no answer to request {id_} within {timeout} s")
            try:
                m = json.loads(self.lines.get(timeout=left))
            except queue.Empty:
                continue
            if m.get("id") == id_:
                return m
            self.stash.append(m)

    def initialize(self) -> None:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "attack", "version": "1"},
                },
            }
        )
        assert "result" in self.reply(0), "initialize failed"
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, id_: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": id_,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
        )
        return self.reply(id_)

    def peak_rss_mb(self) -> float:
        status = pathlib.Path(f"/proc/{self.proc.pid}/status").read_text()
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        raise AssertionError("no VmHWM in /proc status")

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        self.log.close()


@pytest.fixture
def stdio_mcp(tmp_path: pathlib.Path):
    roots = make_roots(tmp_path)
    mcp = StdioMcp(
        isolated_env(tmp_path, tmp_path / "home"),
        "--sessions",
        str(roots["root"]),
        log=tmp_path / "mcp.log",
    )
    try:
        mcp.initialize()
        yield mcp, roots
    finally:
        mcp.close()


def tool_error(reply: dict[str, Any]) -> tuple[str, str]:
    result = reply["result"]
    assert result["isError"] is True, reply
    text = result["content"][0]["text"]
    assert text.startswith("Error: "), text[:200]
    assert len(text) <= MAX_ERROR_CHARS + len("Error: "), len(text)
    return result["structuredContent"]["error"]["code"], text


def test_get_task_graph_refuses_devices_fifos_and_outside_paths(stdio_mcp) -> None:
    mcp, roots = stdio_mcp
    root, outside = roots["root"], roots["outside"]
    refused = {
        "/dev/zero": "outside the session folders",
        "/etc/passwd": "outside the session folders",
        str(outside / "other"): "outside the session folders",
        str(root / "passwd.jsonl"): "outside the session folders",  # a link out of the root
        str(root / "zero" / "session.jsonl"): "outside the session folders",  # link to /dev/zero
        str(root / "pipe.jsonl"): "not a regular file",
    }
    for i, (path, why) in enumerate(refused.items()):
        started = time.monotonic()
        code, text = tool_error(mcp.call(100 + i, "get_task_graph", {"id": path}))
        assert time.monotonic() - started < PATIENCE
        assert code == "forbidden", (path, text)
        assert why in text, (path, text)
    # Session folders under the root whose file is a device link or a FIFO, and the bomb:
    # readable paths by policy, refused by the bounded reader.
    for i, (path, why) in enumerate(
        {
            str(root / "zero"): "not a regular file",
            str(root / "fifo"): "not a regular file",
            str(root / "bomb"): "byte limit",
        }.items()
    ):
        started = time.monotonic()
        code, text = tool_error(mcp.call(200 + i, "get_task_graph", {"id": path}))
        assert time.monotonic() - started < PATIENCE
        assert why in text, (path, text)
        assert code == ("too_large" if why == "byte limit" else "bad_request"), (path, code)
    assert mcp.peak_rss_mb() < PEAK_RSS_LIMIT_MB, f"peak RSS {mcp.peak_rss_mb():.0f} MB"
    # The good session still opens, by id and by path; the list holds only it.
    for i, ident in enumerate(["good-1", str(root / "good")]):
        r = mcp.call(300 + i, "get_task_graph", {"id": ident})
        assert r["result"]["isError"] is False, r
        assert r["result"]["structuredContent"]["taskId"] == "good-1"
    listed = mcp.call(310, "list_tasks", {})["result"]["structuredContent"]
    assert [t["id"] for t in listed["tasks"]] == ["good-1"]


def test_other_tools_answer_while_a_fifo_is_asked_for(stdio_mcp) -> None:
    mcp, roots = stdio_mcp
    # Pipelined: the FIFO read and two other calls are in flight together.
    for id_, name, args in [
        (1, "get_task_graph", {"id": str(roots["root"] / "fifo")}),
        (2, "list_tasks", {}),
        (3, "list_runs", {}),
    ]:
        mcp.send(
            {
                "jsonrpc": "2.0",
                "id": id_,
                "method": "tools/call",
                "params": {"name": name, "arguments": args},
            }
        )
    started = time.monotonic()
    assert "not a regular file" in tool_error(mcp.reply(1))[1]
    assert mcp.reply(2)["result"]["isError"] is False
    assert tool_error(mcp.reply(3))[0] == "unavailable"  # an answer, not a hang
    assert time.monotonic() - started < PATIENCE


def test_garbage_stdio_lines_get_json_rpc_errors_and_the_session_goes_on(stdio_mcp) -> None:
    mcp, _ = stdio_mcp
    mcp.raw(b"hello, is this JSON?\n")
    v = mcp.next()
    assert v["error"]["code"] == -32700 and "id" in v and v["id"] is None, v
    mcp.raw(b'{"jsonrpc":"2.0","id":4,"method":"tools/list"\n')  # torn
    assert mcp.next()["error"]["code"] == -32700
    mcp.raw(b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"nope"}\n')
    v = mcp.next()
    assert (v["id"], v["error"]["code"]) == (5, -32600), v
    mcp.send({"jsonrpc": "2.0", "id": 6, "method": "tools/list"})
    tools = mcp.reply(6)["result"]["tools"]
    assert "get_task_graph" in {t["name"] for t in tools}
    assert mcp.proc.poll() is None


def test_megabyte_inputs_give_bounded_errors(mindgate: MindgateServer, tmp_path: pathlib.Path) -> None:
    # The database of a real `mindgate serve`, so run ids are really looked up.
    mcp = StdioMcp(isolated_env(tmp_path, mindgate.home), log=tmp_path / "mcp.log")
    try:
        mcp.initialize()
        huge = "r" * 1_000_000
        cases = [
            ("get_run", {"runId": huge}),
            ("get_node", {"runId": huge, "nodeId": huge}),
            ("search_events", {"query": "x", "runId": huge}),
            ("get_task_graph", {"id": huge}),
            ("get_task_graph", {"id": "/" + huge}),
            ("list_runs", {"limit": huge}),  # rmcp's argument error quotes the value
        ]
        for i, (tool, args) in enumerate(cases):
            code, text = tool_error(mcp.call(400 + i, tool, args))
            assert code in {"bad_request", "not_found"}, (tool, code)
        # An unknown tool with a megabyte name: a protocol error, bounded as well.
        mcp.send(
            {
                "jsonrpc": "2.0",
                "id": 450,
                "method": "tools/call",
                "params": {"name": huge, "arguments": {}},
            }
        )
        v = mcp.reply(450)
        assert len(json.dumps(v)) < 3 * MAX_ERROR_CHARS, len(json.dumps(v))
        mcp.send({"jsonrpc": "2.0", "id": 451, "method": "ping"})
        assert "result" in mcp.reply(451)
    finally:
        mcp.close()


def http_post(
    server: MindgateServer, body: dict[str, Any], session: str | None = None
) -> tuple[int, str | None]:
    req = urllib.request.Request(
        f"http://127.0.0.1:{server.port}/mcp",
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Authorization": f"Bearer {server['token']}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        },
    )
    if session is not None:
        req.add_header("Mcp-Session-Id", session)
        req.add_header("MCP-Protocol-Version", "2025-06-18")
    try:
        with urllib.request.urlopen(req, timeout=PATIENCE) as r:
            r.read()
            return r.status, r.headers.get("mcp-session-id")
    except urllib.error.HTTPError as e:
        e.read()
        return e.code, None


def open_http_session(server: MindgateServer) -> str:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "attack", "version": "1"},
        },
    }
    status, session = http_post(server, init)
    assert status == 200 and session, status
    status, _ = http_post(server, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    assert status in (200, 202), status
    return session


def ping(server: MindgateServer, session: str) -> int:
    return http_post(server, {"jsonrpc": "2.0", "id": 2, "method": "ping"}, session)[0]


def test_http_mcp_sessions_are_capped(mindgate: MindgateServer) -> None:
    first = open_http_session(mindgate)
    assert ping(mindgate, first) == 200
    later = [open_http_session(mindgate) for _ in range(MAX_HTTP_SESSIONS)]
    assert ping(mindgate, first) == 404, "the least recently used session is closed"
    assert all(ping(mindgate, s) == 200 for s in later[-3:])


def test_task_graph_routes_list_no_special_files(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots = make_roots(tmp_path)
    for k, v in isolated_env(tmp_path, tmp_path / "home").items():
        monkeypatch.setenv(k, v)
    server = MindgateServer(
        tmp_path / "home",
        free_port(),
        ["--sessions", str(roots["root"]), "--no-default-homes"],
    ).start()
    try:
        started = time.monotonic()
        with urllib.request.urlopen(f"{server['base']}/task-graph/api/tasks", timeout=PATIENCE) as r:
            tasks = json.loads(r.read())["tasks"]
        assert time.monotonic() - started < PATIENCE
        assert [t["id"] for t in tasks] == ["good-1"]
        for ident in ("zero", "fifo", "bomb"):
            try:
                urllib.request.urlopen(
                    f"{server['base']}/task-graph/api/task?id={ident}", timeout=PATIENCE
                )
                raise AssertionError(f"{ident} was served")
            except urllib.error.HTTPError as e:
                assert e.code == 404, (ident, e.code)
    finally:
        server.stop()
