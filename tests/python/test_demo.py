"""`mindgate serve --demo`: the Rust SDK's scripted agent against the real server.

The demo's booking tool fails and holds at the error gate; releasing it with
`retry` through the HTTP API lets the run finish ok.
"""

from __future__ import annotations

import pathlib
import time

from conftest import MindgateServer, free_port


def test_serve_demo_runs_the_sdk_agent_and_holds_at_the_error_gate(tmp_path: pathlib.Path) -> None:
    server = MindgateServer(tmp_path / "home", free_port(), ["--demo"]).start()
    try:
        deadline = time.monotonic() + 20
        run = None
        while time.monotonic() < deadline and run is None:
            runs = server.get("/api/runs")["runs"]
            run = next((r for r in runs if r["app"] == "mindgate-demo"), None)
            time.sleep(0.1)
        assert run is not None, "the demo run never reached the server"

        pause = server.wait_pause(run["id"], timeout=30)
        assert pause["point"] == "error"
        assert pause["nodeId"].startswith("tool:")
        assert server.resume(pause, "retry") == "resumed"

        done = server.wait_run(run["id"], "ok", timeout=30)
        assert done["counts"]["errors"] >= 1
        graph = server.get(f"/api/runs/{run['id']}/graph")
        kinds = {n["kind"] for n in graph["nodes"]}
        assert {"agent", "llm", "tool"} <= kinds
        held = [
            i
            for n in graph["nodes"]
            if n["nodeId"] == pause["nodeId"]
            for i in n["instances"]
        ]
        # Retry re-runs the body inside the same instance: it failed once, then succeeded.
        assert held and held[-1]["status"] == "ok", held
    finally:
        server.stop()
