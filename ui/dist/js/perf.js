// Synthetic runs for measuring the viewer on big graphs (used by the browser
// tests through window.mindgate). The events go through the same code path as
// the live feed: JSON text → store.handle → run model → layout → canvas.

export function syntheticFeed(runId, nodeCount = 5000, eventCount = 100000) {
  const msgs = [];
  let seq = 0;
  let ts = Date.now() - 600_000;
  const ev = (type, payload) => {
    ts += 3;
    msgs.push(JSON.stringify({ type: 'event', runId, event: { gm: 1, seq: seq++, ts, runId, type, payload } }));
  };
  ev('run.started', { app: 'synthetic', sdk: { name: 'synthetic', version: '0' }, meta: { name: `synthetic ${nodeCount} nodes` } });
  const leaves = [];
  const names = new Map();
  let made = 0;
  const node = (nodeId, kind, name, parentId) => {
    made++;
    const p = { nodeId, kind, name, instanceId: `${nodeId}#0`, input: { step: made, query: `q${made}` } };
    if (parentId) p.parentId = parentId;
    ev('node.started', p);
    return nodeId;
  };
  const root = node('agent:synthetic', 'agent', 'synthetic', null);
  const opened = [root];
  const fan1 = 50, fan2 = 10;
  for (let a = 0; a < fan1 && made < nodeCount; a++) {
    const c = node(`chain:stage-${a}`, 'chain', `stage-${a}`, root);
    opened.push(c);
    for (let b = 0; b < fan2 && made < nodeCount; b++) {
      const s = node(`agent:worker-${a}-${b}`, 'agent', `worker-${a}-${b}`, c);
      opened.push(s);
      const leavesPer = Math.ceil((nodeCount - 1 - fan1 - fan1 * fan2) / (fan1 * fan2));
      for (let l = 0; l < leavesPer && made < nodeCount; l++) {
        const kind = l % 3 === 0 ? 'llm' : 'tool';
        const id = node(`${kind}:w${a}-${b}-${l}`, kind, `${kind === 'llm' ? 'step' : 'search'}-${a}-${b}-${l}`, s);
        leaves.push(id);
        names.set(id, `${kind === 'llm' ? 'step' : 'search'}-${a}-${b}-${l}`);
        ev('node.finished', { nodeId: id, instanceId: `${id}#0`, durationMs: 5 + (l % 7), status: l % 97 === 0 ? 'error' : 'ok', output: { rows: l } });
      }
    }
  }
  // Repeated executions of leaves until the event budget is spent.
  let k = 0;
  while (seq < eventCount - opened.length - 1) {
    const id = leaves[(k * 7919) % leaves.length];
    const inst = `${id}#r${k++}`;
    ev('node.started', { nodeId: id, kind: id.slice(0, id.indexOf(':')), name: names.get(id), instanceId: inst });
    ev('node.finished', { nodeId: id, instanceId: inst, durationMs: 2, status: 'ok', usage: { inputTokens: 10, outputTokens: 5 } });
  }
  for (const id of opened.reverse()) ev('node.finished', { nodeId: id, instanceId: `${id}#0`, durationMs: 1000, status: 'ok' });
  ev('run.finished', { status: 'ok' });
  return { msgs, nextSeq: seq, lastTs: ts };
}

const nextFrame = () => new Promise((r) => requestAnimationFrame(() => r()));

let prepared = null;

/** Builds the synthetic feed ahead of time (so its cost is not measured). */
export function prepareSynthetic(nodeCount = 5000, eventCount = 100000) {
  const runId = `synthetic-${nodeCount}-${Date.now().toString(36)}`;
  prepared = { runId, feed: syntheticFeed(runId, nodeCount, eventCount) };
  return { runId, messages: prepared.feed.msgs.length };
}

/** Opens a synthetic run and reports how long the first render took. */
export async function openSynthetic(store, nodeCount = 5000, eventCount = 100000) {
  if (!prepared) {
    prepareSynthetic(nodeCount, eventCount);
    // Let the generator's garbage be collected before the clock starts.
    await new Promise((r) => setTimeout(r, 400));
  }
  const { runId, feed } = prepared;
  prepared = null;
  store.local = runId;
  await nextFrame();
  const t0 = performance.now();
  store.selectRun(runId);
  store.handle({ type: 'replay.start', runId });
  for (const text of feed.msgs) store.handle(JSON.parse(text));
  const eventsMs = performance.now() - t0;
  store.handle({ type: 'replay.end', runId, lastSeq: feed.nextSeq - 1 });
  const syncMs = performance.now() - t0;
  await nextFrame();
  const firstFrameMs = performance.now() - t0;
  store.synthetic = { runId, seq: feed.nextSeq, ts: feed.lastTs, added: 0 };
  const m = store.model;
  return {
    runId, nodes: m.nodes.size, events: m.eventCount, instances: m.instList.length,
    visibleBoxes: store.graph.layout.placedCount, eventsMs, processAndLayoutMs: syncMs, firstRenderMs: firstFrameMs,
    drawMs: store.graph.lastDrawMs,
  };
}

