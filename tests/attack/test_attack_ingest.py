"""Issue #10 replays against the real binary: the ingest path and the hub.

* a seq above 2^63-1 must neither poison its run nor cost another app's events,
  even across a restart and the replay every client sends after a reconnect;
* frames the server does not store are counted in `/health.dropped` and told to
  the app (`ingest.refused`, an envelope type v1 clients ignore);
* ids and names have size limits;
* app churn reaches viewers as small deltas, not the whole state per change;
* the hub's per-connection state is bounded.

Each app is a raw WebSocket client (`websockets`), so every test sends exactly the
frames of the finding. Waits poll observable state with a deadline; traffic stays
on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from typing import Any, Iterator

import pytest
from websockets.sync.client import ClientConnection, connect

PATIENCE = 15.0
U64_MAX = 2**64 - 1


@pytest.fixture
def sockets() -> Iterator[contextlib.ExitStack]:
    """Closes every WebSocket a test opened."""
    with contextlib.ExitStack() as stack:
        yield stack


def dial(stack: contextlib.ExitStack, url: str) -> ClientConnection:
    return stack.enter_context(connect(url, open_timeout=PATIENCE, max_size=None))


def viewer(stack: contextlib.ExitStack, server: Any) -> ClientConnection:
    return dial(stack, f"ws://127.0.0.1:{server['port']}/ws/ui?token={server['token']}")


def frame(run: str, seq: int, ty: str, payload: dict[str, Any]) -> str:
    return json.dumps(
        {"gm": 1, "seq": seq, "ts": int(time.time() * 1000), "runId": run, "type": ty, "payload": payload}
    )


def started(run: str, seq: int = 0) -> str:
    return frame(run, seq, "run.started", {"app": "attack", "sdk": {"name": "raw", "version": "1"}})


def token(run: str, seq: int, node: str = "llm:step") -> str:
    return frame(run, seq, "node.token", {"nodeId": node, "deltas": [{"t": "text", "v": "x"}]})


def attach(
    stack: contextlib.ExitStack, server: Any, app: str, resume: str | None = None
) -> tuple[ClientConnection, str]:
    """Connects to /ingest, says hello, returns the socket and its session token."""
    ws = dial(stack, server["ingest"])
    hello: dict[str, Any] = {
        "versions": {"protocol": 1, "client": "attack"},
        "capabilities": ["run-claim"],
        "app": app,
    }
    if resume:
        hello["resumeToken"] = resume
    ws.send(frame("*", 0, "hello", hello))
    ack = json.loads(ws.recv(timeout=PATIENCE))
    assert ack["type"] == "hello.ack", ack
    return ws, ack["payload"]["sessionToken"]


def next_notice(ws: ClientConnection, code: str) -> dict[str, Any]:
    """The next `ingest.refused` with `code` (other frames are skipped)."""
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        msg = json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
        if msg.get("type") == "ingest.refused" and msg["payload"]["code"] == code:
            return msg
    raise AssertionError(f"no ingest.refused {code}")


def wait_events(server: Any, run_id: str, count: int) -> dict[str, Any]:
    deadline = time.monotonic() + PATIENCE
    last: Any = None
    while time.monotonic() < deadline:
        status, last = server.request("GET", f"/api/runs/{run_id}", token=False)
        if status == 200 and last["counts"]["events"] >= count:
            return last
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} never reached {count} events: {last}")


def dropped(server: Any) -> dict[str, int]:
    return server.get("/health")["dropped"]


def test_out_of_range_seq_neither_poisons_the_run_nor_costs_another_app_events(mindgate, sockets):
    victim, victim_token = attach(sockets, mindgate, "victim")
    victim.send(started("poisoned"))
    for seq in range(1, 21):
        victim.send(token("poisoned", seq))
    victim.send(token("poisoned", U64_MAX))
    notice = next_notice(victim, "seqOutOfRange")
    assert notice["runId"] == "poisoned" and notice["payload"]["seq"] == U64_MAX
    run = wait_events(mindgate, "poisoned", 21)
    assert (run["counts"]["events"], run["lastSeq"]) == (21, 20)
    health = mindgate.get("/health")
    assert health["dropped"]["seqOutOfRange"] == 1
    assert health["acceptedEvents"] == 21
    victim.close()

    # After a restart the app reconnects and replays what is already stored while
    # another app streams: nothing of the other app may be lost.
    mindgate.restart()
    bystander, _ = attach(sockets, mindgate, "bystander")
    victim, _ = attach(sockets, mindgate, "victim", resume=victim_token)
    total = 2_000

    def stream() -> None:
        bystander.send(started("bystander"))
        for seq in range(1, total + 1):
            bystander.send(token("bystander", seq))

    sender = threading.Thread(target=stream)
    sender.start()
    for seq in range(1, 41):
        victim.send(token("poisoned", seq))
    sender.join(timeout=PATIENCE)
    assert not sender.is_alive()
    run = wait_events(mindgate, "bystander", total + 1)
    assert run["counts"]["events"] == total + 1
    assert [e["seq"] for e in mindgate.events("bystander")] == list(range(total + 1))
    run = wait_events(mindgate, "poisoned", 41)
    assert (run["counts"]["events"], run["lastSeq"]) == (41, 40)
    store = mindgate.get("/health")["store"]
    assert store == {"refusedRows": 0, "failedRows": 0, "isolatedBatches": 0}
    victim.close()
    bystander.close()


def test_frames_the_server_does_not_store_are_counted_and_told_to_the_app(mindgate, sockets):
    owner, _ = attach(sockets, mindgate, "owner")
    owner.send(started("owned"))
    wait_events(mindgate, "owned", 1)
    other, _ = attach(sockets, mindgate, "other")
    other.send(token("*", 1))
    assert next_notice(other, "wildcardRunId")["runId"] == "*"
    other.send(frame("*", 2, "mode.set", {"mode": "step"}))
    next_notice(other, "controlOnIngest")
    other.send(frame("*", 3, "hello", {"versions": {"protocol": 1, "client": "again"}, "capabilities": []}))
    next_notice(other, "repeatedHello")
    other.send(token("owned", 5))
    assert next_notice(other, "runClaim")["runId"] == "owned"
    health = mindgate.get("/health")
    counts = health["dropped"]
    assert (counts["wildcardRunId"], counts["controlOnIngest"], counts["repeatedHello"], counts["runClaim"]) == (1, 1, 1, 1)
    assert health["refusedEvents"] == 1
    # Nothing reached the store, and the step mode was not set from /ingest.
    assert mindgate.get("/api/runs/owned")["counts"]["events"] == 1
    assert mindgate.get("/api/debug")["mode"] == "run"
    # Notices are rate-limited: 50 more refusals bring few notices, all counted.
    for seq in range(10, 60):
        other.send(token("owned", seq))
    other.send(token("mine", 0))
    wait_events(mindgate, "mine", 1)
    assert mindgate.get("/health")["dropped"]["runClaim"] == 51
    owner.close()
    other.close()


def test_ids_and_names_have_size_limits(mindgate, sockets):
    app, _ = attach(sockets, mindgate, "big")
    mib = "r" * (1 << 20)
    for i in range(5):
        app.send(started(f"{mib}{i}"))
    notice = next_notice(app, "runIdTooLong")
    assert notice["runId"] == "*"  # a refused id is not echoed back
    app.send(frame("ok-run", 0, "node.started", {"nodeId": "n" * 600, "kind": "tool", "name": "t", "instanceId": "i"}))
    next_notice(app, "idTooLong")
    app.send(frame("ok-run", 1, "node.started", {"nodeId": "tool:t", "kind": "tool", "name": "x" * 2_000, "instanceId": "i"}))
    next_notice(app, "nameTooLong")
    app.send(frame("ok-run", 2, "node.started", {"nodeId": "tool:t", "kind": "tool", "name": "t", "instanceId": "i" * 512}))
    wait_events(mindgate, "ok-run", 1)
    counts = dropped(mindgate)
    assert (counts["runIdTooLong"], counts["idTooLong"], counts["nameTooLong"]) == (5, 1, 1)
    runs = mindgate.get("/api/runs")["runs"]
    assert [r["id"] for r in runs] == ["ok-run"]
    # A viewer's state stays small: no oversized id reached the hub.
    ui = viewer(sockets, mindgate)
    assert json.loads(ui.recv(timeout=PATIENCE))["type"] == "welcome"
    state = ui.recv(timeout=PATIENCE)
    assert json.loads(state)["type"] == "state"
    assert len(state) < 4_096, len(state)
    app.close()
    # An oversized hello is refused with a reason.
    ws = dial(sockets, mindgate["ingest"])
    ws.send(frame("*", 0, "hello", {"versions": {"protocol": 1, "client": "x"}, "capabilities": [], "app": "a" * 5_000}))
    try:
        ws.recv(timeout=PATIENCE)
        raise AssertionError("an oversized hello was answered")
    except Exception as closed:  # websockets raises ConnectionClosed with the close frame
        rcvd = getattr(closed, "rcvd", None)
        assert rcvd is not None and rcvd.code == 1008 and "app" in rcvd.reason, closed


def test_app_churn_reaches_viewers_as_deltas_not_whole_states(mindgate, sockets):
    ui = viewer(sockets, mindgate)
    assert json.loads(ui.recv(timeout=PATIENCE))["type"] == "welcome"
    assert json.loads(ui.recv(timeout=PATIENCE))["type"] == "state"
    keep, _ = attach(sockets, mindgate, "resident")
    for i in range(50):
        keep.send(token(f"resident-{i}", 0))
    churn = 30
    for i in range(churn):
        app, _ = attach(sockets, mindgate, f"churn-{i}")
        app.close()
    seen: dict[str, int] = {}
    biggest = 0
    deadline = time.monotonic() + PATIENCE
    while seen.get("app.detached", 0) < churn and time.monotonic() < deadline:
        text = ui.recv(timeout=max(0.1, deadline - time.monotonic()))
        msg = json.loads(text)
        seen[msg["type"]] = seen.get(msg["type"], 0) + 1
        biggest = max(biggest, len(text))
    assert seen.get("state", 0) == 0, seen
    assert seen.get("app.attached") == churn + 1 and seen.get("app.detached") == churn, seen
    assert seen.get("app.run") == 50, seen
    assert biggest < 1_024, biggest
    keep.close()
    ui.close()


def test_held_gates_per_connection_are_bounded(mindgate, sockets):
    app, _ = attach(sockets, mindgate, "gates")
    app.send(started("gated"))
    for i in range(257):
        app.send(frame("gated", 1 + i, "exec.paused", {"pauseId": f"p{i}", "nodeId": "tool:t", "point": "before"}))
    next_notice(app, "pauseLimit")
    wait_events(mindgate, "gated", 257)
    health = mindgate.get("/health")
    assert (health["pauses"], health["dropped"]["pauseLimit"]) == (256, 1)
    app.close()
