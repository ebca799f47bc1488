// The page side of the server projection (`/ws/ui` subscribe, docs/ui-feed.md
// § Run graph): the server folds the run's events with store::projection and
// sends its graph as `graph.snapshot` parts, then one `graph.delta` of changed
// node summaries and instances per committed batch. These functions copy them
// into a RunGraph (rungraph.js), which the graph view, layout, timeline and
// inspector draw; no run-graph rule is applied here. A snapshot is plain JSON
// (`{seq?, nodes, more?}`, the nodes of `GET /api/runs/:id/graph`), so one read
// from a file or an HTTP body applies the same way as one from the socket.
//
// What the graph fields do not carry (inputs, outputs, error detail, pause
// records) comes from node detail (`GET /api/runs/:id/nodes/:nodeId`), merged
// into the same instances by applyNodeDetail.

const TAIL = 90; // characters of streamed text kept on a node for the canvas

function newNode(model, id) {
  const node = {
    id, kind: 'custom', name: id, parent: null, parentId: null, children: [], depth: 0,
    insts: [], errors: 0, status: 'pending', hinted: false, placeholder: true, desc: 0,
    folded: false, tokenTail: '', dirty: true, rev: 0, x: 0, y: 0, placed: false, seq: model.order.length,
  };
  model.nodes.set(id, node);
  model.order.push(node);
  model.added.push(node);
  return node;
}

function setNodeFields(node, s) {
  if (typeof s.kind === 'string') node.kind = s.kind;
  if (typeof s.name === 'string') node.name = s.name;
  // What the box reads instead of the name: the core's (an llm node's model).
  node.label = typeof s.label === 'string' && s.label ? s.label : null;
  node.status = s.status || node.status;
  node.hinted = !!s.hinted;
  node.placeholder = node.status === 'pending';
  node.dirty = true;
  node.rev++;
}

function fixDepth(node) {
  const stack = [node];
  while (stack.length) {
    const n = stack.pop();
    n.depth = n.parent ? n.parent.depth + 1 : 0;
    for (const c of n.children) stack.push(c);
  }
}

/** Places nodes under the parents their summaries name (new nodes first linked, then depths fixed). */
function link(model, summaries, created) {
  for (const s of summaries) {
    const node = model.nodes.get(s.nodeId);
    const parent = typeof s.parentId === 'string' ? model.nodes.get(s.parentId) || null : null;
    if (created.has(node)) {
      if (parent) model.attach(node, parent);
      else model.roots.push(node);
    } else if (parent && node.parent !== parent && !model.isAncestor(node, parent)) {
      model.reparent(node, parent);
    }
  }
  for (const node of created) fixDepth(node);
}

/** Copies one instance's graph fields; `appended` = its streamed text comes as slices (a delta). */
function applyInstance(model, c, appended) {
  const node = model.nodes.get(c.nodeId);
  if (!node) return;
  let inst = model.instanceOf(node, c.instanceId);
  if (!inst) {
    inst = {
      id: c.instanceId, node, status: 'running', start: null, end: null, durationMs: null, heldMs: null, workMs: null, spans: [],
      input: undefined, output: undefined, error: null, errorDetail: null, usage: null, tokens: {}, holds: [],
      index: model.instList.length,
    };
    if (!model.instances.has(inst.id)) model.instances.set(inst.id, inst);
    model.instList.push(inst);
    node.insts.push(inst);
  }
  if (!inst.error && c.error) node.errors++;
  inst.status = c.status;
  inst.start = c.startedAt ?? inst.start ?? c.finishedAt ?? null;
  inst.end = c.finishedAt ?? null;
  inst.durationMs = c.durationMs ?? null;
  inst.heldMs = c.heldMs ?? null;
  inst.workMs = c.workMs ?? null;
  // Every hold of the instance (the server's projection): drawn amber on the timeline.
  inst.spans = Array.isArray(c.holds) ? c.holds.map((h) => ({ since: h.since, until: h.until ?? null })) : [];
  inst.usage = c.usage || null;
  inst.error = c.error || null;
  inst.injected = !!c.injected;
  inst.model = c.model || null;
  inst.toolCallId = c.toolCallId || null;
  const text = appended ? (inst.tokens.text || '') + (typeof c.tokensAdded === 'string' ? c.tokensAdded : '') : (c.tokens || '');
  const reasoning = appended ? (inst.tokens.reasoning || '') + (typeof c.reasoningAdded === 'string' ? c.reasoningAdded : '') : (c.reasoning || '');
  inst.tokens = {};
  if (text) inst.tokens.text = text;
  if (reasoning) inst.tokens.reasoning = reasoning;
  const streamed = appended ? (c.tokensAdded || c.reasoningAdded || '') : (text || reasoning);
  if (streamed && c.status === 'running') {
    const tail = appended ? node.tokenTail + streamed : streamed;
    node.tokenTail = tail.length > TAIL ? tail.slice(-TAIL) : tail;
  }
  for (const ts of [inst.start, inst.end]) {
    if (typeof ts !== 'number') continue;
    if (ts < model.minTs) model.minTs = ts;
    if (ts > model.maxTs) model.maxTs = ts;
  }
  node.dirty = true;
  node.rev++;
}

