"""The README's OpenTelemetry block, extracted from README.md and run by a shell as printed:
it sets OTEL_EXPORTER_OTLP_ENDPOINT and starts `python my_agent.py`, here a plain
OpenTelemetry-instrumented OpenAI app (the exporter reads only that variable) whose model is
a stand-in endpoint on loopback. The app's trace must land as a run with its model node.

The one change to the printed text: serve's OTLP port is the test server's, not 4318 (which
another process on the machine may hold).
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("openai", reason="needs the OpenAI client of .venv-otel")
pytest.importorskip(
    "opentelemetry.instrumentation.openai_v2", reason="needs the OpenAI instrumentation of .venv-otel"
)

HERE = pathlib.Path(__file__).resolve().parent
sys.path.append(str(HERE.parent / "python"))

from openai_standin import REPLY, OpenAIStandIn  # noqa: E402
from readme_blocks import block  # noqa: E402

from conftest import node  # noqa: E402

PRINTED_ENDPOINT = "http://127.0.0.1:4318"

#: `my_agent.py` of the README block: any app with OpenTelemetry tracing set up.
AGENT = '''
from openai import OpenAI
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "readme-otel-agent"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
OpenAIInstrumentor().instrument()
reply = OpenAI().chat.completions.create(
    model="gpt-4o-mini", messages=[{"role": "user", "content": "Weather in Oslo?"}]
)
print(reply.choices[0].message.content)
provider.shutdown()
'''


def otlp_runs(server) -> list[dict]:
    status, body = server.get("/api/runs")
    assert status == 200, body
    return [r for r in body["runs"] if r["source"] == "otlp"]


def test_the_readme_otel_block_sends_the_apps_trace(server, tmp_path):
    script = block("otel")
    assert PRINTED_ENDPOINT in script, script
    (tmp_path / "my_agent.py").write_text(AGENT, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    # `python` in the block is this environment's interpreter, as an activated venv makes it.
    env["PATH"] = f"{pathlib.Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    with OpenAIStandIn() as model:
        env.update(OPENAI_BASE_URL=model.base_url, OPENAI_API_KEY="sk-readme-test")
        done = subprocess.run(
            [shutil.which("bash") or "/bin/bash", "-euc", script.replace(PRINTED_ENDPOINT, server.otlp_endpoint)],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.strip() == REPLY
        assert len(model.requests) == 1
    run = server.wait_for("the app's OTLP run", lambda: next(iter(otlp_runs(server)), None))
    assert run["app"] == "readme-otel-agent", run
    graph = server.wait_for("the run graph", lambda: server.graph(run["id"]))
    llm = node(graph, "llm:gpt-4o-mini")
    assert llm["instances"][0]["usage"]["inputTokens"] == 21, llm
