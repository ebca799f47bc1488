"""`mindgate serve --db postgres://…`: the real graphmind-ai client's runs land in PostgreSQL.

Needs a PostgreSQL (`MINDGATE_TEST_POSTGRES_URL`, set by scripts/test.sh from a throwaway
cluster) and `psql` to make a schema of the test's own; without them the tests are skipped
and say why.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from typing import Any

import graphmind
import pytest

from conftest import MindgateServer, free_port, psql_path

PG_URL = os.environ.get("MINDGATE_TEST_POSTGRES_URL", "").strip()

# Skipped without PostgreSQL or psql, saying why; failed instead under
# MINDGATE_TEST_REQUIRE_SERVICES=1 (conftest.skip_or_fail).
pytestmark = pytest.mark.usefixtures("postgres_required")


def psql(url: str, sql: str) -> str:
    out = subprocess.run(
        [psql_path() or "psql", url, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql],
        check=True,
        capture_output=True,
        text=True,
        timeout=30,
    )
    return out.stdout.strip()


@pytest.fixture
def pg_schema_url():
    """The test URL with `search_path` on a fresh schema, dropped afterwards."""
    schema = f"mg_py_{uuid.uuid4().hex[:12]}"
    psql(PG_URL, f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in PG_URL else "?"
    try:
        yield f"{PG_URL}{sep}options=-csearch_path%3D{schema}"
    finally:
        psql(PG_URL, f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture
def pg_server(tmp_path, pg_schema_url):
    server = MindgateServer(tmp_path / "home", free_port(), ["--db", pg_schema_url]).start()
    try:
        yield server
    finally:
        server.stop()


def attach(server: MindgateServer, monkeypatch: pytest.MonkeyPatch) -> graphmind.GraphMind:
    monkeypatch.setenv("GRAPHMIND_URL", server["ingest"])
    monkeypatch.delenv("GRAPHMIND_DISABLED", raising=False)
    gm = graphmind.GraphMind(
        app="pg-app", connect_timeout=2.0, handshake_timeout=2.0, retry_interval=0.3
    )
    assert gm.ready(5.0), "client did not attach"
    return gm


def wait_events(server: MindgateServer, run_id: str, count: int, timeout: float = 10.0) -> list:
    deadline = time.monotonic() + timeout
    events: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        events = server.events(run_id)
        if len(events) >= count:
            return events
        time.sleep(0.05)
    raise AssertionError(f"{len(events)} events of {count}")


def test_a_run_lands_in_postgres_and_survives_a_restart(pg_server, pg_schema_url, monkeypatch):
    health = pg_server.get("/health", token=False)
    assert health["database"] == {"backend": "postgres"}
    ready = pg_server.get("/ready", token=False)
    assert ready["ready"] is True and ready["database"]["backend"] == "postgres"

    gm = attach(pg_server, monkeypatch)
    try:

        @gm.tool
        def search(query: str) -> list[str]:
            return [query.upper()]

        with gm.run("pg-basic") as ctx:
            with gm.span("plan", parent_id="agent:pg-basic") as span:
                span.set_output({"steps": 1})
            assert search("ada") == ["ADA"]
    finally:
        gm.dispose()

    run = pg_server.wait_run(ctx.run_id, "ok")
    assert (run["app"], run["name"]) == ("pg-app", "pg-basic")
    assert run["counts"]["nodes"] == 3
    events = wait_events(pg_server, ctx.run_id, run["counts"]["events"])
    graph = pg_server.get(f"/api/runs/{ctx.run_id}/graph")
    nodes = {n["nodeId"]: n for n in graph["nodes"]}
    assert set(nodes) == {"agent:pg-basic", "custom:plan", "tool:search"}
    assert nodes["tool:search"]["status"] == "ok"
    detail = pg_server.get(f"/api/runs/{ctx.run_id}/nodes/tool:search")
    assert detail["instances"][0]["input"] == {"query": "ada"}
    assert detail["instances"][0]["output"] == ["ADA"]
    hits = pg_server.get(f"/api/search?q=ADA&runId={ctx.run_id}")
    assert hits["hits"], hits

    # The rows are in PostgreSQL, not in a SQLite file of the home.
    stored = psql(pg_schema_url, "SELECT count(*) FROM events")
    assert int(stored) == len(events)
    assert not (pg_server.home / "mindgate.db").exists()

    pg_server.restart()
    again = pg_server.wait_run(ctx.run_id, "ok")
    assert again["counts"] == run["counts"]
    assert pg_server.events(ctx.run_id) == events
    assert pg_server.get(f"/api/runs/{ctx.run_id}/graph") == graph


def test_an_unreachable_database_stops_the_start_with_a_clear_error(tmp_path):
    port = free_port()  # nobody listens there
    home = tmp_path / "home"
    home.mkdir()
    out = subprocess.run(
        [
            os.environ.get("MINDGATE_BIN", "target/debug/mindgate"),
            "serve",
            "--port",
            str(free_port()),
            "--no-open",
            "--db",
            f"postgres://mg:s3cret@127.0.0.1:{port}/runs",
        ],
        env={**os.environ, "MINDGATE_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode != 0
    assert f"cannot reach the PostgreSQL database postgres://mg:***@127.0.0.1:{port}/runs" in out.stderr
    assert "s3cret" not in out.stderr + out.stdout
