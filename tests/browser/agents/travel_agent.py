"""A small agent instrumented with the real GraphMind client (graphmind-ai 0.5.1).

It runs one named run with an agent node, a planning span, an llm-kind span
that streams tokens, and two @gm.tool tools, then prints what the tools
returned as JSON lines on stdout (`RESULT {...}`) so a test can check that a
value injected from the viewer reached the Python caller.

Environment: GRAPHMIND_URL (the server's /ingest), AGENT_RUN_NAME, AGENT_HOLD
(seconds to keep the run open after the tools, default 0), AGENT_LOOPS.
"""

from __future__ import annotations

import json
import os
import sys
import time

import graphmind as gm

gm.configure(app="browser-test-agent")


@gm.tool
def search_flights(origin: str, destination: str) -> list[dict]:
    """The tool the browser test breaks on; its real body returns two flights."""
    return [
        {"flight": "MG101", "from": origin, "to": destination, "price": 120},
        {"flight": "MG202", "from": origin, "to": destination, "price": 95},
    ]


_attempts = {"n": 0}


@gm.tool
def check_visa(country: str) -> str:
    """Fails on its first call (AGENT_FAIL=1), succeeds when retried."""
    _attempts["n"] += 1
    if _attempts["n"] == 1:
        raise ConnectionError(f"visa service unreachable for {country}")
    return f"visa ok after {_attempts['n']} attempts"


@gm.tool
def book(flight: str) -> dict:
    return {"booked": flight, "confirmation": "CONF-42"}


def main() -> int:
    if not gm.ready(5.0):
        print("NOT-ATTACHED", flush=True)
        return 2
    print("ATTACHED", flush=True)
    name = os.environ.get("AGENT_RUN_NAME", "book-a-trip")
    loops = int(os.environ.get("AGENT_LOOPS", "1"))
    status = "ok"
    try:
        with gm.run(name):
            # Pre-announce a tool that this run never calls: drawn grey.
            gm.graph_hint([{"nodeId": "tool:refund", "kind": "tool", "name": "refund"}])
            with gm.span("plan", kind="chain", input={"goal": "cheapest flight"}) as plan:
                plan.set_output({"steps": ["search", "book"]})
            with gm.span("draft-reply", kind="llm", input={"prompt": "Say hello"}) as step:
                session = gm.session()
                for word in ["Looking ", "for ", "the ", "cheapest ", "flight…"]:
                    session.push_token(step.node_id, "text", word)
                    time.sleep(0.02)
                step.set_output("Looking for the cheapest flight…")
            for _ in range(loops):
                flights = search_flights("SFO", "JFK")
                print("RESULT " + json.dumps({"tool": "search_flights", "value": flights}), flush=True)
            if os.environ.get("AGENT_FAIL") == "1":
                print("RESULT " + json.dumps({"tool": "check_visa", "value": check_visa("US")}), flush=True)
            chosen = flights[0]["flight"] if isinstance(flights, list) and flights and isinstance(flights[0], dict) else str(flights)
            booking = book(chosen)
            print("RESULT " + json.dumps({"tool": "book", "value": booking}), flush=True)
            hold = float(os.environ.get("AGENT_HOLD", "0"))
            if hold:
                time.sleep(hold)
    except BaseException as exc:  # noqa: BLE001 - report how the run ended
        status = "aborted" if gm.is_abort_error(exc) else f"error: {type(exc).__name__}: {exc}"
    print("RUN-END " + status, flush=True)
    gm.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
