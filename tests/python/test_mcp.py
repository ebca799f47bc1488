"""`mindgate mcp` driven by the official Python MCP client (the `mcp` package).

A real `mindgate serve` records real runs from the real GraphMind client
(graphmind-ai 0.5.1); `mindgate mcp` is then started over stdio with the same
`MINDGATE_HOME` — while the server keeps running (WAL), and once after it
stopped — and every tool is called through `stdio_client` + `ClientSession`.
Task tools read the task-graph crate's session fixtures (`--sessions`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pathlib
import threading
import time
from typing import Any, AsyncIterator, Callable

import graphmind
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from conftest import BIN, REPO, MindgateServer, free_port

SESSIONS = REPO / "crates" / "taskgraph" / "tests" / "fixtures"
READ_TOOLS = {
    "list_runs",
    "get_run",
    "get_node",
    "find_errors",
    "search_events",
    "list_tasks",
    "get_task_graph",
    "get_usage",
    "search_tasks",
    "diff_runs",
    "list_threads",
    "get_thread",
    "list_annotations",
    "dataset_list",
    "dataset_show",
}
# Offered by default, not read-only: an agent's annotation and dataset example (marked as
# an agent's).
ANNOTATE_TOOLS = {"annotate", "dataset_add"}
CONTROL_TOOLS = {"list_pauses", "resume"}
# The memory tools (tests/python/test_mcp_memory.py drives them).
MEMORY_TOOLS = {
    "block_append",
    "block_replace",
    "block_rethink",
    "fact_remember",
    "fact_search",
    "fact_supersede",
    "fact_forget",
    "fact_history",
    "recall_episodes",
    "conversation_search",
    "memory_status",
    "procedure_search",
    "procedure_outcome",
}


# -- helpers -------------------------------------------------------------------


def mcp_env(home: pathlib.Path, scratch: pathlib.Path) -> dict[str, str]:
    """Environment for `mindgate mcp`: our home, and no real coding-agent homes."""
    env = dict(os.environ)
    env["MINDGATE_HOME"] = str(home)
    env["HOME"] = str(scratch)
    for var in (
        "DSH_HOME",
        "PI_CODING_AGENT_DIR",
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "GEMINI_CLI_HOME",
        "XDG_DATA_HOME",
    ):
        env[var] = str(scratch / var.lower())
    env.setdefault("MINDGATE_LOG", "warn")
    return env


@contextlib.asynccontextmanager
async def mcp_session(
    home: pathlib.Path, scratch: pathlib.Path, *extra: str
) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=BIN,
        args=["mcp", "--sessions", str(SESSIONS), *extra],
        env=mcp_env(home, scratch),
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


def drive(
    home: pathlib.Path,
    scratch: pathlib.Path,
    body: Callable[[ClientSession], Any],
    *extra: str,
) -> Any:
    """Runs `body(session)` against a fresh `mindgate mcp` process."""

    async def main() -> Any:
        async with mcp_session(home, scratch, *extra) as session:
            return await body(session)

    return asyncio.run(asyncio.wait_for(main(), 60))


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def ok(session: ClientSession, tool: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    result = await session.call_tool(tool, args)
    assert not result.is_error, (tool, args, text_of(result))
    assert isinstance(result.structured_content, dict), result
    return text_of(result), result.structured_content


async def tool_error(session: ClientSession, tool: str, args: dict[str, Any]) -> str:
    result = await session.call_tool(tool, args)
    assert result.is_error, (tool, args, text_of(result))
    return text_of(result)


def run_id_of(server: MindgateServer, name: str, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = server.get(f"/api/runs?q={name}")["runs"]
        if runs:
            return runs[0]["id"]
        time.sleep(0.05)
    raise AssertionError(f"no run named {name}")


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


def make_client(server: MindgateServer) -> graphmind.GraphMind:
    os.environ.pop("GRAPHMIND_DISABLED", None)
    gm = graphmind.GraphMind(
        app="mcp-test-agent",
        url=server["ingest"],
        connect_timeout=2.0,
        handshake_timeout=2.0,
        retry_interval=0.3,
    )
    assert gm.ready(5.0), "client did not attach"
    return gm


# -- the recorded world ----------------------------------------------------------


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    """A running server holding two real runs: `book-trip` (ok) and `checkout`
    (a tool raises "card declined"; its error gate is continued; the run fails)."""
    root = tmp_path_factory.mktemp("mcp")
    server = MindgateServer(root / "home", free_port()).start()
    gm = make_client(server)
    try:

        @gm.tool
        def search_flights(origin: str, destination: str) -> list[dict[str, Any]]:
            return [{"flight": "GM101", "from": origin, "to": destination, "usd": 212.5}]

        @gm.tool
        def charge_card(amount_usd: float) -> dict[str, Any]:
            raise RuntimeError("card declined")

        with gm.run("book-trip", meta={"user": "u_42"}):
            with gm.span("plan", kind="chain", input={"goal": "SFO to LIS"}) as span:
                span.set_output({"steps": 2})
            search_flights("SFO", "LIS")

        def checkout() -> None:
            with gm.run("checkout"):
                charge_card(99.0)

        thread, box = in_thread(checkout)
        pause = server.wait_pause()  # the viewer arms {point: "error"} by default
        assert pause["nodeId"] == "tool:charge_card"
        assert server.resume(pause, "continue") == "resumed"
        thread.join(10)
        assert isinstance(box.get("error"), RuntimeError), box
        ids = {
            "ok": server.wait_run(run_id_of(server, "book-trip"), "ok")["id"],
            "failed": server.wait_run(run_id_of(server, "checkout"), "error")["id"],
        }
        yield {"server": server, "gm": gm, "home": server.home, "scratch": root, "ids": ids}
    finally:
        gm.dispose()
        server.stop()


# -- tests --------------------------------------------------------------------------


def test_initialize_lists_read_only_tools_with_schemas(world):
    async def body(session: ClientSession) -> None:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == READ_TOOLS | MEMORY_TOOLS | ANNOTATE_TOOLS
        tools = {name: t for name, t in tools.items() if name in READ_TOOLS}
        for tool in tools.values():
            assert tool.description
            assert tool.input_schema["type"] == "object"
            assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tools["get_run"].input_schema["required"] == ["runId"]
        assert set(tools["get_node"].input_schema["required"]) == {"runId", "nodeId"}
        assert "maxChars" in tools["get_node"].input_schema["properties"]
        assert tools["search_events"].input_schema["required"] == ["query"]

    drive(world["home"], world["scratch"], body)

    async def control(session: ClientSession) -> None:
        names = {t.name for t in (await session.list_tools()).tools}
        assert names == READ_TOOLS | CONTROL_TOOLS | MEMORY_TOOLS | ANNOTATE_TOOLS

    drive(world["home"], world["scratch"], control, "--allow-control")


def test_server_info_and_instructions():
    async def main() -> None:
        params = StdioServerParameters(command=BIN, args=["mcp", "--home", "/nonexistent-mindgate-home"])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                assert init.server_info.name == "mindgate"
                assert "get_run" in (init.instructions or "")
                assert init.capabilities.tools is not None

    asyncio.run(asyncio.wait_for(main(), 60))


def test_an_agent_opens_the_failed_run_and_reads_the_failing_node(world):
    """The issue's "done means": list runs, open the failed one, see the failing
    node's input, output and error."""
    port = world["server"]["port"]
    failed = world["ids"]["failed"]

    async def body(session: ClientSession) -> None:
        text, runs = await ok(session, "list_runs", {})
        by_name = {r["name"]: r for r in runs["runs"]}
        assert by_name["checkout"]["status"] == "error"
        assert by_name["book-trip"]["status"] == "ok"
        assert by_name["checkout"]["link"] == f"http://127.0.0.1:{port}/#/run/{failed}"
        assert "checkout" in text and "error" in text

        _, only_failed = await ok(session, "list_runs", {"status": "error"})
        assert [r["id"] for r in only_failed["runs"]] == [failed]

        text, run = await ok(session, "get_run", {"runId": failed})
        assert run["run"]["status"] == "error"
        assert run["runError"]["message"] == "card declined"
        failing = [e for e in run["errors"] if e["nodeId"] == "tool:charge_card"]
        assert failing and failing[0]["message"] == "card declined"
        assert failing[0]["link"] == f"http://127.0.0.1:{port}/#/run/{failed}/node/tool%3Acharge_card"
        assert "tool:charge_card" in {n["nodeId"] for n in run["graph"]["nodes"]}
        assert "RuntimeError: card declined" in text

        text, node = await ok(session, "get_node", {"runId": failed, "nodeId": "tool:charge_card"})
        inst = node["instances"][-1]
        assert inst["status"] == "error"
        assert inst["input"] == {"amount_usd": 99.0}
        assert inst["errorDetail"]["name"] == "RuntimeError"
        assert "card declined" in inst["errorDetail"]["stack"]
        assert inst["pauses"][0]["point"] == "error" and inst["pauses"][0]["action"] == "continue"
        assert '"amount_usd":99.0' in text.replace(" ", "")
        assert "error: RuntimeError: card declined" in text

        _, ok_node = await ok(
            session, "get_node", {"runId": world["ids"]["ok"], "nodeId": "tool:search_flights"}
        )
        out = ok_node["instances"][-1]
        assert out["input"] == {"origin": "SFO", "destination": "LIS"}
        assert out["output"][0]["flight"] == "GM101"

        _, tiny = await ok(
            session,
            "get_node",
            {"runId": world["ids"]["ok"], "nodeId": "tool:search_flights", "maxChars": 1},
        )
        assert tiny["valuesTruncated"] is True
        assert tiny["instances"][-1]["output"][0]["flight"].startswith("G…[+")

    drive(world["home"], world["scratch"], body)


