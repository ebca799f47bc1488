"""Real OpenTelemetry exporters and instrumentations against `mindgate serve`.

* `opentelemetry-sdk` + `opentelemetry-exporter-otlp-proto-http` 1.45, gzip protobuf, found
  through `OTEL_EXPORTER_OTLP_ENDPOINT` as a user sets it;
* `opentelemetry-instrumentation-openai-v2` (GenAI conventions, message content on the span)
  and `openinference-instrumentation-openai`, around a real `openai` client whose transport
  is an `httpx2.MockTransport` (no network).
"""

from __future__ import annotations

import json

import pytest

# This file needs the protobuf exporter's environment (`.venv-otel`).
httpx2 = pytest.importorskip("httpx2")
openai = pytest.importorskip("openai")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

from opentelemetry.exporter.otlp.proto.http import Compression  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402
from opentelemetry.trace import Status, StatusCode  # noqa: E402

from conftest import node, run_id_of  # noqa: E402


def provider_for(server, monkeypatch, service: str) -> TracerProvider:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", server.otlp_endpoint)
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    exporter = OTLPSpanExporter(compression=Compression.Gzip)
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def test_sdk_gzip_protobuf_shows_model_tokens_tools_and_errors(server, monkeypatch):
    provider = provider_for(server, monkeypatch, "trip-agent")
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span(
        "invoke_agent planner",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"},
    ) as root:
        for _ in range(2):
            with tracer.start_as_current_span(
                "chat gpt-4o",
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-4o",
                    "gen_ai.usage.input_tokens": 12,
                    "gen_ai.usage.output_tokens": 4,
                    "gen_ai.output.messages": json.dumps(
                        [{"role": "assistant", "parts": [{"type": "text", "content": "ok"}]}]
                    ),
                },
            ):
                pass
        with tracer.start_as_current_span(
            "execute_tool get_weather",
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                        "gen_ai.tool.call.arguments": '{"city": "Paris"}', "error.type": "TimeoutError"},
        ) as tool:
            tool.set_status(Status(StatusCode.ERROR, "weather service timed out"))
        trace_id = root.get_span_context().trace_id
    assert provider.force_flush(10_000)
    run = run_id_of(trace_id)
    graph = server.wait_for("the run graph", lambda: server.graph(run))
    assert [n["nodeId"] for n in graph["nodes"]] == ["agent:planner", "llm:gpt-4o", "tool:get_weather"]
    llm = node(graph, "llm:gpt-4o")
    assert llm["parentId"] == "agent:planner"
    assert len(llm["instances"]) == 2
    assert llm["instances"][0]["model"] == "gpt-4o"
    assert node(graph, "tool:get_weather")["status"] == "error"
    status, summary = server.get(f"/api/runs/{run}")
    assert status == 200
    assert (summary["source"], summary["status"], summary["app"]) == ("otlp", "ok", "trip-agent")
    assert summary["usage"]["inputTokens"] == 24
    _, detail = server.get(f"/api/runs/{run}/nodes/tool:get_weather")
    text = json.dumps(detail)
    assert "TimeoutError" in text and "weather service timed out" in text and "Paris" in text
    provider.shutdown()


def completion(request: httpx2.Request) -> httpx2.Response:
    body = json.loads(request.content)
    return httpx2.Response(
        200,
        json={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": body["model"] + "-2024-07-18",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "Sunny in Paris."}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16},
        },
    )


def client() -> openai.OpenAI:
    return openai.OpenAI(
        api_key="test-key",
        base_url="http://openai.invalid/v1",
        http_client=httpx2.Client(transport=httpx2.MockTransport(completion)),
    )


def agent_call(provider: TracerProvider) -> int:
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span(
        "invoke_agent support",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"},
    ) as root:
        answer = client().chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "Weather in Paris?"}]
        )
        assert answer.choices[0].message.content == "Sunny in Paris."
        return root.get_span_context().trace_id


def test_openai_v2_instrumentation(server, monkeypatch):
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_only")
    provider = provider_for(server, monkeypatch, "openai-v2-app")
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        trace_id = agent_call(provider)
    finally:
        instrumentor.uninstrument()
    assert provider.force_flush(10_000)
    run = run_id_of(trace_id)
    graph = server.wait_for("the run graph", lambda: server.graph(run))
    llm = node(graph, "llm:gpt-4o-mini")
    assert llm["parentId"] == "agent:support"
    instance = llm["instances"][0]
    assert instance["usage"]["inputTokens"] == 11 and instance["usage"]["outputTokens"] == 5
    assert instance["model"] == "gpt-4o-mini-2024-07-18"
    _, detail = server.get(f"/api/runs/{run}/nodes/llm:gpt-4o-mini")
    text = json.dumps(detail)
    assert "Weather in Paris?" in text and "Sunny in Paris." in text, text[:2000]
    provider.shutdown()


def test_openinference_instrumentation(server, monkeypatch):
    from openinference.instrumentation.openai import OpenAIInstrumentor

    provider = provider_for(server, monkeypatch, "openinference-app")
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        trace_id = agent_call(provider)
    finally:
        instrumentor.uninstrument()
    assert provider.force_flush(10_000)
    run = run_id_of(trace_id)
    graph = server.wait_for("the run graph", lambda: server.graph(run))
    llms = [n for n in graph["nodes"] if n["kind"] == "llm"]
    assert len(llms) == 1, graph["nodes"]
    llm = llms[0]
    assert llm["nodeId"].startswith("llm:gpt-4o-mini")
    assert llm["parentId"] == "agent:support"
    assert llm["instances"][0]["usage"]["inputTokens"] == 11
    _, detail = server.get(f"/api/runs/{run}/nodes/{llm['nodeId']}")
    text = json.dumps(detail)
    assert "Weather in Paris?" in text and "Sunny in Paris." in text, text[:2000]
    provider.shutdown()
