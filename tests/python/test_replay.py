"""Replay a recorded run up to a step with the real graphmind-ai 0.5.1 client, unchanged.

The hub arms `{point: "before"}` on the app, injects the recorded output of every step
that finished before the chosen one (checking its input), then holds at the chosen step.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from conftest import MindgateServer
from test_server_client import client, in_thread  # noqa: F401 - the fixture

ORIGIN = "pytest-app"


def make_app(gm: Any, calls: dict[str, list[Any]]) -> dict[str, Any]:
    """Three tools with side-effect counters; `fetch` answers differently on every real call."""

    @gm.tool
    def fetch(city: str) -> dict[str, Any]:
        calls["fetch"].append(city)
        return {"city": city, "price": 100 * len(calls["fetch"])}

    @gm.tool
    def book(city: str, price: int) -> str:
        calls["book"].append((city, price))
        return f"booked {city} at {price}"

    @gm.tool
    def notify(text: str) -> bool:
        calls["notify"].append(text)
        return True

    def trip(city: str) -> str:
        with gm.run("trip") as ctx:
            offer = fetch(city)
            text = book(city, offer["price"])
            notify(text)
            calls["runs"].append(ctx.run_id)
            return text

    return {"trip": trip}


def wait_for(predicate, timeout: float = 10.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def latest_run(mindgate: MindgateServer, other_than: str) -> str:
    def find() -> str | None:
        runs = mindgate.get("/api/runs?q=trip")["runs"]
        fresh = [r["id"] for r in runs if r["id"] != other_than]
        return fresh[0] if fresh else None

    return wait_for(find, what="the replay run")


def wait_armed(gm: Any) -> None:
    """Wait until the client applied the hub's `breakpoint.set {point: "before"}`.

    An attached app gets it as a control frame that its transport thread applies a moment
    later; a run started in that moment would not hold (an app that attaches after the
    replay is armed gets the matcher in its `hello.ack`)."""
    wait_for(
        lambda: any(m.get("point") == "before" for m in gm.session._engine.snapshot()[0]),
        what="the replay breakpoint on the client",
    )


def finished_output(events: list[dict[str, Any]], node_id: str) -> dict[str, Any]:
    return next(e["payload"] for e in events if e["type"] == "node.finished" and e["payload"]["nodeId"] == node_id)


def test_replay_to_the_second_tool_injects_the_first_and_holds_at_the_second(mindgate, client):
    gm = client()
    calls: dict[str, list[Any]] = {"fetch": [], "book": [], "notify": [], "runs": []}
    app = make_app(gm, calls)
    assert app["trip"]("Oslo") == "booked Oslo at 100"
    source = calls["runs"][0]
    mindgate.wait_run(source, "ok")

    status, armed = mindgate.request("POST", f"/api/runs/{source}/replay", {"nodeId": "tool:book"})
    assert status == 200, armed
    assert armed["replayOf"] == source and armed["nodeId"] == "tool:book"
    assert armed["injectedSteps"] == 1  # tool:fetch; the agent node runs live
    wait_armed(gm)

    thread, box = in_thread(lambda: app["trip"]("Oslo"))
    pause = mindgate.wait_pause()
    assert pause["nodeId"] == "tool:book" and pause["point"] == "before"
    assert pause["replay"]["role"] == "target" and pause["replay"]["replayOf"] == source
    # The first tool's body did not run again: its recorded value was injected.
    assert calls["fetch"] == ["Oslo"]
    assert calls["book"] == [("Oslo", 100)]
    replay_run = pause["runId"]
    run = mindgate.get(f"/api/runs/{replay_run}")
    assert run["meta"]["replayOf"] == source
    assert run["meta"]["replayAt"]["nodeId"] == "tool:book"

    assert mindgate.resume(pause, "continue") == "resumed"
    thread.join(10)
    # The injected price (100) reached the live step; a real fetch would have said 200.
    assert box.get("value") == "booked Oslo at 100", box
    assert calls["book"] == [("Oslo", 100), ("Oslo", 100)]
    # Everything after the chosen step ran live without holding.
    assert calls["notify"] == ["booked Oslo at 100", "booked Oslo at 100"]
    mindgate.wait_run(replay_run, "ok")
    assert mindgate.get("/api/pauses")["pauses"] == []

    events = mindgate.events(replay_run)
    fetched = finished_output(events, "tool:fetch")
    assert fetched["output"] == {"city": "Oslo", "price": 100} and fetched.get("injected") is True
    resumed = [e["payload"] for e in events if e["type"] == "exec.resumed"]
    kinds = [r["principal"]["kind"] for r in resumed]
    assert kinds.count("http") == 1, resumed  # the person's continue at tool:book
    assert all(r["principal"].get("replayOf") == source for r in resumed if r["principal"]["kind"] == "replay")
    assert any(r["action"] == "inject" and r["principal"]["kind"] == "replay" for r in resumed)
    # Node detail shows who released each gate.
    book = mindgate.get(f"/api/runs/{replay_run}/nodes/tool:book")
    assert book["instances"][0]["pauses"][0]["principal"] == {"kind": "http"}
    fetch = mindgate.get(f"/api/runs/{replay_run}/nodes/tool:fetch")
    assert fetch["instances"][0]["pauses"][0]["principal"] == {"kind": "replay", "replayOf": source}

    # The next run is not replayed: nothing holds, fetch really runs.
    assert app["trip"]("Oslo") == "booked Oslo at 200"
    assert calls["fetch"] == ["Oslo", "Oslo"]


def test_a_different_input_stops_the_replay_and_holds_showing_the_difference(mindgate, client):
    gm = client()
    calls: dict[str, list[Any]] = {"fetch": [], "book": [], "notify": [], "runs": []}
    app = make_app(gm, calls)
    app["trip"]("Oslo")
    source = calls["runs"][0]
    mindgate.wait_run(source, "ok")
    status, _ = mindgate.request("POST", f"/api/runs/{source}/replay", {"nodeId": "tool:book"})
    assert status == 200
    wait_armed(gm)

    thread, box = in_thread(lambda: app["trip"]("Paris"))
    pause = mindgate.wait_pause()
    assert pause["nodeId"] == "tool:fetch", (pause, mindgate.events(pause["runId"]))
    assert pause["replay"]["role"] == "mismatch"
    assert pause["replay"]["expected"] == {"city": "Oslo"}
    assert pause["replay"]["actual"] == {"city": "Paris"}
    assert calls["fetch"] == ["Oslo"]
    assert mindgate.resume(pause, "continue") == "resumed"
    thread.join(10)
    # Replay stopped: the rest ran live, nothing else held.
    assert box.get("value") == "booked Paris at 200", box
    assert mindgate.get("/api/pauses")["pauses"] == []


def test_replay_requests_are_checked(mindgate, client):
    gm = client()
    calls: dict[str, list[Any]] = {"fetch": [], "book": [], "notify": [], "runs": []}
    make_app(gm, calls)["trip"]("Oslo")
    source = calls["runs"][0]
    mindgate.wait_run(source, "ok")
    status, body = mindgate.request("POST", f"/api/runs/{source}/replay", {"nodeId": "tool:nope"})
    assert status == 404 and "tool:nope" in body["error"], body
    status, body = mindgate.request("POST", f"/api/runs/{source}/replay", {"nodeId": "tool:book", "instance": "x"})
    assert status == 404, body
    status, _ = mindgate.request("POST", "/api/runs/no-such-run/replay", {"nodeId": "tool:book"})
    assert status == 404
    status, _ = mindgate.request("POST", f"/api/runs/{source}/replay", {"nodeId": "tool:book"}, token=False)
    assert status == 401
    status, _ = mindgate.request("POST", f"/api/runs/{source}/replay", {"node": "tool:book"})
    assert status == 400


def test_an_app_that_attaches_after_the_replay_is_armed_gets_it_in_its_hello_ack(mindgate, client):
    first = client()
    calls: dict[str, list[Any]] = {"fetch": [], "book": [], "notify": [], "runs": []}
    make_app(first, calls)["trip"]("Oslo")
    source = calls["runs"][0]
    mindgate.wait_run(source, "ok")
    first.dispose()
    status, _ = mindgate.request("POST", f"/api/runs/{source}/replay", {"nodeId": "tool:notify"})
    assert status == 200

    second = client()  # a new process of the same app, in real life
    app = make_app(second, calls)
    thread, box = in_thread(lambda: app["trip"]("Oslo"))
    pause = mindgate.wait_pause()
    assert pause["nodeId"] == "tool:notify" and pause["replay"]["role"] == "target"
    assert calls["fetch"] == ["Oslo"] and len(calls["book"]) == 1  # both injected
    assert mindgate.resume(pause, "continue") == "resumed"
    thread.join(10)
    assert box.get("value") == "booked Oslo at 100", box
