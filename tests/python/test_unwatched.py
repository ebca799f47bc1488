"""An unwatched app never hangs: the real GraphMind client (graphmind-ai 0.5.1) at a gate
held only by the default pause on error is continued by the hub when nobody who can act
is watching (after the grace, `UNWATCHED_GRACE` = 3 s), and holds while a viewer page
with the control token is open, when a person asked for the gate (a breakpoint over
HTTP), or with `serve --hold-unwatched`."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

import graphmind
import pytest
from websockets.sync.client import connect

from conftest import MindgateServer, free_port

GRACE = 3.0


@pytest.fixture
def unwatched(tmp_path):
    """`mindgate serve` as a newcomer runs it: no `--hold-unwatched`."""
    server = MindgateServer(tmp_path / "home", free_port(), hold_unwatched=False).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch):
    """Makes a GraphMind client attached to `server`."""
    made: list[graphmind.GraphMind] = []

    def make(server: MindgateServer) -> graphmind.GraphMind:
        monkeypatch.setenv("GRAPHMIND_URL", server["ingest"])
        monkeypatch.delenv("GRAPHMIND_DISABLED", raising=False)
        gm = graphmind.GraphMind(
            app="unwatched-app", connect_timeout=2.0, handshake_timeout=2.0, retry_interval=0.3
        )
        made.append(gm)
        assert gm.ready(5.0), "client did not attach"
        return gm

    yield make
    for gm in made:
        gm.dispose()


class Viewer:
    """What an open viewer page is to the server: a `/ws/ui` connection with the token."""

    def __init__(self, server: MindgateServer) -> None:
        self.socket = connect(f"ws://127.0.0.1:{server.port}/ws/ui?token={server['token']}")
        self.ws = self.socket.__enter__()
        # The server counts the watcher before it says welcome.
        assert '"welcome"' in self.ws.recv(timeout=5)

    def close(self) -> None:
        self.socket.__exit__(None, None, None)


def failing_agent(gm: graphmind.GraphMind, name: str) -> tuple[threading.Thread, dict[str, Any]]:
    """Runs, in a thread, an agent whose tool `charge` raises (an error gate)."""

    @gm.tool
    def charge(amount: int) -> str:
        raise RuntimeError(f"card declined for {amount}")

    box: dict[str, Any] = {}

    def target() -> None:
        try:
            with gm.run(name):
                box["value"] = charge(42)
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, box


def resumed_principals(server: MindgateServer, run_id: str) -> list[Any]:
    return [
        e["payload"].get("principal")
        for e in server.events(run_id)
        if e["type"] == "exec.resumed"
    ]


def stays_held(server: MindgateServer, pause: dict[str, Any], for_s: float) -> None:
    """Asserts the gate is still listed for `for_s` seconds (past the grace)."""
    until = time.monotonic() + for_s
    while time.monotonic() < until:
        held = server.get(f"/api/pauses?runId={pause['runId']}")["pauses"]
        assert [p["pauseId"] for p in held] == [pause["pauseId"]], held
        time.sleep(0.2)


def released_by(server: MindgateServer, thread: threading.Thread, box: dict[str, Any], run_id: str) -> None:
    thread.join(15)
    assert not thread.is_alive(), "the app still hangs at its error gate"
    assert isinstance(box.get("error"), RuntimeError), box  # continue rethrows the error
    server.wait_run(run_id, "error")
    assert resumed_principals(server, run_id) == [{"kind": "unwatched"}]


def test_without_a_viewer_the_app_runs_through_its_error_gate(unwatched, app):
    gm = app(unwatched)
    started = time.monotonic()
    thread, box = failing_agent(gm, "nobody-watches")
    pause = unwatched.wait_pause()
    assert pause["point"] == "error"
    released_by(unwatched, thread, box, pause["runId"])
    assert time.monotonic() - started >= GRACE - 0.1
    log = unwatched.log.read_text()
    line = next(l for l in log.splitlines() if "continued the error gate" in l)
    assert pause["runId"] in line and "tool:charge" in line and "nobody with control is watching" in line


def test_an_open_viewer_page_keeps_the_gate_until_it_closes(unwatched, app):
    viewer = Viewer(unwatched)
    gm = app(unwatched)
    thread, box = failing_agent(gm, "watched")
    pause = unwatched.wait_pause()
    stays_held(unwatched, pause, GRACE + 1.0)
    # A reload: the page goes and comes back within the grace; the gate still holds.
    viewer.close()
    viewer = Viewer(unwatched)
    stays_held(unwatched, pause, GRACE + 1.0)
    # The page closes mid-hold: released after the grace, not before.
    closed = time.monotonic()
    viewer.close()
    released_by(unwatched, thread, box, pause["runId"])
    assert time.monotonic() - closed >= GRACE - 0.1


def test_a_breakpoint_set_over_http_holds_with_no_page_open(unwatched, app):
    status, body = unwatched.request("POST", "/api/breakpoints", {"point": "error", "name": "charge"})
    assert status == 200 and body["added"] is True
    gm = app(unwatched)
    thread, box = failing_agent(gm, "asked-for")
    pause = unwatched.wait_pause()
    stays_held(unwatched, pause, GRACE + 1.0)
    assert thread.is_alive()
    assert unwatched.resume(pause, "continue") == "resumed"
    thread.join(10)
    unwatched.wait_run(pause["runId"], "error")
    assert resumed_principals(unwatched, pause["runId"]) == [{"kind": "http"}]


def test_hold_unwatched_keeps_the_error_gate(tmp_path, app):
    server = MindgateServer(tmp_path / "home", free_port(), ["--hold-unwatched"], hold_unwatched=False).start()
    try:
        assert server.get("/api/debug")["holdUnwatched"] is True
        gm = app(server)
        thread, box = failing_agent(gm, "kept")
        pause = server.wait_pause()
        stays_held(server, pause, GRACE + 1.0)
        assert server.resume(pause, "abort") == "resumed"
        thread.join(10)
        assert isinstance(box.get("error"), graphmind.GraphMindAbortError), box
    finally:
        server.stop()


def test_the_viewer_toggle_keeps_the_error_gate_and_is_saved(unwatched, app):
    status, body = unwatched.request("PUT", "/api/hold-unwatched", {"hold": True})
    assert status == 200 and body == {"holdUnwatched": True}
    unwatched.restart()
    assert unwatched.get("/api/debug")["holdUnwatched"] is True
    gm = app(unwatched)
    thread, box = failing_agent(gm, "toggled")
    pause = unwatched.wait_pause()
    stays_held(unwatched, pause, GRACE + 1.0)
    assert unwatched.resume(pause, "continue") == "resumed"
    thread.join(10)


def test_an_mcp_client_with_control_keeps_the_error_gate(unwatched, app):
    import asyncio

    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    gm = app(unwatched)

    async def main() -> None:
        headers = {"Authorization": f"Bearer {unwatched['token']}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as client:
            async with streamable_http_client(f"{unwatched['base']}/mcp", http_client=client) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    thread, box = failing_agent(gm, "mcp-watches")
                    pause = await asyncio.to_thread(unwatched.wait_pause)
                    await asyncio.to_thread(stays_held, unwatched, pause, GRACE + 1.0)
                    result = await session.call_tool(
                        "resume",
                        {"runId": pause["runId"], "pauseId": pause["pauseId"], "action": "continue"},
                    )
                    assert not result.is_error, result
                    await asyncio.to_thread(thread.join, 10)
                    await asyncio.to_thread(unwatched.wait_run, pause["runId"], "error")
                    assert resumed_principals(unwatched, pause["runId"]) == [{"kind": "mcp"}]

    asyncio.run(asyncio.wait_for(main(), 60))


def test_mindgate_mcp_with_control_over_stdio_keeps_the_error_gate(unwatched, app):
    import asyncio
    import os

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from conftest import BIN

    gm = app(unwatched)
    env = dict(os.environ, MINDGATE_HOME=str(unwatched.home), MINDGATE_LOG="warn")

    def watchers() -> int:
        return unwatched.get("/health")["watchers"]

    async def main() -> dict[str, Any]:
        params = StdioServerParameters(
            command=BIN, args=["mcp", "--port", str(unwatched.port), "--allow-control"], env=env
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                deadline = time.monotonic() + 15
                while watchers() != 1:
                    assert time.monotonic() < deadline, "mindgate mcp never watched the server"
                    await asyncio.sleep(0.05)
                thread, box = failing_agent(gm, "mcp-stdio-watches")
                pause = await asyncio.to_thread(unwatched.wait_pause)
                await asyncio.to_thread(stays_held, unwatched, pause, GRACE + 1.0)
        # The session ended: nobody watches any more; released after the grace.
        await asyncio.to_thread(released_by, unwatched, thread, box, pause["runId"])
        return pause

    asyncio.run(asyncio.wait_for(main(), 90))
    assert watchers() == 0