def test_find_errors_and_search_events(world):
    failed = world["ids"]["failed"]

    async def body(session: ClientSession) -> None:
        text, errors = await ok(session, "find_errors", {"limit": 10})
        node_errors = [e for e in errors["nodes"] if e["nodeId"] == "tool:charge_card"]
        assert node_errors and node_errors[0]["message"] == "card declined"
        assert node_errors[0]["runId"] == failed
        assert [r["id"] for r in errors["runs"]] == [failed]
        assert errors["runs"][0]["error"]["message"] == "card declined"
        assert "card declined" in text

        _, recent = await ok(session, "find_errors", {"since": "1h"})
        assert recent["nodes"], recent
        _, none = await ok(session, "find_errors", {"since": int(time.time() * 1000) + 3_600_000})
        assert none["nodes"] == [] and none["runs"] == []

        text, hits = await ok(session, "search_events", {"query": "GM101"})
        assert hits["hits"] and all(h["runId"] == world["ids"]["ok"] for h in hits["hits"])
        assert any(h["nodeId"] == "tool:search_flights" for h in hits["hits"])
        assert "GM101" in text
        _, scoped = await ok(session, "search_events", {"query": "GM101", "runId": failed})
        assert scoped["hits"] == []

    drive(world["home"], world["scratch"], body)