/**
 * Applies one part of a `graph.snapshot` (nodes in graph order, at most 500 a
 * part, `more` while parts follow) to a fresh RunGraph. A node whose parent
 * comes in a later part waits for it. Returns true once the last part is in.
 */
export function applySnapshot(model, msg) {
  const waiting = model.waitingParents || (model.waitingParents = new Map()); // parentId -> [node]
  const placed = [];
  for (const s of Array.isArray(msg.nodes) ? msg.nodes : []) {
    if (!s || typeof s.nodeId !== 'string' || model.nodes.has(s.nodeId)) continue;
    const node = newNode(model, s.nodeId);
    setNodeFields(node, s);
    if (typeof s.parentId === 'string' && s.parentId !== s.nodeId) {
      const parent = model.nodes.get(s.parentId);
      if (parent) { model.attach(node, parent); placed.push(node); }
      else if (waiting.has(s.parentId)) waiting.get(s.parentId).push(node);
      else waiting.set(s.parentId, [node]);
    } else {
      model.roots.push(node);
      placed.push(node);
    }
    for (const child of waiting.get(node.id) || []) model.attach(child, node);
    waiting.delete(node.id);
    for (const i of Array.isArray(s.instances) ? s.instances : []) if (i && typeof i.instanceId === 'string') applyInstance(model, { ...i, nodeId: s.nodeId }, false);
  }
  for (const node of placed) fixDepth(node);
  applyTimes(model, msg);
  model.lastSeq = typeof msg.seq === 'number' ? msg.seq : null;
  model.eventCount = model.lastSeq === null ? 0 : model.lastSeq + 1;
  model.version++;
  if (msg.more) return false;
  for (const orphans of waiting.values()) for (const node of orphans) { model.roots.push(node); fixDepth(node); }
  waiting.clear();
  return true;
}

/** Applies one `graph.delta`; returns false when it is stale (at or before the model's seq). */
export function applyDelta(model, msg) {
  if (typeof msg.seq !== 'number' || (model.lastSeq !== null && model.lastSeq !== undefined && msg.seq <= model.lastSeq)) return false;
  const summaries = (Array.isArray(msg.nodes) ? msg.nodes : []).filter((s) => s && typeof s.nodeId === 'string');
  const created = new Set();
  for (const s of summaries) {
    let node = model.nodes.get(s.nodeId);
    if (!node) { node = newNode(model, s.nodeId); created.add(node); }
    setNodeFields(node, s);
  }
  link(model, summaries, created);
  for (const c of Array.isArray(msg.instances) ? msg.instances : []) {
    if (c && typeof c.nodeId === 'string' && typeof c.instanceId === 'string') applyInstance(model, c, true);
  }
  applyTimes(model, msg);
  model.lastSeq = msg.seq;
  model.eventCount = msg.seq + 1;
  model.version++;
  return true;
}

/** The run's held time and work time, as the server's projection computed them. */
function applyTimes(model, msg) {
  const t = msg.times;
  if (t && typeof t.heldMs === 'number') model.times = { heldMs: t.heldMs, workMs: typeof t.workMs === 'number' ? t.workMs : null };
}

/**
 * Merges node detail (`GET /api/runs/:id/nodes/:nodeId`) into the node's
 * instances: input, output, full error, pause records, redaction. Returns
 * false when the node is not in the graph.
 */
export function applyNodeDetail(model, detail) {
  const node = detail && typeof detail.nodeId === 'string' ? model.nodes.get(detail.nodeId) : null;
  if (!node) return false;
  for (const d of Array.isArray(detail.instances) ? detail.instances : []) {
    const inst = d && typeof d.instanceId === 'string' ? model.instanceOf(node, d.instanceId) : null;
    if (!inst) continue;
    inst.input = d.input ?? undefined;
    inst.output = d.output ?? undefined;
    inst.errorDetail = d.errorDetail || null;
    inst.toolArgs = d.toolArgs || '';
    inst.redaction = (d.started && d.started.redaction) || null;
    inst.transcript = d.transcript && Array.isArray(d.transcript.messages) ? d.transcript : null;
    inst.holds = (Array.isArray(d.pauses) ? d.pauses : []).map((p) => ({
      pauseId: p.pauseId, point: p.point, reason: p.reason, since: p.since, until: p.resumedAt ?? null, action: p.action ?? null, principal: p.principal ?? null,
    }));
  }
  node.detailRev = node.rev;
  return true;
}
