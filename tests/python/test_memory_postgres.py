"""`--memory-db postgres://…`: the agent memory in PostgreSQL, shared by two `mindgate serve`
instances (and with `mindgate mcp`). A fact written over instance A's HTTP API is found by a search on instance B (the
lexical and the vector list), forgotten through B it is gone from A's searches, and an
unreachable database is a clear error while the rest of the server keeps serving. An
export moves from an SQLite file to PostgreSQL and back through `mindgate memory
export|import`, and maintenance runs on PostgreSQL.

Needs `MINDGATE_TEST_POSTGRES_URL` (`scripts/test.sh` starts a throwaway PostgreSQL) and
`psql`; each test works in its own schema, dropped at the end.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import urllib.parse
import uuid

import pytest

from conftest import BIN, MindgateServer, free_port, psql_path
from test_mcp_memory import ok, run, stdio_session

URL = os.environ.get("MINDGATE_TEST_POSTGRES_URL", "").strip()


# Skipped without PostgreSQL or psql, saying why; failed instead under
# MINDGATE_TEST_REQUIRE_SERVICES=1 (conftest.skip_or_fail).
pytestmark = pytest.mark.usefixtures("postgres_required")


def psql() -> str:
    return psql_path() or "psql"


@pytest.fixture
def memory_url():
    schema = f"mgpy_{uuid.uuid4().hex[:16]}"
    subprocess.run([psql(), URL, "-qc", f"CREATE SCHEMA {schema}"], check=True, timeout=30)
    sep = "&" if "?" in URL else "?"
    options = urllib.parse.quote(f"-c search_path={schema}", safe="")
    try:
        yield f"{URL}{sep}options={options}"
    finally:
        subprocess.run(
            [psql(), URL, "-qc", f"DROP SCHEMA IF EXISTS {schema} CASCADE"], timeout=30
        )


def search(server: MindgateServer, query: str, mode: str | None = None) -> list[str]:
    path = f"/api/memory/search?userId=ana&query={urllib.parse.quote(query)}"
    if mode:
        path += f"&mode={mode}"
    return [h["id"] for h in server.get(path)["hits"]]


def test_two_instances_share_one_postgres_memory(tmp_path: pathlib.Path, memory_url: str) -> None:
    args = ["--memory-user", "ana", "--memory-db", memory_url]
    a = MindgateServer(tmp_path / "a", free_port(), args).start()
    b = MindgateServer(tmp_path / "b", free_port(), args).start()
    try:
        assert search(b, "bees balcony") == []
        status, fact = a.request("POST", "/api/memory/facts", {"text": "Ana keeps bees on her balcony"})
        assert status == 201, fact
        for mode in (None, "lexical", "vector"):
            assert search(b, "bees on the balcony", mode) == [fact["id"]], mode
        status, body = b.request(
            "POST", f"/api/memory/records/{fact['id']}/forget", {"reason": "moved house"}
        )
        assert status == 200, body
        assert search(a, "bees balcony") == []
        history = a.get(f"/api/memory/records/{fact['id']}/history")
        actions = [e["action"] for e in history["events"]]
        assert actions[0] == "create" and actions[-1] == "forget", actions
        assert not (tmp_path / "a" / "memory.db").exists(), "no SQLite file is made"
    finally:
        a.stop()
        b.stop()


def test_mcp_and_serve_share_a_postgres_memory(tmp_path: pathlib.Path, memory_url: str) -> None:
    server = MindgateServer(
        tmp_path / "home", free_port(), ["--memory-user", "ana", "--memory-db", memory_url]
    ).start()
    try:

        async def body() -> None:
            async with stdio_session(server, "--memory-db", memory_url) as session:
                await ok(session, "fact_remember", {"text": "Ana keeps bees on her balcony"})

        run(body())
        hits = server.get("/api/memory/search?userId=ana&query=bees%20balcony")["hits"]
        assert [h["text"] for h in hits] == ["Ana keeps bees on her balcony"]
    finally:
        server.stop()


def test_an_unreachable_database_is_a_clear_error(tmp_path: pathlib.Path) -> None:
    dead = f"postgres://mindgate:secret@127.0.0.1:{free_port()}/memory"
    server = MindgateServer(
        tmp_path / "home", free_port(), ["--memory-user", "ana", "--memory-db", dead]
    ).start()
    try:
        status, body = server.request("GET", "/api/memory/search?userId=ana&query=bees")
        assert status == 503, (status, body)
        text = str(body)
        assert "cannot reach the PostgreSQL database postgres://mindgate:***@" in text, text
        assert "Connection refused" in text, "the cause is named: " + text
        assert "secret" not in text, "the password is never shown"
        assert server.get("/health"), "the rest of the server keeps serving"
    finally:
        server.stop()


def cli(home: pathlib.Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [BIN, "memory", *args],
        env={**os.environ, "MINDGATE_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def rows(path: pathlib.Path) -> list[dict]:
    """An export's row lines as values, JSON held in text columns parsed (PostgreSQL's
    `jsonb` keeps its own key order)."""
    out = []
    for line in path.read_text().splitlines()[1:]:
        value = json.loads(line)
        for key, cell in value["row"].items():
            if isinstance(cell, str) and cell[:1] in "{[":
                value["row"][key] = json.loads(cell)
        out.append(value)
    return out


def test_an_export_moves_between_sqlite_and_postgres(tmp_path: pathlib.Path, memory_url: str) -> None:
    home = tmp_path / "home"
    source = str(tmp_path / "source.db")
    for text in ["Ana keeps bees on her balcony", "Ana's bees make linden honey"]:
        cli(home, "remember", text, "--user", "ana", "--db", source)
    cli(home, "export", "--db", source, "-o", str(tmp_path / "a.jsonl"))
    imported = cli(home, "import", str(tmp_path / "a.jsonl"), "--db", memory_url)
    assert "memory_items 2" in imported.stdout, imported.stdout
    refused = subprocess.run(
        [BIN, "memory", "import", str(tmp_path / "a.jsonl"), "--db", memory_url],
        env={**os.environ, "MINDGATE_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode != 0 and "empty" in refused.stderr, refused.stderr
    cli(home, "export", "--db", memory_url, "-o", str(tmp_path / "b.jsonl"))
    assert rows(tmp_path / "b.jsonl") == rows(tmp_path / "a.jsonl")
    back = str(tmp_path / "back.db")
    cli(home, "import", str(tmp_path / "b.jsonl"), "--db", back)
    cli(home, "export", "--db", back, "-o", str(tmp_path / "c.jsonl"))
    assert rows(tmp_path / "c.jsonl") == rows(tmp_path / "a.jsonl")
    found = json.loads(cli(home, "search", "bees honey", "--user", "ana", "--db", memory_url, "--json").stdout)
    assert len(found) == 2, found
    report = json.loads(cli(home, "maintain", "--user", "ana", "--db", memory_url, "--json").stdout)
    assert report["scanned"] == 2, report
