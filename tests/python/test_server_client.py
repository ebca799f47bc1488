"""The real GraphMind Python client (graphmind-ai 0.5.1), unchanged, against `mindgate serve`."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

import graphmind
import pytest

from conftest import MindgateServer



@pytest.fixture
def client(mindgate: MindgateServer, monkeypatch: pytest.MonkeyPatch):
    """A GraphMind instance pointed at the server through GRAPHMIND_URL."""
    monkeypatch.setenv("GRAPHMIND_URL", mindgate["ingest"])
    monkeypatch.delenv("GRAPHMIND_DISABLED", raising=False)
    made: list[graphmind.GraphMind] = []

    def make(**options: Any) -> graphmind.GraphMind:
        options.setdefault("connect_timeout", 2.0)
        options.setdefault("handshake_timeout", 2.0)
        options.setdefault("retry_interval", 0.3)
        gm = graphmind.GraphMind(app="pytest-app", **options)
        made.append(gm)
        assert gm.ready(5.0), "client did not attach"
        return gm

    yield make
    for gm in made:
        gm.dispose()


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


def run_id_of(mindgate: MindgateServer, name: str, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = mindgate.get(f"/api/runs?q={name}")["runs"]
        if runs:
            return runs[0]["id"]
        time.sleep(0.05)
    raise AssertionError(f"no run named {name}")


def test_a_run_with_tools_and_spans_is_stored_and_projected(mindgate, client):
    gm = client()

    @gm.tool
    def search(query: str) -> list[str]:
        return [query.upper()]

    @gm.tool(name="summarise", parent_id="agent:basic")
    def summarise(items: list[str]) -> str:
        return ",".join(items)

    with gm.run("basic") as ctx:
        with gm.span("plan", parent_id="agent:basic") as span:
            span.set_output({"steps": 2})
        hits = search("ada")
        text = summarise(hits)
    assert text == "ADA"

    run = mindgate.wait_run(ctx.run_id, "ok")
    assert run["app"] == "pytest-app"
    assert run["name"] == "basic"
    assert run["counts"]["nodes"] == 4
    assert run["counts"]["errors"] == 0
    listed = mindgate.get("/api/runs")["runs"]
    assert listed[0]["id"] == ctx.run_id

    graph = mindgate.get(f"/api/runs/{ctx.run_id}/graph")
    nodes = {n["nodeId"]: n for n in graph["nodes"]}
    assert set(nodes) == {"agent:basic", "custom:plan", "tool:search", "tool:summarise"}
    assert nodes["tool:search"]["kind"] == "tool"
    assert nodes["tool:search"]["status"] == "ok"
    assert len(nodes["tool:search"]["instances"]) == 1
    assert {"source": "agent:basic", "target": "tool:summarise"} in graph["edges"]
    assert {"source": "agent:basic", "target": "custom:plan"} in graph["edges"]

    detail = mindgate.get(f"/api/runs/{ctx.run_id}/nodes/tool:search")
    assert detail["instances"][0]["input"] == {"query": "ada"}
    assert detail["instances"][0]["output"] == ["ADA"]

    events = mindgate.events(ctx.run_id)
    types = [e["type"] for e in events]
    assert types[0] == "run.started" and types[-1] == "run.finished"
    assert all(e["runId"] == ctx.run_id and e["gm"] == 1 for e in events)


def test_breakpoint_from_the_http_api_pauses_the_tool_before_its_body(mindgate, client):
    status, body = mindgate.request("POST", "/api/breakpoints", {"kind": "tool", "name": "lookup"})
    assert status == 200 and body["added"] is True
    gm = client()
    ran: list[int] = []

    @gm.tool
    def lookup(x: int) -> int:
        ran.append(x)
        return x * 2

    def agent() -> int:
        with gm.run("bp"):
            return lookup(21)

    thread, box = in_thread(agent)
    pause = mindgate.wait_pause()
    assert pause["nodeId"] == "tool:lookup"
    assert pause["point"] == "before"
    # The agent must stay blocked: give its thread a bounded chance to finish (it must not).
    thread.join(0.3)
    assert thread.is_alive(), "the agent returned while its gate was held"
    assert ran == [], "the body must not run while the gate holds"
    assert mindgate.get(f"/api/runs/{pause['runId']}/pauses/{pause['pauseId']}")["nodeId"] == "tool:lookup"
    assert mindgate.resume(pause, "continue") == "resumed"
    assert mindgate.resume(pause, "continue") == "taken"
    thread.join(10)
    assert box.get("value") == 42, box
    assert ran == [21]
    mindgate.wait_run(pause["runId"], "ok")
    graph = mindgate.get(f"/api/runs/{pause['runId']}/graph")
    lookup_node = next(n for n in graph["nodes"] if n["nodeId"] == "tool:lookup")
    assert lookup_node["instances"][0]["heldMs"] > 0


def test_inject_returns_the_injected_value_without_running_the_body(mindgate, client):
    mindgate.request("POST", "/api/breakpoints", {"matcher": {"kind": "tool"}})
    gm = client()
    ran: list[str] = []

    @gm.tool
    def fetch_price(sku: str) -> dict[str, Any]:
        ran.append(sku)
        return {"price": 10}

    thread, box = in_thread(lambda: _in_run(gm, "inject", lambda: fetch_price("A-1")))
    pause = mindgate.wait_pause()
    assert mindgate.resume(pause, "inject", output={"price": 99, "source": "debugger"}) == "resumed"
    thread.join(10)
    assert box.get("value") == {"price": 99, "source": "debugger"}, box
    assert ran == []
    mindgate.wait_run(pause["runId"], "ok")
    detail = mindgate.get(f"/api/runs/{pause['runId']}/nodes/tool:fetch_price")
    assert detail["instances"][0]["output"] == {"price": 99, "source": "debugger"}
    assert detail["instances"][0]["injected"] is True


def _in_run(gm: graphmind.GraphMind, name: str, body: Callable[[], Any]) -> Any:
    with gm.run(name):
        return body()


def test_retry_at_the_error_gate_reruns_the_tool(mindgate, client):
    gm = client()  # {point: "error"} is armed by default
    calls: list[int] = []

    @gm.tool
    def flaky(n: int) -> str:
        calls.append(n)
        if len(calls) == 1:
            raise ValueError("first call fails")
        return f"ok-{n}"

    thread, box = in_thread(lambda: _in_run(gm, "retry", lambda: flaky(7)))
    pause = mindgate.wait_pause()
    assert pause["point"] == "error"
    assert pause["nodeId"] == "tool:flaky"
    assert mindgate.resume(pause, "retry") == "resumed"
    thread.join(10)
    assert box.get("value") == "ok-7", box
    assert calls == [7, 7]
    run = mindgate.wait_run(pause["runId"], "ok")
    assert run["counts"]["errors"] == 1
    detail = mindgate.get(f"/api/runs/{pause['runId']}/nodes/tool:flaky")
    inst = detail["instances"][0]
    assert inst["status"] == "ok"
    assert inst["error"]["message"] == "first call fails"
    assert "first call fails" in inst["errorDetail"]["message"]


def test_abort_ends_the_run_aborted(mindgate, client):
    mindgate.request("POST", "/api/breakpoints", {"name": "dangerous"})
    gm = client()
    ran: list[bool] = []

    @gm.tool
    def dangerous() -> str:
        ran.append(True)
        return "boom"

    thread, box = in_thread(lambda: _in_run(gm, "abort", dangerous))
    pause = mindgate.wait_pause()
    assert mindgate.resume(pause, "abort") == "resumed"
    thread.join(10)
    assert isinstance(box.get("error"), graphmind.GraphMindAbortError), box
    assert ran == []
    run = mindgate.wait_run(pause["runId"], "aborted")
    assert run["status"] == "aborted"


def test_step_mode_pauses_before_every_node(mindgate, client):
    status, body = mindgate.request("PUT", "/api/mode", {"mode": "step"})
    assert status == 200 and body["mode"] == "step"
    gm = client()

    @gm.tool
    def one() -> int:
        return 1

    @gm.tool
    def two() -> int:
        return 2

    def agent() -> int:
        with gm.run("stepping"):
            with gm.span("think"):
                pass
            return one() + two()

    thread, box = in_thread(agent)
    seen: list[str] = []
    while thread.is_alive() and len(seen) < 10:
        try:
            pause = mindgate.wait_pause(timeout=3)
        except AssertionError:
            break
        assert pause["point"] == "before"
        seen.append(pause["nodeId"])
        assert mindgate.resume(pause, "continue") == "resumed"
    thread.join(10)
    assert box.get("value") == 3, box
    assert seen == ["custom:think", "tool:one", "tool:two"]
    assert mindgate.get("/api/debug")["mode"] == "step"


def test_server_restart_mid_run_loses_nothing_and_duplicates_nothing(mindgate, client):
    gm = client(buffer_size=5000)

    @gm.tool
    def work(i: int) -> int:
        return i * i

    proceed = threading.Event()
    done_first = threading.Event()
    done_second = threading.Event()
    n_before, n_after = 20, 30

    def agent() -> None:
        with gm.run("restart") as ctx:
            for i in range(n_before):
                work(i)
            done_first.set()
            proceed.wait(30)
            for i in range(n_before, n_before + n_after):
                work(i)
            done_second.set()
            return ctx.run_id

    thread, box = in_thread(agent)
    assert done_first.wait(10)
    run_id = run_id_of(mindgate, "restart")
    # Let the first half reach the server, then restart it gracefully.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if mindgate.get(f"/api/runs/{run_id}")["counts"]["events"] >= 2 + 2 * n_before:
            break
        time.sleep(0.05)
    mindgate.stop()
    proceed.set()  # the second half is emitted while no server is listening
    assert done_second.wait(20), "the agent could not emit while the server was down"
    mindgate.start()
    thread.join(20)
    assert box.get("value") == run_id, box
    assert gm.ready(10)
    run = mindgate.wait_run(run_id, "ok", timeout=20)
    events = mindgate.events(run_id)
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(set(seqs)), "each seq once, in order"
    started = [e["payload"]["instanceId"] for e in events if e["type"] == "node.started" and e["payload"]["nodeId"] == "tool:work"]
    finished = [e["payload"]["instanceId"] for e in events if e["type"] == "node.finished" and e["payload"]["nodeId"] == "tool:work"]
    assert len(started) == n_before + n_after
    assert sorted(started) == sorted(finished)
    assert len(set(started)) == len(started)
    outputs = sorted(e["payload"]["output"] for e in events if e["type"] == "node.finished" and e["payload"]["nodeId"] == "tool:work")
    assert outputs == sorted(i * i for i in range(n_before + n_after))
    assert run["counts"]["events"] == len(events)


def test_killing_the_server_mid_hold_releases_the_python_gate(mindgate, client):
    mindgate.request("POST", "/api/breakpoints", {"kind": "tool"})
    gm = client()
    ran: list[int] = []

    @gm.tool
    def held(x: int) -> int:
        ran.append(x)
        return x + 1

    thread, box = in_thread(lambda: _in_run(gm, "killed", lambda: held(1)))
    mindgate.wait_pause()
    assert thread.is_alive()
    t0 = time.monotonic()
    mindgate.kill()
    thread.join(5)
    elapsed = time.monotonic() - t0
    assert not thread.is_alive(), "the gate must fail open when the server dies"
    assert box.get("value") == 2, box
    assert ran == [1]
    print(f"gate released {elapsed * 1000:.0f} ms after SIGKILL")


def test_guard_refuses_foreign_origin_and_missing_token(mindgate):
    status, body = mindgate.request("POST", "/api/breakpoints", {"kind": "tool"}, token=False)
    assert status == 401
    assert "token" in body["error"]
    status, body = mindgate.request("GET", "/api/runs", token=False, headers={"Origin": "http://evil.example"})
    assert status == 403
    assert "Origin" in body["error"]
    status, body = mindgate.request("GET", "/api/runs", token=False, headers={"Host": "evil.example:4747"})
    assert status == 403
    status, _ = mindgate.request("GET", "/api/runs", token=False)
    assert status == 200
