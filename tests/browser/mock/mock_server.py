"""A stand-in for `mindgate serve`, for developing the viewer before (or
without) the real server: serves ui/dist, a minimal HTTP API, the /ws/ui feed
(docs/ui-feed.md) and the /ingest WebSocket the GraphMind clients dial.

It keeps everything in memory and implements only what the viewer uses.
Run: python mock_server.py --port 4747 [--home DIR]
The browser tests use it when MINDGATE_MOCK=1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import mimetypes
import os
import secrets
import time
from http import HTTPStatus
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Response

DIST = Path(__file__).resolve().parents[3] / "ui" / "dist"


def now_ms() -> int:
    return int(time.time() * 1000)


class Hub:
    def __init__(self, token: str) -> None:
        self.token = token
        self.runs: dict[str, dict] = {}
        self.events: dict[str, list[dict]] = {}
        self.owner: dict[str, ServerConnection] = {}
        self.apps: dict[ServerConnection, dict] = {}
        self.pauses: dict[str, dict] = {}
        self.breakpoints: list[dict] = [{"point": "error"}]
        self.mode = "run"
        self.ui: dict[ServerConnection, set[str]] = {}

    # -- state -------------------------------------------------------------
    def state_msg(self) -> dict:
        return {
            "type": "state",
            "breakpoints": self.breakpoints,
            "mode": self.mode,
            "pauses": list(self.pauses.values()),
            "apps": [{"connId": str(id(c)), "app": a.get("app"), "runIds": a["runs"]} for c, a in self.apps.items()],
        }

    async def to_ui(self, msg: dict, run_id: str | None = None) -> None:
        text = json.dumps(msg)
        for ws, subs in list(self.ui.items()):
            if run_id is None or run_id in subs:
                try:
                    await ws.send(text)
                except Exception:
                    pass

    async def broadcast_state(self) -> None:
        await self.to_ui(self.state_msg())

    async def to_apps(self, env: dict) -> None:
        text = json.dumps(env)
        for ws in list(self.apps):
            try:
                await ws.send(text)
            except Exception:
                pass

    def summary(self, run_id: str) -> dict:
        return self.runs[run_id]

    # -- ingest ------------------------------------------------------------
    async def ingest(self, ws: ServerConnection) -> None:
        try:
            first = json.loads(await asyncio.wait_for(ws.recv(), 5))
        except Exception:
            await ws.close(1008, "expected hello")
            return
        if first.get("type") != "hello":
            await ws.close(1008, "expected hello")
            return
        hp = first.get("payload", {})
        self.apps[ws] = {"app": hp.get("app"), "runs": []}
        await ws.send(json.dumps({
            "gm": 1, "seq": 0, "ts": now_ms(), "runId": "*", "type": "hello.ack",
            "payload": {
                "versions": {"protocol": 1, "viewer": "mock"},
                "capabilities": ["pause", "step", "inject", "retry", "abort", "run-claim"],
                "breakpoints": self.breakpoints, "mode": self.mode, "sessionToken": secrets.token_hex(8),
            },
        }))
        await self.broadcast_state()
        try:
            async for text in ws:
                try:
                    env = json.loads(text)
                except Exception:
                    continue
                if isinstance(env, dict) and isinstance(env.get("runId"), str):
                    await self.event(ws, env)
        except Exception:
            pass
        finally:
            self.apps.pop(ws, None)
            gone = [k for k, p in self.pauses.items() if self.owner.get(p["runId"]) is ws]
            for k in gone:
                self.pauses.pop(k, None)
            await self.broadcast_state()

    async def event(self, ws: ServerConnection, env: dict) -> None:
        run_id = env["runId"]
        evs = self.events.setdefault(run_id, [])
        if any(e["seq"] == env.get("seq") for e in evs[-50:]):
            return
        evs.append(env)
        p = env.get("payload") or {}
        t = env.get("type")
        ts = env.get("ts") or now_ms()
        if run_id not in self.runs:
            self.runs[run_id] = {
                "id": run_id, "app": self.apps.get(ws, {}).get("app") or p.get("app") or "", "name": run_id,
                "status": "running", "startedAt": ts, "finishedAt": None, "durationMs": None,
                "counts": {"events": 0, "nodes": 0, "errors": 0}, "usage": {"inputTokens": 0, "outputTokens": 0},
                "source": "live", "_nodes": set(),
            }
            self.owner[run_id] = ws
            if ws in self.apps:
                self.apps[ws]["runs"].append(run_id)
        r = self.runs[run_id]
        r["counts"]["events"] += 1
        state_changed = False
        if t == "run.started":
            r["name"] = (p.get("meta") or {}).get("name") or r["name"]
            r["app"] = p.get("app") or r["app"]
        elif t == "run.finished":
            r["status"] = p.get("status", "ok")
            r["finishedAt"] = ts
            r["durationMs"] = ts - r["startedAt"]
        elif t == "node.started":
            r["_nodes"].add(p.get("nodeId"))
            r["counts"]["nodes"] = len(r["_nodes"])
        elif t == "node.error":
            r["counts"]["errors"] += 1
        elif t == "exec.paused":
            self.pauses[p["pauseId"]] = {
                "runId": run_id, "pauseId": p["pauseId"], "nodeId": p.get("nodeId"), "point": p.get("point"),
                "reason": p.get("reason") or ("step" if self.mode == "step" else "breakpoint"), "since": ts,
            }
            state_changed = True
        elif t == "exec.resumed":
            state_changed = self.pauses.pop(p.get("pauseId"), None) is not None
        await self.to_ui({"type": "event", "runId": run_id, "event": env}, run_id)
        await self.to_ui({"type": "run.update", "run": self.public(r)}, "*")
        if state_changed:
            await self.broadcast_state()

    @staticmethod
    def public(r: dict) -> dict:
        return {k: v for k, v in r.items() if not k.startswith("_")}

    # -- ui feed -----------------------------------------------------------
    async def ui_feed(self, ws: ServerConnection, token: str) -> None:
        read_only = token != self.token
        self.ui[ws] = set()
        await ws.send(json.dumps({"type": "welcome", "version": "mock", "readOnly": read_only}))
        await ws.send(json.dumps(self.state_msg()))
        try:
            async for text in ws:
                try:
                    msg = json.loads(text)
                except Exception:
                    continue
                t = msg.get("type")
                if t == "subscribe":
                    rid = msg.get("runId")
                    self.ui[ws].add(rid)
                    if rid == "*":
                        runs = sorted(self.runs.values(), key=lambda r: -r["startedAt"])[:200]
                        await ws.send(json.dumps({"type": "runs", "runs": [self.public(r) for r in runs]}))
                    else:
                        await ws.send(json.dumps({"type": "replay.start", "runId": rid}))
                        last = -1
                        for e in list(self.events.get(rid, [])):
                            await ws.send(json.dumps({"type": "event", "runId": rid, "event": e}))
                            last = e["seq"]
                        await ws.send(json.dumps({"type": "replay.end", "runId": rid, "lastSeq": last}))
                elif t == "unsubscribe":
                    self.ui[ws].discard(msg.get("runId"))
                elif t == "control":
                    if read_only:
                        await ws.send(json.dumps({"type": "error", "code": "unauthorized", "message": "control needs the token", "requestId": msg.get("requestId")}))
                        continue
                    await self.control(ws, msg)
        except Exception:
            pass
        finally:
            self.ui.pop(ws, None)

    async def control(self, ws: ServerConnection, msg: dict) -> None:
        env = msg.get("envelope") or {}
        t = env.get("type")
        p = env.get("payload") or {}
        rid = msg.get("requestId")
        if t == "exec.resume":
            pause = self.pauses.get(p.get("pauseId"))
            if pause is None:
                await ws.send(json.dumps({"type": "resume.result", "requestId": rid, "result": "no-such-pause"}))
                return
            owner = self.owner.get(pause["runId"])
            if owner is None or owner not in self.apps:
                await ws.send(json.dumps({"type": "resume.result", "requestId": rid, "result": "no-such-pause"}))
                return
            self.pauses.pop(pause["pauseId"], None)
            await owner.send(json.dumps({"gm": 1, "seq": 0, "ts": now_ms(), "runId": pause["runId"], "type": "exec.resume", "payload": p}))
            await ws.send(json.dumps({"type": "resume.result", "requestId": rid, "result": "resumed"}))
            await self.broadcast_state()
        elif t in ("breakpoint.set", "breakpoint.clear"):
            m = p.get("matcher") or {}
            key = lambda x: (x.get("kind"), x.get("name"), x.get("point"))  # noqa: E731
            self.breakpoints = [b for b in self.breakpoints if key(b) != key(m)]
            if t == "breakpoint.set":
                self.breakpoints.append(m)
            await self.to_apps({"gm": 1, "seq": 0, "ts": now_ms(), "runId": "*", "type": t, "payload": {"matcher": m}})
            await self.broadcast_state()
        elif t == "mode.set":
            self.mode = p.get("mode", "run")
            await self.to_apps({"gm": 1, "seq": 0, "ts": now_ms(), "runId": "*", "type": t, "payload": {"mode": self.mode}})
            await self.broadcast_state()


def response(status: int, body: bytes, ctype: str) -> Response:
    return Response(status, HTTPStatus(status).phrase, Headers([("Content-Type", ctype), ("Content-Length", str(len(body))), ("Cache-Control", "no-store")]), body)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=4747)
    ap.add_argument("--home", default=os.environ.get("MINDGATE_HOME", ""))
    args = ap.parse_args()
    token = secrets.token_hex(16)
    hub = Hub(token)

    def process_request(conn: ServerConnection, request):  # noqa: ANN001
        url = urlparse(request.path)
        if url.path in ("/ingest", "/ws/ui"):
            return None
        if url.path == "/health":
            return response(200, b'{"ok":true}', "application/json")
        if url.path == "/api/runs":
            runs = sorted(hub.runs.values(), key=lambda r: -r["startedAt"])
            q = parse_qs(url.query)
            if "before" in q:
                runs = [r for r in runs if r["startedAt"] < int(q["before"][0])]
            runs = runs[: int(q.get("limit", ["200"])[0])]
            return response(200, json.dumps({"runs": [hub.public(r) for r in runs]}).encode(), "application/json")
        if url.path.startswith("/api/"):
            return response(404, b'{"error":"not in the mock"}', "application/json")
        rel = url.path.lstrip("/") or "index.html"
        f = (DIST / rel).resolve()
        if not str(f).startswith(str(DIST)) or not f.is_file():
            f = DIST / "index.html"
        ctype = mimetypes.guess_type(str(f))[0] or "application/octet-stream"
        if ctype.startswith("text/") or ctype.endswith("javascript"):
            ctype += "; charset=utf-8"
        return response(200, f.read_bytes(), ctype)

    async def handler(ws: ServerConnection) -> None:
        url = urlparse(ws.request.path)
        if url.path == "/ingest":
            await hub.ingest(ws)
        else:
            await hub.ui_feed(ws, parse_qs(url.query).get("token", [""])[0])

    async def run() -> None:
        async with serve(handler, "127.0.0.1", args.port, process_request=process_request, max_size=16 * 1024 * 1024) as server:
            port = server.sockets[0].getsockname()[1]
            url = f"http://127.0.0.1:{port}/#token={token}"
            if args.home:
                d = Path(args.home) / "run"
                d.mkdir(parents=True, exist_ok=True)
                (d / f"serve-{port}.json").write_text(json.dumps({"port": port, "pid": os.getpid(), "token": token, "url": url}))
            print(f"Mindgate (mock) viewer: {url}", flush=True)
            await asyncio.Future()

    asyncio.run(run())


if __name__ == "__main__":
    main()
