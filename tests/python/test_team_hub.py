"""Two `mindgate serve` processes on one PostgreSQL behave as one hub to the real
graphmind-ai client: an app attached to instance A is held by a breakpoint set through
instance B and released through B; the run is visible from both; after A is killed
mid-hold the app's gate releases (fail-open), the app reconnects to B through the load
balancer, B re-arms it from the shared state, and no event is stored twice.

Needs a PostgreSQL (`MINDGATE_TEST_POSTGRES_URL`, set by scripts/test.sh from a throwaway
cluster) and `psql`; without them the tests are skipped and say why.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any, Callable

import graphmind
import pytest

from conftest import MindgateServer, free_port
from tcp_balancer import TcpBalancer
from test_postgres_store import pg_schema_url, pytestmark  # noqa: F401 - fixture, skip mark
from test_server_client import in_thread


def wait_for(what: str, probe: Callable[[], Any], timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}: {last!r}")


TOKEN = "team-hub-test-token-0123456789"


@pytest.fixture
def hub(tmp_path, pg_schema_url, monkeypatch):
    """Instances A and B on one database with one token, as a team deploys them: remote
    access on (the token on every request) and the balancer's name allowed; the balancer
    in front sends new connections to A while it answers, else to B."""
    balancer = TcpBalancer([])
    monkeypatch.setenv("MINDGATE_TOKEN", TOKEN)
    args = [
        "--db",
        pg_schema_url,
        "--allow-remote",
        "--allowed-host",
        f"127.0.0.1:{balancer.port}",
    ]
    a = MindgateServer(tmp_path / "a", free_port(), args).start()
    b = MindgateServer(tmp_path / "b", free_port(), args).start()
    assert a["token"] == b["token"] == TOKEN
    balancer.backends = [a.port, b.port]
    try:
        yield a, b, balancer
    finally:
        balancer.close()
        for server in (a, b):
            server.stop()


def apps_on(server: MindgateServer) -> int:
    """How many apps are attached to this instance."""
    return server.get("/health")["apps"]


def attach(balancer: TcpBalancer, monkeypatch: pytest.MonkeyPatch) -> graphmind.GraphMind:
    monkeypatch.setenv("GRAPHMIND_URL", f"ws://127.0.0.1:{balancer.port}/ingest?token={TOKEN}")
    monkeypatch.delenv("GRAPHMIND_DISABLED", raising=False)
    gm = graphmind.GraphMind(
        app="team-app", connect_timeout=2.0, handshake_timeout=2.0, retry_interval=0.2
    )
    assert gm.ready(5.0), "client did not attach"
    return gm


def no_duplicates(server: MindgateServer, run_id: str) -> list[dict[str, Any]]:
    events = server.events(run_id)
    seqs = Counter(e["seq"] for e in events)
    assert all(n == 1 for n in seqs.values()), [s for s, n in seqs.items() if n > 1]
    return events


def test_a_gate_on_instance_a_is_armed_and_released_through_instance_b(hub, monkeypatch):
    a, b, balancer = hub
    status, body = b.request("POST", "/api/breakpoints", {"kind": "tool", "name": "lookup"})
    assert status == 200 and body["added"] is True, body
    # The change reaches A through the database (a notification, ~0.1 s here).
    wait_for("A to be armed", lambda: a.get("/api/debug") == b.get("/api/debug"))
    gm = attach(balancer, monkeypatch)
    wait_for("the app on A", lambda: apps_on(a) == 1)
    assert apps_on(b) == 0
    ran: list[int] = []

    @gm.tool
    def lookup(x: int) -> int:
        ran.append(x)
        return x * 2

    def agent() -> int:
        with gm.run("team"):
            return lookup(21)

    thread, box = in_thread(agent)
    pause = b.wait_pause()
    assert pause["nodeId"] == "tool:lookup" and pause["point"] == "before", pause
    assert a.wait_pause()["pauseId"] == pause["pauseId"]
    thread.join(0.3)
    assert thread.is_alive() and ran == [], "the gate must hold until released"
    # First resume wins across instances.
    assert b.resume(pause, "continue") == "resumed"
    assert a.resume(pause, "continue") == "taken"
    thread.join(10)
    assert box.get("value") == 42, box
    # The run is visible, whole and the same, from both instances.
    run_id = pause["runId"]
    for server in (a, b):
        server.wait_run(run_id, "ok")
    events_a = no_duplicates(a, run_id)
    assert [e["seq"] for e in events_a] == [e["seq"] for e in b.events(run_id)]
    resumed = [e for e in events_a if e["type"] == "exec.resumed"]
    assert resumed and resumed[0]["payload"]["principal"]["kind"] == "http", resumed

    # The app reconnects to B (A goes away); its run keeps its events, none twice.
    status, _ = b.request("DELETE", "/api/breakpoints", {"kind": "tool", "name": "lookup"})
    assert status == 200
    wait_for("A to be disarmed", lambda: a.get("/api/debug") == b.get("/api/debug"))
    before = len(events_a)
    a.kill()
    wait_for("the app on B", lambda: apps_on(b) == 1)
    assert balancer.routed[-1] == b.port
    with gm.run("after"):
        assert lookup(1) == 2
    no_duplicates(b, run_id)
    assert len(b.events(run_id)) == before


def test_killing_the_instance_mid_hold_fails_open_and_the_other_rearms_the_app(
    hub, monkeypatch
):
    a, b, balancer = hub
    status, _ = a.request("POST", "/api/breakpoints", {"kind": "tool", "name": "slow"})
    assert status == 200
    gm = attach(balancer, monkeypatch)
    wait_for("the app on A", lambda: apps_on(a) == 1)
    ran: list[int] = []

    @gm.tool
    def slow(x: int) -> int:
        ran.append(x)
        return x + 1

    def agent(x: int) -> Callable[[], int]:
        def go() -> int:
            with gm.run(f"held-{x}"):
                return slow(x)

        return go

    thread, box = in_thread(agent(1))
    held = b.wait_pause()
    assert held["nodeId"] == "tool:slow"
    a.kill()
    # Fail-open: the app's gate released when its instance vanished.
    thread.join(15)
    assert box.get("value") == 2, box
    assert ran == [1]
    # B forgets the dead instance's gate, and the app comes back through the balancer.
    wait_for("B to drop A's gate", lambda: not b.get("/api/pauses")["pauses"])
    wait_for("the app on B", lambda: apps_on(b) == 1)
    # B re-armed it from the shared state: the breakpoint set on A holds it again.
    thread, box = in_thread(agent(2))
    again = b.wait_pause()
    assert again["nodeId"] == "tool:slow" and again["runId"] != held["runId"], again
    assert b.resume(again, "continue") == "resumed"
    thread.join(10)
    assert box.get("value") == 3, box
    b.wait_run(again["runId"], "ok")
    # The first run was replayed to B by the client after its reconnect: stored once.
    first = wait_for(
        "the first run to end on B",
        lambda: (r := b.request("GET", f"/api/runs/{held['runId']}")[1])
        and r.get("status") in ("ok", "abandoned")
        and r,
    )
    assert first["status"] in ("ok", "abandoned"), first
    no_duplicates(b, held["runId"])