def test_task_tools_read_a_coding_sessions_critical_path(world):
    async def body(session: ClientSession) -> None:
        text, tasks = await ok(session, "list_tasks", {"limit": 50})
        ids = {t["id"]: t for t in tasks["tasks"]}
        assert {"c-main", "dsh-fail", "cx-main", "pi-main"} <= set(ids)
        assert ids["dsh-fail"]["status"] == "FAILED"
        _, codex = await ok(session, "list_tasks", {"agent": "codex"})
        assert {t["agent"] for t in codex["tasks"]} == {"codex"}

        text, graph = await ok(session, "get_task_graph", {"id": "c-main"})
        path = [n["id"] for n in graph["criticalPath"]["nodes"]]
        assert path[:2] == ["task", "phase-1"]
        assert graph["criticalPath"]["durationMs"] > 0
        assert any(f["error"] == "Interrupted by user" for f in graph["failures"])
        assert graph["filesChanged"] == ["/work/napkin/src/upload.test.ts"]
        assert "Critical path" in text and "Interrupted by user" in text

        _, full = await ok(session, "get_task_graph", {"id": "dsh-fail", "detail": "full"})
        assert full["status"] == "FAILED"
        assert len(full["nodes"]) == full["nodeCount"]

    drive(world["home"], world["scratch"], body)


