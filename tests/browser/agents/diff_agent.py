"""An agent instrumented with the real GraphMind client (graphmind-ai 0.5.1) for the diff view:
a search tool then a model call. AGENT_VARIANT=b makes the search return another price (and one
more hit), so two runs part at `tool:search`. Prints `RUN-ID <id>` and `RUN-END ok`.
AGENT_QUERY sets the search input. Environment: GRAPHMIND_URL, AGENT_RUN_NAME, AGENT_VARIANT,
AGENT_QUERY.
"""

from __future__ import annotations

import os
import sys

import graphmind as gm

gm.configure(app="diff-agent")


def main() -> int:
    if not gm.ready(5.0):
        print("NOT-ATTACHED", flush=True)
        return 2
    variant = os.environ.get("AGENT_VARIANT", "a")
    hits = [{"id": 1, "price": 120}] if variant == "a" else [{"id": 1, "price": 99}, {"id": 2, "price": 140}]
    with gm.run(os.environ.get("AGENT_RUN_NAME", "diff-run")) as ctx:
        print(f"RUN-ID {ctx.run_id}", flush=True)
        session = gm.session()
        session.start_node("tool:search", "tool", "search", "search-1", input={"q": os.environ.get("AGENT_QUERY", "flights to Lisbon")})
        session.finish_node("tool:search", "search-1", 5.0, output={"hits": hits})
        session.start_node("llm:answer", "llm", "answer", "answer-1", input={"model": "gpt-4o-mini", "messages": []})
        session.finish_node("llm:answer", "answer-1", 12.0, output={"text": "book flight 1"}, usage={"inputTokens": 1000, "outputTokens": 200})
    print("RUN-END ok", flush=True)
    gm.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
