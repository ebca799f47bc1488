"""The README's Python block, extracted from README.md and run as a user runs it: a script
next to a running `mindgate serve`, its OpenAI client pointed by `OPENAI_BASE_URL` at a
stand-in endpoint on loopback. The run must land with the nodes the README promises."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

import pytest

from openai_standin import REPLY, OpenAIStandIn
from readme_blocks import block

pytest.importorskip("openai", reason="the README's Python block needs the openai package")


def finished_run(server: Any, name: str, timeout: float = 15.0) -> dict[str, Any]:
    """The run called `name` once it has finished (bounded wait)."""
    deadline = time.monotonic() + timeout
    runs: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        runs = server.get("/api/runs")["runs"]
        run = next((r for r in runs if r["name"] == name and r["status"] != "running"), None)
        if run is not None:
            return run
        time.sleep(0.05)
    raise AssertionError(f"no finished run {name!r} among {runs}")


def test_the_readme_python_block_runs_and_its_run_lands(mindgate, tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(block("python"), encoding="utf-8")
    with OpenAIStandIn() as model:
        env = dict(
            os.environ,
            OPENAI_BASE_URL=model.base_url,
            OPENAI_API_KEY="sk-readme-test",
            GRAPHMIND_URL=mindgate["ingest"],
        )
        done = subprocess.run(
            [sys.executable, str(script)], env=env, cwd=tmp_path, capture_output=True,
            text=True, timeout=60,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.strip() == REPLY
        assert len(model.requests) == 1, model.requests
        assert "Oslo" in model.requests[0]["messages"][0]["content"]
    run = finished_run(mindgate, "weather-question")
    assert run["status"] == "ok", run
    assert run["usage"] == {"inputTokens": 21, "outputTokens": 12}, run
    graph = mindgate.get(f"/api/runs/{run['id']}/graph")
    nodes = {n["nodeId"]: n for n in graph["nodes"]}
    assert {"tool:get_weather", "llm:step"} <= set(nodes), sorted(nodes)
    assert nodes["tool:get_weather"]["kind"] == "tool"
    assert nodes["llm:step"]["kind"] == "llm"
    assert all(n["status"] == "ok" for n in nodes.values()), graph["nodes"]