/**
 * Adds `count` nodes one at a time to the open synthetic run and times each
 * frame's work: apply the event, place the box, redraw the canvas, update the
 * other views.
 */
export async function measureIncremental(store, count = 30) {
  const s = store.synthetic;
  const g = store.graph;
  const m = store.model;
  const parent = m.order.find((n) => n.depth === 1 && !n.folded) || m.order[0];
  const before = m.order.filter((n) => n.placed).map((n) => [n, n.x, n.y]);
  const times = [];
  for (let i = 0; i < count; i++) {
    await nextFrame();
    const id = `tool:live-${s.added++}`;
    const msg = JSON.stringify({ type: 'event', runId: s.runId, event: { gm: 1, seq: s.seq++, ts: s.ts += 5, runId: s.runId, type: 'node.started', payload: { nodeId: id, kind: 'tool', name: `live-${s.added}`, parentId: parent.id, instanceId: `${id}#0` } } });
    const t0 = performance.now();
    store.handle(JSON.parse(msg));
    g.drawNow();
    store.emit('model', m); // the other views' share of the frame (run bar, timeline, inspector)
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const moved = before.filter(([n, x, y]) => n.x !== x || n.y !== y).length;
  return {
    samples: times.length,
    medianMs: times[Math.floor(times.length / 2)],
    p95Ms: times[Math.floor(times.length * 0.95)],
    maxMs: times[times.length - 1],
    moved,
  };
}

/**
 * Opens `runId` through the server projection (experimental `/ws/ui`
 * subscribe with `projection: true`) on a socket of its own: the snapshot and
 * the deltas after it are applied to the selected run's model by graphdelta.js
 * and drawn by the graph view. Resolves once the snapshot is drawn, with the
 * figures the benchmark compares against the event replay: subscribe → graph
 * complete, the page's handler time, the bytes received. Later deltas keep
 * flowing into the model (store.projection has the running counts).
 */
export function openProjected(store, runId, { applySnapshot, applyDelta }) {
  return new Promise((resolve, reject) => {
    store.local = runId; // the store's own feed does not subscribe to this run
    store.selectRun(runId);
    const model = store.model;
    const stats = { bytes: 0, messages: 0, deltas: 0, busyMs: 0 };
    store.projection = stats;
    const q = store.token ? `?token=${encodeURIComponent(store.token)}` : '';
    const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws/ui${q}`);
    stats.socket = ws;
    let t0 = 0;
    ws.onopen = () => {
      t0 = performance.now();
      ws.send(JSON.stringify({ type: 'subscribe', runId, projection: true }));
    };
    ws.onerror = () => reject(new Error('the projection socket failed'));
    ws.onmessage = (e) => {
      const t = performance.now();
      stats.bytes += e.data.length;
      stats.messages++;
      const msg = JSON.parse(e.data);
      if (msg.runId !== runId || store.model !== model) return;
      if (msg.type === 'graph.snapshot') {
        if (!applySnapshot(model, msg)) { stats.busyMs += performance.now() - t; return; }
        store.finishReplay();
        stats.busyMs += performance.now() - t;
        const done = {
          runId, nodes: model.nodes.size, instances: model.instList.length, lastSeq: model.lastSeq,
          subscribeToCompleteMs: performance.now() - t0, pageBusyMs: stats.busyMs, bytes: stats.bytes,
        };
        requestAnimationFrame(() => resolve({ ...done, subscribeToDrawnMs: performance.now() - t0 }));
        return;
      }
      if (msg.type === 'graph.delta' && applyDelta(model, msg)) {
        stats.deltas++;
        store.queueModel();
      }
      stats.busyMs += performance.now() - t;
    };
  });
}

/**
 * Resolves with the epoch time (ms, sub-ms precision) of the first graph draw
 * after which node `nodeId` of the open run has a box: the "drawn" end of
 * "one live event → drawn".
 */
export function whenDrawn(store, nodeId) {
  const graph = store.graph;
  return new Promise((resolve) => {
    const original = graph.drawNow;
    graph.drawNow = function drawAndCheck(...args) {
      const out = original.apply(this, args);
      const n = store.model && store.model.nodes.get(nodeId);
      if (n && n.placed) {
        graph.drawNow = original;
        resolve(performance.timeOrigin + performance.now());
      }
      return out;
    };
  });
}
