"""The agent of the CI recipe test (`test_check_recipe.py`), instrumented with the real
GraphMind client (graphmind-ai): a search tool, then a model call. AGENT_VERSION=2 is a
changed agent: one more tool call (a second search), another answer and ten times the
tokens. Prints `RUN-ID <id>` and `RUN-END ok`. Environment: GRAPHMIND_URL, AGENT_VERSION.
"""

from __future__ import annotations

import os
import sys

import graphmind as gm

gm.configure(app="ci-agent")


def main() -> int:
    if not gm.ready(5.0):
        print("NOT-ATTACHED", flush=True)
        return 2
    changed = os.environ.get("AGENT_VERSION", "1") == "2"
    with gm.run("answer-question") as ctx:
        print(f"RUN-ID {ctx.run_id}", flush=True)
        session = gm.session()
        searches = 2 if changed else 1
        for i in range(1, searches + 1):
            session.start_node("tool:search", "tool", "search", f"search-{i}", input={"q": "capital of Portugal"})
            session.finish_node("tool:search", f"search-{i}", 3.0, output={"hits": ["Lisbon is the capital of Portugal"]})
        session.start_node("llm:answer", "llm", "answer", "answer-1", input={"model": "gpt-4o-mini", "messages": []})
        answer = "Lisbon, probably" if changed else "Lisbon"
        usage = {"inputTokens": 10000, "outputTokens": 2000} if changed else {"inputTokens": 1000, "outputTokens": 200}
        session.finish_node("llm:answer", "answer-1", 9.0, output={"text": answer}, usage=usage)
    print("RUN-END ok", flush=True)
    gm.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
