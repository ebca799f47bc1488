"""An agent instrumented with the real GraphMind client (graphmind-ai 0.5.1) whose model
calls report known token usage, for the viewer's cost display.

It sends what the client's OpenAI integration sends: the model in the node's input and
`usage` on `node.finished` (here with cache reads). With AGENT_UNPRICED=1 it also calls a
model no price table knows. Environment: GRAPHMIND_URL, AGENT_RUN_NAME, AGENT_UNPRICED.
"""

from __future__ import annotations

import os
import sys

import graphmind as gm

gm.configure(app="cost-agent")


def call(session, name: str, model: str, usage: dict[str, int]) -> None:
    node_id = f"llm:{name}"
    instance_id = f"{name}-1"
    session.start_node(node_id, "llm", name, instance_id, input={"provider": "openai", "model": model, "messages": []})
    session.finish_node(node_id, instance_id, 12.0, output={"text": "ok"}, usage=usage)


def main() -> int:
    if not gm.ready(5.0):
        print("NOT-ATTACHED", flush=True)
        return 2
    with gm.run(os.environ.get("AGENT_RUN_NAME", "cost-run")):
        session = gm.session()
        call(session, "answer", "gpt-4o-2024-08-06", {"inputTokens": 100_000, "outputTokens": 20_000, "cacheReadTokens": 40_000})
        if os.environ.get("AGENT_UNPRICED") == "1":
            call(session, "local", "llama3:70b", {"inputTokens": 10, "outputTokens": 10})
    print("RUN-END ok", flush=True)
    gm.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