def test_search_tasks_and_get_usage_read_every_session(world):
    """Issue 31 items 4 and 5 over MCP: a tool output of the Codex fixture is found at its
    node with a viewer link that opens it; usage by agent sums to the total."""

    async def body(session: ClientSession) -> None:
        text, found = await ok(session, "search_tasks", {"query": "jest upload", "limit": 10})
        hits = found["hits"]
        assert hits, text
        c_main = [h for h in hits if h["session_id"] == "c-main"]
        assert c_main, hits
        assert c_main[0]["kind"] == "tool_args" and c_main[0]["node_id"].startswith("tool-")
        assert "#/task/c-main/turn/" in c_main[0]["link"] and "?node=" in c_main[0]["link"]
        assert "jest upload" in c_main[0]["snippet"]
        assert "search_tasks" not in text and "c-main" in text
        _, none = await ok(session, "search_tasks", {"query": "zz-nowhere-zz"})
        assert none["hits"] == []
        assert "query" in await tool_error(session, "search_tasks", {"query": " "})

        text, usage = await ok(session, "get_usage", {"by": "agent", "tz": "UTC"})
        rows = usage["rows"]
        assert {r["key"] for r in rows} >= {"claude_code", "codex", "pi", "dsh"}
        assert sum(r["tokens"]["total"] for r in rows) == usage["total"]["tokens"]["total"]
        assert usage["total"]["tokens"]["cache_write"] > 0
        assert "Usage by agent" in text
        assert "tz" in await tool_error(session, "get_usage", {"tz": "Mars/Olympus"})

    drive(world["home"], world["scratch"], body)


def test_task_tools_read_gemini_cli_and_opencode_sessions(tmp_path):
    """The fixtures folder holds a Gemini CLI tmp folder and an OpenCode storage tree of our
    own: `list_tasks` filters them by agent, `get_task_graph` names their failed calls."""

    async def body(session: ClientSession) -> None:
        _, gemini = await ok(session, "list_tasks", {"agent": "gemini", "limit": 50})
        ids = {t["id"]: t for t in gemini["tasks"]}
        assert {t["agent"] for t in gemini["tasks"]} == {"gemini"}
        main = "11111111-1111-4111-8111-111111111111"
        assert main in ids and ids[main]["status"] == "FAILED"
        sub = ids["22222222-2222-4222-8222-222222222222"]
        assert sub["parentSession"] == main
        text, graph = await ok(session, "get_task_graph", {"id": main})
        assert any("Path not in workspace" in f["error"] for f in graph["failures"]), graph["failures"]
        assert "Path not in workspace" in text

        _, opencode = await ok(session, "list_tasks", {"agent": "opencode", "limit": 50})
        assert {t["id"] for t in opencode["tasks"]} == {"ses_fixtureparent0001", "ses_fixturechild00002"}
        _, graph = await ok(session, "get_task_graph", {"id": "ses_fixtureparent0001"})
        assert any("No changes to apply" in f["error"] for f in graph["failures"]), graph["failures"]

    drive(tmp_path / "home", tmp_path, body)


