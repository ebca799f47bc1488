"""`opentelemetry-exporter-otlp-json-http` (OTLP/JSON, gzip) against `mindgate serve`.

Runs in `.venv-otel-json` (its transport packages conflict with the protobuf exporter's);
skipped in an environment without it.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.json.http")

from opentelemetry.exporter.otlp.common.http import Compression  # noqa: E402
from opentelemetry.exporter.otlp.json.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402

from conftest import node, run_id_of  # noqa: E402


def test_json_exporter_gzip(server, monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", server.otlp_endpoint)
    provider = TracerProvider(resource=Resource.create({"service.name": "json-app"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(compression=Compression.GZIP)))
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span(
        "invoke_agent writer", attributes={"gen_ai.operation.name": "invoke_agent"}
    ) as root:
        with tracer.start_as_current_span(
            "chat claude-sonnet-4",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "claude-sonnet-4",
                "gen_ai.usage.input_tokens": 30,
                "gen_ai.usage.output_tokens": 9,
                "gen_ai.usage.cache_read.input_tokens": 20,
                "gen_ai.input.messages": json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": "Draft a haiku"}]}]
                ),
            },
        ):
            pass
        trace_id = root.get_span_context().trace_id
    assert provider.force_flush(10_000)
    run = run_id_of(trace_id)
    graph = server.wait_for("the run graph", lambda: server.graph(run))
    llm = node(graph, "llm:claude-sonnet-4")
    assert llm["parentId"] == "agent:writer"
    usage = llm["instances"][0]["usage"]
    assert (usage["inputTokens"], usage["outputTokens"]) == (30, 9)
    _, detail = server.get(f"/api/runs/{run}/nodes/llm:claude-sonnet-4")
    assert "Draft a haiku" in json.dumps(detail)
    _, summary = server.get(f"/api/runs/{run}")
    assert (summary["source"], summary["status"]) == ("otlp", "ok")
    provider.shutdown()
