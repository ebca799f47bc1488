"""`--memory-db PATH` on `mindgate serve` and `mindgate mcp`: both put the agent memory in
that file instead of `$MINDGATE_HOME/memory.db` (a fact remembered through `mindgate mcp`
is found over the server's HTTP API), and a URL of another database than PostgreSQL, or a
directory, is refused clearly (PostgreSQL: `test_memory_postgres.py`).
"""

from __future__ import annotations

import os
import pathlib
import subprocess

from conftest import BIN, MindgateServer, free_port
from test_mcp_memory import ok, run, stdio_session


def test_serve_and_mcp_share_the_memory_db_they_are_given(tmp_path: pathlib.Path) -> None:
    memory_db = tmp_path / "elsewhere" / "agent-memory.db"
    server = MindgateServer(
        tmp_path / "home", free_port(), ["--memory-user", "ana", "--memory-db", str(memory_db)]
    ).start()
    try:

        async def body() -> None:
            async with stdio_session(server, "--memory-db", str(memory_db)) as session:
                await ok(session, "fact_remember", {"text": "Ana keeps bees on her balcony"})

        run(body())
        hits = server.get("/api/memory/search?userId=ana&query=bees%20balcony")["hits"]
        assert [h["text"] for h in hits] == ["Ana keeps bees on her balcony"]
        assert memory_db.exists()
        assert not (tmp_path / "home" / "memory.db").exists(), "the default store is untouched"
    finally:
        server.stop()


def test_a_url_or_a_directory_is_refused_clearly(tmp_path: pathlib.Path) -> None:
    env = dict(os.environ, MINDGATE_HOME=str(tmp_path / "home"))
    for command in (["serve", "--no-open", "--port", "0"], ["mcp"]):
        for value, expected in (
            ("mysql://db.example/memory", "'mysql:' URLs are not supported"),
            (str(tmp_path), "is a directory"),
        ):
            done = subprocess.run(
                [BIN, *command, "--memory-db", value],
                env=env,
                capture_output=True,
                text=True,
                timeout=30,
                stdin=subprocess.DEVNULL,
            )
            assert done.returncode == 2, (command, value, done.stderr)
            assert "--memory-db" in done.stderr and expected in done.stderr, done.stderr
