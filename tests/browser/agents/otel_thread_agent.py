"""A three-turn conversation traced with the real OpenTelemetry SDK and its OTLP/HTTP
protobuf exporter, sending to `mindgate serve`'s `POST /v1/traces`: each turn is its own
trace (one run) whose `invoke_agent` root span carries `gen_ai.conversation.id` and
`user.id`, so the three runs form one thread (docs/threads.md). Each turn has a `chat`
span under the GenAI conventions (input and output messages, usage) and an
`execute_tool` span; the second turn's tool span fails (status ERROR, one error).
Prints `SKIPPED <why>` when the exporter is not installed.
Environment: OTEL_EXPORTER_OTLP_ENDPOINT, THREAD_ID.
"""

from __future__ import annotations

import json
import os
import sys

try:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.trace import Status, StatusCode
except ImportError as err:
    print(f"SKIPPED the OpenTelemetry SDK or its OTLP exporter is not installed: {err}", flush=True)
    sys.exit(0)

TURNS = [
    ("Find me a hotel near the fjord in Oslo.", "find_hotels", {"city": "Oslo"}, "Fjord Hotel (4.6), Harbour Inn (4.2)", "The Fjord Hotel is rated 4.6 and sits on the water."),
    ("Is it free on Friday?", "check_rooms", {"hotel": "Fjord Hotel", "day": "Friday"}, None, "I could not reach the booking system; try again in a minute."),
    ("Try again, please.", "check_rooms", {"hotel": "Fjord Hotel", "day": "Friday"}, "2 rooms free on Friday", "Yes: two rooms are free on Friday."),
]


def text(role: str, content: str) -> dict:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def turn(tracer, thread: str, n: int, history: list[dict]) -> None:
    question, tool, args, result, answer = TURNS[n]
    call_id = f"call_{n + 1}"
    history.append(text("user", question))
    with tracer.start_as_current_span(
        "invoke_agent concierge",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "concierge",
                    "gen_ai.conversation.id": thread, "user.id": "grace"},
    ):
        with tracer.start_as_current_span(
            f"execute_tool {tool}",
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
                        "gen_ai.tool.call.id": call_id, "gen_ai.tool.call.arguments": json.dumps(args),
                        **({"gen_ai.tool.call.result": result} if result else {})},
        ) as span:
            if result is None:
                span.set_status(Status(StatusCode.ERROR, "the booking system did not answer"))
        history.append({"role": "assistant", "parts": [{"type": "tool_call", "id": call_id, "name": tool, "arguments": args}]})
        history.append({"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": result or "error: timeout"}]})
        output = [{**text("assistant", answer), "finish_reason": "stop"}]
        with tracer.start_as_current_span(
            "chat gpt-4o-mini",
            attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
                        "gen_ai.response.model": "gpt-4o-mini-2024-07-18", "gen_ai.response.finish_reasons": ["stop"],
                        "gen_ai.usage.input_tokens": 60 + 20 * n, "gen_ai.usage.output_tokens": 14,
                        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "You are a hotel concierge."}]),
                        "gen_ai.input.messages": json.dumps(history), "gen_ai.output.messages": json.dumps(output)},
        ):
            pass
        history.append(text("assistant", answer))


def main() -> int:
    provider = TracerProvider(resource=Resource.create({"service.name": "otel-thread-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
    tracer = provider.get_tracer("otel-thread-agent")
    thread = os.environ.get("THREAD_ID", "otel-thread")
    history: list[dict] = []
    for n in range(len(TURNS)):
        turn(tracer, thread, n, history)
    provider.shutdown()
    print("RUN-END ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
