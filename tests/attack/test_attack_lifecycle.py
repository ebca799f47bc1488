"""Issue #10 replays against the real binary: shutdown with a stalled client, a second
server on the same home / port / database, database files the server must not convert or
chmod, `--db` URLs, and DNS rebinding with `--allow-remote`.

Every wait is bounded (a few seconds past the 5 s shutdown deadline at most); all traffic
stays on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import socket
import sqlite3
import stat
import subprocess
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Callable

import graphmind
import pytest

from mindgate_harness import BIN, MindgateServer, free_port

# `mindgate serve` waits this long for open connections before it closes them.
SHUTDOWN_DEADLINE = 5.0
# Exit must follow the deadline closely: flushing the store takes milliseconds.
EXIT_BOUND = SHUTDOWN_DEADLINE + 3.0


def serve_env(home: pathlib.Path) -> dict[str, str]:
    env = dict(os.environ)
    env["MINDGATE_HOME"] = str(home)
    env.setdefault("MINDGATE_LOG", "warn")
    return env


def run_serve(home: pathlib.Path, *args: str, cwd: pathlib.Path | None = None, timeout: float = 10.0):
    """Runs `mindgate serve` expecting it to refuse to start; returns (code, stderr)."""
    home.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [BIN, "serve", "--no-open", *args],
        env=serve_env(home),
        cwd=cwd,
        capture_output=True,
        timeout=timeout,
    )
    return proc.returncode, proc.stderr.decode(errors="replace")


def half_sent_request(port: int) -> socket.socket:
    """A connection that sent half a request head and went quiet, accepted by the server."""
    stalled = socket.create_connection(("127.0.0.1", port), timeout=5)
    stalled.sendall(f"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Half".encode())
    # Connections are accepted in order: once a later one is answered, this one is in.
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
        assert r.status == 200
    return stalled


def wait_exit(server: MindgateServer, timeout: float) -> tuple[int | None, float]:
    assert server.proc is not None
    t0 = time.monotonic()
    try:
        code = server.proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.wait()
        raise AssertionError(f"mindgate serve did not exit within {timeout} s of SIGTERM")
    return code, time.monotonic() - t0


def gm_client(url: str) -> graphmind.GraphMind:
    gm = graphmind.GraphMind(
        app="attack-app", url=url, connect_timeout=2.0, handshake_timeout=2.0, retry_interval=0.3
    )
    assert gm.ready(5.0), "client did not attach"
    return gm


def in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            box["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    return t, box


def held_run(server: MindgateServer, name: str) -> tuple[graphmind.GraphMind, threading.Thread, dict[str, Any], dict[str, Any]]:
    """A graphmind-ai run whose tool is held at a breakpoint (the run stays `running`)."""
    status, _ = server.request("POST", "/api/breakpoints", {"kind": "tool"})
    assert status == 200
    gm = gm_client(server["ingest"])

    @gm.tool
    def held(x: int) -> int:
        return x + 1

    def body() -> int:
        with gm.run(name):
            return held(1)

    thread, box = in_thread(body)
    pause = server.wait_pause()
    return gm, thread, box, pause


def test_sigterm_with_a_half_sent_request_ends_at_the_deadline_and_keeps_the_newcomers_token_file(tmp_path):
    home = tmp_path / "home"
    port = free_port()
    first = MindgateServer(home, port).start()
    first_pid = first.proc.pid
    stalled = half_sent_request(port)
    newcomer = None
    try:
        t0 = time.monotonic()
        first.proc.send_signal(signal.SIGTERM)
        # While the first one waits for the stalled request: a start on its database is refused…
        code, err = run_serve(home, "--port", "0")
        assert code != 0, err
        assert f"in use by another Mindgate server (pid {first_pid}, port {port})" in err, err
        # …and one on another database may take the port, and writes its token file.
        newcomer = MindgateServer(home, port, ["--db", str(tmp_path / "other.db")]).start()
        assert first.proc.poll() is None, "the first server should still be in its shutdown"
        token_file = home / "run" / f"serve-{port}.json"
        assert json.loads(token_file.read_text())["pid"] == newcomer.proc.pid
        code, _ = wait_exit(first, EXIT_BOUND)
        took = time.monotonic() - t0
        first.proc = None
        assert code == 0
        assert took < EXIT_BOUND, f"SIGTERM -> exit took {took:.2f} s"
        print(f"SIGTERM -> exit with a half-sent request: {took:.2f} s")
        # The first server's late exit left the newcomer's token file alone.
        assert token_file.exists(), "the first server deleted the newcomer's token file"
        assert json.loads(token_file.read_text())["pid"] == newcomer.proc.pid
        assert newcomer.get("/health")["ok"] is True
    finally:
        stalled.close()
        first.stop()
        if newcomer is not None:
            newcomer.stop()


def test_sigterm_with_a_held_python_gate_exits_promptly_and_keeps_the_run(mindgate):
    gm, thread, box, pause = held_run(mindgate, "held-at-shutdown")
    run_id = pause["runId"]
    try:
        t0 = time.monotonic()
        mindgate.proc.send_signal(signal.SIGTERM)
        code, _ = wait_exit(mindgate, EXIT_BOUND)
        took = time.monotonic() - t0
        mindgate.proc = None
        assert code == 0
        print(f"SIGTERM -> exit with a held graphmind-ai gate: {took:.2f} s")
        # The gate fails open when the server goes away.
        thread.join(5)
        assert not thread.is_alive()
        assert box.get("value") == 2, box
        # Everything the run sent before the stop was flushed.
        db = sqlite3.connect(f"file:{mindgate['db']}?mode=ro", uri=True)
        try:
            (count,) = db.execute(
                "SELECT COUNT(*) FROM events JOIN runs ON runs.key = events.run_key WHERE runs.id = ?",
                (run_id,),
            ).fetchone()
        finally:
            db.close()
        assert count >= 3, count  # run.started, node.started, exec.paused at least
    finally:
        gm.dispose()


def test_a_start_on_a_busy_port_or_database_leaves_the_live_runs_running(mindgate):
    gm, thread, box, pause = held_run(mindgate, "live-run")
    run_id = pause["runId"]
    home = pathlib.Path(mindgate["home"])
    try:
        code, err = run_serve(home, "--port", str(mindgate.port))
        assert code != 0
        assert f"already in use by mindgate serve (pid {mindgate.proc.pid}, port {mindgate.port})" in err, err
        assert mindgate["token"] not in err, "the refusal must not print the running server's token"
        code, err = run_serve(home, "--port", "0")
        assert code != 0
        assert f"(pid {mindgate.proc.pid}, port {mindgate.port})" in err, err
        # The refused starts did not reconcile the running server's live run.
        status, run = mindgate.request("GET", f"/api/runs/{run_id}")
        assert status == 200 and run["status"] == "running", run
        assert mindgate.resume(pause, "continue") == "resumed"
        thread.join(5)
        assert box.get("value") == 2, box
    finally:
        gm.dispose()


def sqlite_header_journal(path: pathlib.Path) -> tuple[int, int]:
    data = path.read_bytes()
    return data[18], data[19]


def test_a_newer_schema_database_is_refused_and_left_as_found(tmp_path):
    db = tmp_path / "newer.db"
    conn = sqlite3.connect(db)
    conn.executescript("CREATE TABLE future (x INTEGER); PRAGMA user_version = 42;")
    conn.close()
    before = db.read_bytes()
    assert sqlite_header_journal(db) == (1, 1)
    code, err = run_serve(tmp_path / "home", "--port", str(free_port()), "--db", str(db))
    assert code != 0
    assert "schema version 42 is newer" in err, err
    assert db.read_bytes() == before, "the refused database was changed"
    assert not (tmp_path / "newer.db-wal").exists()


def test_a_read_only_database_is_refused_and_keeps_its_mode(tmp_path):
    db = tmp_path / "frozen.db"
    conn = sqlite3.connect(db)
    conn.executescript("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);")
    conn.close()
    os.chmod(db, 0o444)
    before = db.read_bytes()
    code, err = run_serve(tmp_path / "home", "--port", str(free_port()), "--db", str(db))
    assert code != 0
    assert "is read-only (mode 444)" in err, err
    assert stat.S_IMODE(db.stat().st_mode) == 0o444
    assert db.read_bytes() == before


def test_a_url_of_another_database_for_db_is_refused_and_creates_nothing(tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    code, err = run_serve(tmp_path / "home", "--port", "0", "--db", "mysql://u:p@db.example/mindgate", cwd=cwd)
    assert code == 2
    assert "'mysql:' URLs are not supported" in err, err
    assert list(cwd.iterdir()) == []


def test_an_unreachable_postgres_db_stops_the_start_without_showing_the_password(tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    closed = free_port()  # bound, then released: nobody listens there
    url = f"postgres://u:hunter2@127.0.0.1:{closed}/mindgate"
    code, err = run_serve(tmp_path / "home", "--port", "0", "--db", url, cwd=cwd, timeout=20.0)
    assert code != 0, err
    assert f"cannot reach the PostgreSQL database postgres://u:***@127.0.0.1:{closed}/mindgate" in err, err
    assert "hunter2" not in err
    # Neither a SQLite file named after the scheme nor anything else was created.
    assert list(cwd.iterdir()) == []


# -- --allow-remote ----------------------------------------------------------------


class RemoteServer:
    """`mindgate serve --allow-remote --allowed-host mindgate.test` on 127.0.0.1."""

    def __init__(self, home: pathlib.Path) -> None:
        self.home = home
        self.port = free_port()
        home.mkdir(parents=True, exist_ok=True)
        self.log = open(home / "serve.log", "ab")
        self.proc = subprocess.Popen(
            [BIN, "serve", "--no-open", "--port", str(self.port), "--allow-remote", "--allowed-host", "mindgate.test"],
            env=serve_env(home),
            stdout=self.log,
            stderr=self.log,
        )
        token_file = home / "run" / f"serve-{self.port}.json"
        deadline = time.monotonic() + 15
        while not token_file.exists():
            assert self.proc.poll() is None, (home / "serve.log").read_text()
            assert time.monotonic() < deadline, "no token file"
            time.sleep(0.05)
        self.token = json.loads(token_file.read_text())["token"]
        self.base = f"http://127.0.0.1:{self.port}"

    def status(self, path: str, headers: dict[str, str] | None = None) -> int:
        req = urllib.request.Request(self.base + path, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code

    def get(self, path: str) -> Any:
        req = urllib.request.Request(self.base + path, headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.loads(r.read())

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=EXIT_BOUND)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def ws_handshake_status(port: int, path: str) -> int:
    """The HTTP status of a WebSocket upgrade request (101 = accepted)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(
            (
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        line = s.recv(4096).split(b"\r\n", 1)[0]
    return int(line.split()[1])


def test_allow_remote_refuses_dns_rebinding_and_needs_the_token_everywhere(tmp_path):
    server = RemoteServer(tmp_path / "home")
    try:
        port = server.port
        # The rebinding page: attacker's name in Host, its own Origin.
        rebound = {"Host": f"attacker.example:{port}", "Origin": f"http://attacker.example:{port}"}
        assert server.status("/api/runs", rebound) == 403
        assert server.status("/ws/ui", rebound) == 403
        # Loopback relaxes nothing: reads, feeds and ingest all need the token.
        assert server.status("/api/runs") == 401
        assert server.status("/health") == 401
        assert ws_handshake_status(port, "/ws/ui") == 401
        assert ws_handshake_status(port, "/ingest") == 401
        assert ws_handshake_status(port, f"/ingest?token={server.token}") == 101
        assert server.status(f"/api/runs?token={server.token}") == 200
        allowed = {"Host": f"mindgate.test:{port}", "Authorization": f"Bearer {server.token}"}
        assert server.status("/api/runs", allowed) == 200
        # The viewer page itself carries no data.
        assert server.status("/") == 200
        # graphmind-ai 0.5.1 passes the token in its URL.
        gm = gm_client(f"ws://127.0.0.1:{port}/ingest?token={server.token}")
        try:
            @gm.tool
            def add(a: int, b: int) -> int:
                return a + b

            with gm.run("remote-run"):
                assert add(2, 3) == 5
        finally:
            gm.dispose()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            runs = server.get("/api/runs?q=remote-run")["runs"]
            if runs and runs[0]["status"] == "ok":
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the remote run was not stored")
    finally:
        server.stop()
