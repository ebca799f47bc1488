"""Unwatched gates in a team: two `mindgate serve` instances on one PostgreSQL. A viewer
page open on instance B keeps the error gate of an app attached to instance A held (the
instances tell each other with their heartbeats); once it closes, A continues the gate as
unwatched after the grace.

Needs a PostgreSQL (`MINDGATE_TEST_POSTGRES_URL`, set by scripts/test.sh from a throwaway
cluster) and `psql`; without them the test is skipped and says why.
"""

from __future__ import annotations

import time

import graphmind

from conftest import MindgateServer, free_port
from test_postgres_store import pg_schema_url, pytestmark  # noqa: F401 - fixture, skip mark
from test_unwatched import GRACE, Viewer, failing_agent, resumed_principals, stays_held

TOKEN = "unwatched-team-token-0123456789"


def test_a_viewer_on_another_instance_keeps_the_gate_until_it_closes(tmp_path, pg_schema_url, monkeypatch):
    monkeypatch.setenv("MINDGATE_TOKEN", TOKEN)
    args = ["--db", pg_schema_url]
    a = MindgateServer(tmp_path / "a", free_port(), args, hold_unwatched=False).start()
    b = MindgateServer(tmp_path / "b", free_port(), args, hold_unwatched=False).start()
    gm = None
    try:
        viewer = Viewer(b)
        monkeypatch.setenv("GRAPHMIND_URL", a["ingest"])
        monkeypatch.delenv("GRAPHMIND_DISABLED", raising=False)
        gm = graphmind.GraphMind(app="team-unwatched", connect_timeout=2.0, handshake_timeout=2.0, retry_interval=0.3)
        assert gm.ready(5.0), "client did not attach"
        thread, box = failing_agent(gm, "watched-elsewhere")
        pause = a.wait_pause()
        assert b.wait_pause()["pauseId"] == pause["pauseId"]
        # Nobody watches on A; the page on B keeps the gate held past the grace.
        stays_held(a, pause, GRACE + 2.0)
        closed = time.monotonic()
        viewer.close()
        thread.join(20)
        assert not thread.is_alive(), "the app still hangs at its error gate"
        assert isinstance(box.get("error"), RuntimeError), box
        assert time.monotonic() - closed >= GRACE - 0.1
        a.wait_run(pause["runId"], "error")
        assert resumed_principals(a, pause["runId"]) == [{"kind": "unwatched"}]
    finally:
        if gm is not None:
            gm.dispose()
        for server in (a, b):
            server.stop()
