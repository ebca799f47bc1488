"""Measures what the hub's automatic inject costs per replayed step (reported, never asserted).

A graphmind-ai 0.5.1 app runs STEPS sequential tool calls (trivial bodies) in one run:
1. live, nothing armed (the baseline);
2. replayed up to the last call (STEPS - 1 steps injected by the hub, then the hold).
Per replayed step: the wall time of the replay run (start -> the hold at the chosen step)
minus the live run's time to reach that step, over the injected steps; and from the stored
events, each gate's hold (`exec.paused` -> `exec.resumed`, the client's clock): the round
trip client -> hub -> client of one automatic answer.

Usage: MINDGATE_BIN=target/release/mindgate .venv/bin/python scripts/bench-replay.py [--steps 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import tempfile
import threading
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

import graphmind  # noqa: E402

from conftest import BIN, MindgateServer, free_port  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    steps = args.steps
    print(f"binary: {BIN}; {steps} steps; load: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        server = MindgateServer(pathlib.Path(tmp) / "home", free_port()).start()
        try:
            os.environ["GRAPHMIND_URL"] = server["ingest"]
            gm = graphmind.GraphMind(app="bench-replay", connect_timeout=2.0, handshake_timeout=2.0)
            assert gm.ready(5.0)
            reached: dict[str, float] = {}

            @gm.tool
            def step(i: int) -> int:
                if i == steps - 1:
                    reached["last"] = time.perf_counter()
                return i * 2

            def run() -> tuple[str, float]:
                start = time.perf_counter()
                with gm.run("bench") as ctx:
                    for i in range(steps):
                        step(i)
                return ctx.run_id, reached["last"] - start

            rows = []
            for rep in range(args.repeat):
                source, live = run()
                server.wait_run(source, "ok")
                status, armed = server.request("POST", f"/api/runs/{source}/replay",
                                                {"nodeId": "tool:step", "instance": last_instance(server, source)})
                assert status == 200 and armed["injectedSteps"] == steps - 1, armed
                deadline = time.monotonic() + 5
                while not any(m.get("point") == "before" for m in gm.session._engine.snapshot()[0]):
                    assert time.monotonic() < deadline
                    time.sleep(0.005)
                box: dict[str, object] = {}
                start = time.perf_counter()
                t = threading.Thread(target=lambda: box.setdefault("run", run()), daemon=True)
                t.start()
                pause = server.wait_pause(timeout=60)
                held_at = time.perf_counter()
                assert pause["replay"]["role"] == "target", pause
                replay_to_hold = held_at - start
                server.resume(pause, "continue")
                t.join(30)
                replay_run = pause["runId"]
                server.wait_run(replay_run, "ok")
                holds = hold_times(server, replay_run)
                extra = (replay_to_hold - live) / (steps - 1) * 1000
                rows.append((live, replay_to_hold, extra, holds))
                print(f"rep {rep + 1}: live run to step {steps}: {live * 1000:.1f} ms; replay to the hold: "
                      f"{replay_to_hold * 1000:.1f} ms (includes /api/pauses polling); extra per replayed step: "
                      f"{extra:.2f} ms; gate hold p50 / p95 / max: {pct(holds, 50):.2f} / {pct(holds, 95):.2f} / "
                      f"{max(holds):.2f} ms over {len(holds)} gates; load {os.getloadavg()[0]:.1f}")
            gm.dispose()
            if server.proc is not None:
                status = pathlib.Path(f"/proc/{server.proc.pid}/status").read_text()
                hwm = next((l.split()[1] for l in status.splitlines() if l.startswith("VmHWM")), "?")
                print(f"server peak RSS (VmHWM): {int(hwm) / 1024:.1f} MB" if hwm != "?" else "server peak RSS: ?")
        finally:
            server.stop()
    return 0


def last_instance(server: MindgateServer, run_id: str) -> str:
    detail = server.get(f"/api/runs/{run_id}/nodes/tool:step")
    return detail["instances"][-1]["instanceId"]


def hold_times(server: MindgateServer, run_id: str) -> list[float]:
    paused: dict[str, float] = {}
    out = []
    for e in server.events(run_id):
        p = e["payload"]
        if e["type"] == "exec.paused":
            paused[p["pauseId"]] = e["ts"]
        elif e["type"] == "exec.resumed" and p.get("principal", {}).get("kind") == "replay":
            if p["pauseId"] in paused:
                out.append(e["ts"] - paused[p["pauseId"]])
    return out


def pct(values: list[float], q: int) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q / 100))]


if __name__ == "__main__":
    sys.exit(main())