def test_unknown_ids_and_bad_arguments_are_tool_errors(world):
    async def body(session: ClientSession) -> None:
        msg = await tool_error(session, "get_run", {"runId": "no-such-run"})
        assert "no run with id `no-such-run`" in msg
        msg = await tool_error(
            session, "get_node", {"runId": world["ids"]["failed"], "nodeId": "tool:nope"}
        )
        assert "has no node `tool:nope`" in msg
        assert "no such" not in (await tool_error(session, "get_run", {"runId": ""}))
        await tool_error(session, "get_run", {})  # missing runId
        await tool_error(session, "get_run", {"runId": 42})  # wrong type
        await tool_error(session, "get_run", {"run_id": "x"})  # unknown field
        assert "limit" in await tool_error(session, "list_runs", {"limit": 0})
        await tool_error(session, "list_runs", {"status": "exploded"})
        assert "since" in await tool_error(session, "find_errors", {"since": "last tuesday"})
        assert "query" in await tool_error(session, "search_events", {"query": ""})
        assert "no task session" in await tool_error(session, "get_task_graph", {"id": "nope-nope"})
        assert "matches" in await tool_error(session, "get_task_graph", {"id": "dsh-"})
        # The session is still healthy after all of that.
        _, runs = await ok(session, "list_runs", {"limit": 1})
        assert len(runs["runs"]) == 1
        # Control tools are not offered without --allow-control.
        with pytest.raises(MCPError):
            await session.call_tool("resume", {"runId": "r", "pauseId": "p", "action": "continue"})

    drive(world["home"], world["scratch"], body)


def test_control_tools_release_a_real_gate_through_the_server(world):
    server, gm = world["server"], world["gm"]

    @gm.tool
    def lookup_price(sku: str) -> float:
        raise ValueError(f"no price for {sku}")

    def priced() -> float:
        with gm.run("pricing"):
            return lookup_price("sku-9")

    thread, box = in_thread(priced)

    async def body(session: ClientSession) -> None:
        deadline = time.monotonic() + 10
        pauses: list[dict[str, Any]] = []
        while time.monotonic() < deadline and not pauses:
            _, listed = await ok(session, "list_pauses", {})
            pauses = [p for p in listed["pauses"] if p["nodeId"] == "tool:lookup_price"]
            if not pauses:
                await asyncio.sleep(0.1)
        assert pauses, "the error gate never showed up in list_pauses"
        pause = pauses[0]
        assert pause["point"] == "error"
        assert pause["link"].startswith(f"http://127.0.0.1:{server['port']}/#/run/")
        assert "output" in await tool_error(
            session, "resume", {"runId": pause["runId"], "pauseId": pause["pauseId"], "action": "inject"}
        )
        text, resumed = await ok(
            session,
            "resume",
            {"runId": pause["runId"], "pauseId": pause["pauseId"], "action": "inject", "output": 12.5},
        )
        assert resumed["result"]["result"] == "resumed"
        assert "Resumed" in text
        # The first release wins; a second one is a tool error naming the answer.
        again = await tool_error(
            session, "resume", {"runId": pause["runId"], "pauseId": pause["pauseId"], "action": "continue"}
        )
        assert "taken" in again or "no-such-pause" in again

    drive(world["home"], world["scratch"], body, "--allow-control")
    thread.join(10)
    assert box.get("value") == 12.5, box
    run_id = run_id_of(server, "pricing")
    server.wait_run(run_id, "ok")
    # `mindgate mcp` resumes with the agent token (run/agent-<port>.json), never the
    # person's: the release is stamped `mcp`, not the HTTP API's `http`.
    detail = server.get(f"/api/runs/{run_id}/nodes/tool:lookup_price")
    assert [p["principal"]["kind"] for p in detail["instances"][0]["pauses"]] == ["mcp"], detail


def test_history_stays_readable_after_the_server_stops(tmp_path):
    server = MindgateServer(tmp_path / "home", free_port()).start()
    gm = make_client(server)
    try:

        @gm.tool
        def echo(text: str) -> str:
            return text

        with gm.run("closed-viewer"):
            echo("still here")
        run_id = server.wait_run(run_id_of(server, "closed-viewer"), "ok")["id"]
    finally:
        gm.dispose()
        server.stop()

    async def body(session: ClientSession) -> None:
        _, runs = await ok(session, "list_runs", {})
        assert [r["id"] for r in runs["runs"]] == [run_id]
        _, node = await ok(session, "get_node", {"runId": run_id, "nodeId": "tool:echo"})
        assert node["instances"][0]["output"] == "still here"
        # Without a running server, control has nowhere to go: a clear tool error.
        msg = await tool_error(session, "list_pauses", {})
        assert "mindgate serve" in msg

    drive(server.home, tmp_path, body, "--allow-control")
