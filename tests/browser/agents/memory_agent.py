"""An agent instrumented with the real GraphMind client (graphmind-ai 0.5.1) that recalls
from Mindgate's memory: one run with a `retriever` span whose output is the hits of
`GET /api/memory/search` (each with its `link` into the viewer's memory inspector).

Environment: GRAPHMIND_URL (the server's /ingest), MEMORY_BASE (the server's base URL),
MEMORY_USER, MEMORY_QUERY, AGENT_RUN_NAME.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.parse
import urllib.request

import graphmind as gm

gm.configure(app="browser-memory-agent")


def recall(query: str) -> list[dict]:
    base = os.environ["MEMORY_BASE"]
    params = urllib.parse.urlencode({"userId": os.environ["MEMORY_USER"], "query": query})
    with urllib.request.urlopen(f"{base}/api/memory/search?{params}", timeout=10) as resp:
        return json.load(resp)["hits"]


def main() -> int:
    if not gm.ready(5.0):
        print("NOT-ATTACHED", flush=True)
        return 2
    status = "ok"
    try:
        with gm.run(os.environ.get("AGENT_RUN_NAME", "recall")):
            query = os.environ.get("MEMORY_QUERY", "tea")
            with gm.span("memory:search", kind="retriever", input={"query": query}) as span:
                hits = recall(query)
                span.set_output(hits)
            print("HITS " + json.dumps([h["id"] for h in hits]), flush=True)
    except BaseException as exc:  # noqa: BLE001 - report how the run ended
        status = f"error: {type(exc).__name__}: {exc}"
    print("RUN-END " + status, flush=True)
    gm.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
