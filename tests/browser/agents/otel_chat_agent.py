"""An agent traced with the real OpenTelemetry SDK and its OTLP/HTTP protobuf exporter,
sending to `mindgate serve`'s `POST /v1/traces` (OTEL_EXPORTER_OTLP_ENDPOINT).

Its spans follow the GenAI conventions: an `invoke_agent` root, a `chat` span whose
`gen_ai.input.messages` hold a tool call and its result and whose `gen_ai.output.messages`
hold the answer, and an `execute_tool` span. Prints `SKIPPED <why>` when the exporter is
not installed. Environment: OTEL_EXPORTER_OTLP_ENDPOINT.
"""

from __future__ import annotations

import json
import sys

try:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
except ImportError as err:
    print(f"SKIPPED the OpenTelemetry SDK or its OTLP exporter is not installed: {err}", flush=True)
    sys.exit(0)

INPUT = [
    {"role": "user", "parts": [{"type": "text", "content": "Find me a hotel near the fjord in Oslo."}]},
    {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_hotels_1", "name": "find_hotels", "arguments": {"city": "Oslo", "near": "fjord"}}]},
    {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_hotels_1", "response": "Fjord Hotel (4.6), Harbour Inn (4.2)"}]},
]
OUTPUT = [
    {"role": "assistant", "parts": [{"type": "text", "content": "The Fjord Hotel is rated 4.6 and sits on the water."}], "finish_reason": "stop"}
]


def main() -> int:
    provider = TracerProvider(resource=Resource.create({"service.name": "otel-chat-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
    tracer = provider.get_tracer("otel-chat-agent")
    with tracer.start_as_current_span(
        "invoke_agent concierge",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "concierge"},
    ):
        with tracer.start_as_current_span(
            "execute_tool find_hotels",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "find_hotels",
                "gen_ai.tool.call.id": "call_hotels_1",
                "gen_ai.tool.call.arguments": json.dumps({"city": "Oslo", "near": "fjord"}),
                "gen_ai.tool.call.result": "Fjord Hotel (4.6), Harbour Inn (4.2)",
            },
        ):
            pass
        with tracer.start_as_current_span(
            "chat gpt-4o-mini",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
                "gen_ai.response.finish_reasons": ["stop"],
                "gen_ai.usage.input_tokens": 64,
                "gen_ai.usage.output_tokens": 14,
                "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "You are a hotel concierge."}]),
                "gen_ai.input.messages": json.dumps(INPUT),
                "gen_ai.output.messages": json.dumps(OUTPUT),
            },
        ):
            pass
    provider.shutdown()
    print("RUN-END ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
