// Synthetic runs for measuring the viewer on big graphs (used by the browser
// tests through window.mindgate). A page-local run goes through the same code
// path as a run's graph from the server: `graph.snapshot` parts (JSON text) →
// store.handle → graphdelta.js → layout → canvas; live additions are
// `graph.delta` messages.

/** Parts of this many nodes, as the server sends them. */
const SNAPSHOT_PART_NODES = 500;

const instance = (instanceId, status, startedAt, finishedAt, durationMs, firstSeq, usage = null) => ({
  instanceId, status, startedAt, finishedAt, durationMs, heldMs: null, usage, tokens: '', error: null, firstSeq,
});

/**
 * The graph of a synthetic run of about `nodeCount` nodes whose events would
 * number `eventCount` (a started and a finished event per instance), as the
 * `graph.snapshot` message texts the server would send for it.
 */
export function syntheticFeed(runId, nodeCount = 5000, eventCount = 100000) {
  const nodes = [];
  const byId = new Map();
  let seq = 1; // 0 is run.started
  let ts = Date.now() - 600_000;
  const tick = () => { ts += 3; return ts; };
  const node = (nodeId, kind, name, parentId) => {
    const n = { nodeId, kind, name, parentId, status: 'running', hinted: false, instances: [instance(`${nodeId}#0`, 'running', tick(), null, null, seq++)] };
    nodes.push(n);
    byId.set(nodeId, n);
    return nodeId;
  };
  const finish = (inst, status, durationMs, usage = null) => {
    inst.status = status; inst.finishedAt = tick(); inst.durationMs = durationMs; inst.usage = usage;
    seq++;
  };
  const root = node('agent:synthetic', 'agent', 'synthetic', null);
  const opened = [root];
  const leaves = [];
  const fan1 = 50, fan2 = 10;
  for (let a = 0; a < fan1 && nodes.length < nodeCount; a++) {
    const c = node(`chain:stage-${a}`, 'chain', `stage-${a}`, root);
    opened.push(c);
    for (let b = 0; b < fan2 && nodes.length < nodeCount; b++) {
      const w = node(`agent:worker-${a}-${b}`, 'agent', `worker-${a}-${b}`, c);
      opened.push(w);
      const leavesPer = Math.ceil((nodeCount - 1 - fan1 - fan1 * fan2) / (fan1 * fan2));
      for (let l = 0; l < leavesPer && nodes.length < nodeCount; l++) {
        const kind = l % 3 === 0 ? 'llm' : 'tool';
        const id = node(`${kind}:w${a}-${b}-${l}`, kind, `${kind === 'llm' ? 'step' : 'search'}-${a}-${b}-${l}`, w);
        leaves.push(id);
        finish(byId.get(id).instances[0], l % 97 === 0 ? 'error' : 'ok', 5 + (l % 7));
      }
    }
  }
  // Repeated executions of leaves until the event budget is spent.
  let k = 0;
  while (seq < eventCount - opened.length - 1) {
    const n = byId.get(leaves[(k * 7919) % leaves.length]);
    const inst = instance(`${n.nodeId}#r${k++}`, 'running', tick(), null, null, seq++);
    finish(inst, 'ok', 2, { inputTokens: 10, outputTokens: 5 });
    n.instances.push(inst);
  }
  for (const id of opened.reverse()) finish(byId.get(id).instances[0], 'ok', 1000);
  seq++; // run.finished
  for (const n of nodes) n.status = n.instances[n.instances.length - 1].status;
  const msgs = [];
  for (let i = 0; i < nodes.length; i += SNAPSHOT_PART_NODES) {
    const part = nodes.slice(i, i + SNAPSHOT_PART_NODES);
    msgs.push(JSON.stringify({ type: 'graph.snapshot', runId, seq: seq - 1, nodes: part, more: i + SNAPSHOT_PART_NODES < nodes.length }));
  }
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
  store.model.info = { app: 'synthetic', name: `synthetic ${nodeCount} nodes`, status: 'ok', startedAt: null, finishedAt: feed.lastTs };
  for (const text of feed.msgs) store.handle(JSON.parse(text));
  const eventsMs = performance.now() - t0; // the snapshot parsed and applied, laid out, drawn once
  const syncMs = eventsMs;
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
 * frame's work: apply the delta, place the box, redraw the canvas, update the
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
    const at = s.ts += 5;
    const msg = JSON.stringify({
      type: 'graph.delta', runId: s.runId, seq: s.seq++,
      nodes: [{ nodeId: id, kind: 'tool', name: `live-${s.added}`, parentId: parent.id, status: 'running', hinted: false, instanceCount: 1 }],
      instances: [{ nodeId: id, ...instance(`${id}#0`, 'running', at, null, null, s.seq - 1) }],
    });
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
