// The logical graph of one run, built incrementally from its event stream.
//
// One node per logical nodeId; every execution is an instance of it. Events
// are applied once each (deduplicated on seq). The rules are the server's
// (store::projection, behind /api/runs/:id/graph and the MCP tools), written
// out in docs/run-graph.md; one corpus of event sequences with their expected
// graphs (crates/store/tests/fixtures/run_graph_corpus.json) runs through both
// (tests/browser/run_graph_corpus.test.mjs here). A child that names a parent
// not seen yet gets a pending placeholder parent, filled in by its own events.

const TAIL = 90; // characters of streamed text kept on a node for the canvas

export class RunModel {
  constructor(runId) {
    this.runId = runId;
    this.nodes = new Map();      // nodeId -> node
    this.order = [];             // nodes in creation order (layout order)
    this.roots = [];             // nodes without parent
    this.instances = new Map();  // instanceId -> instance
    this.instList = [];          // instances in start order (timeline)
    this.rootId = null;          // the run's agent node, default parent
    this.holds = new Map();      // open pauseId -> instance
    this.runFinished = false;    // no instance is paused once the run finished
    this.seen = new Set();       // applied seqs beyond the bitmap
    this.seenBits = new Uint8Array(1024); // applied seqs (bitmap)
    this.eventCount = 0;
    this.info = { app: '', name: '', status: 'running', startedAt: null, finishedAt: null, error: null };
    this.minTs = Infinity;
    this.maxTs = 0;
    this.structureDirty = false; // a reparent happened: layout must be recomputed
    this.added = [];             // nodes created since the layout last looked
    this.gaps = [];
    this.tokensIn = 0;
    this.tokensOut = 0;
    this.version = 0;
  }

  /** Applies one stored envelope. Returns true when it changed the model. */
  apply(ev) {
    if (!ev || typeof ev !== 'object') return false;
    const seq = ev.seq;
    if (typeof seq === 'number') {
      if (seq >= 0 && seq < 1 << 26) {
        // A bitmap for ordinary sequence numbers; a Set for huge ones.
        const i = seq >> 3, bit = 1 << (seq & 7);
        if (i >= this.seenBits.length) {
          const grown = new Uint8Array(Math.max(i + 1, this.seenBits.length * 2));
          grown.set(this.seenBits);
          this.seenBits = grown;
        }
        if (this.seenBits[i] & bit) return false;
        this.seenBits[i] |= bit;
      } else {
        if (this.seen.has(seq)) return false;
        this.seen.add(seq);
      }
    }
    this.eventCount++;
    const ts = typeof ev.ts === 'number' ? ev.ts : Date.now();
    if (ts < this.minTs) this.minTs = ts;
    if (ts > this.maxTs) this.maxTs = ts;
    const p = ev.payload && typeof ev.payload === 'object' ? ev.payload : {};
    this.version++;
    switch (ev.type) {
      case 'run.started': {
        this.info.app = p.app || this.info.app;
        this.info.name = (p.meta && p.meta.name) || p.name || this.info.name;
        this.info.startedAt = ts;
        this.info.status = 'running';
        return true;
      }
      case 'run.finished': {
        this.info.status = p.status || 'ok';
        this.info.finishedAt = ts;
        if (p.error) this.info.error = p.error;
        if (!this.runFinished) {
          this.runFinished = true;
          for (const inst of this.holds.values()) this.restate(inst);
        }
        return true;
      }
      case 'graph.hint': {
        if (p.gap) this.gaps.push(p.gap);
        for (const h of Array.isArray(p.nodes) ? p.nodes : []) {
          if (!h || typeof h.nodeId !== 'string') continue;
          const n = this.ensureNode(h.nodeId, h.parentId, true);
          n.hinted = true;
          if (!n.insts.length) {
            n.placeholder = false;
            if (typeof h.kind === 'string' && h.kind) n.kind = h.kind;
            if (typeof h.name === 'string' && h.name) n.name = h.name;
          }
          this.refresh(n);
        }
        return true;
      }
      case 'node.started': return this.started(p, ts);
      case 'node.finished': return this.finished(p, ts);
      case 'node.error': {
        const inst = this.instanceFor(p, ts);
        if (!inst) return false;
        inst.error = p.error || { name: 'Error', message: '(no detail)' };
        inst.errored = true;
        if (p.heldMs !== undefined) inst.heldMs = p.heldMs;
        inst.node.errors++;
        this.restate(inst);
        return true;
      }
      case 'node.token': {
        const inst = this.instanceFor(p, ts);
        if (!inst) return false;
        for (const d of Array.isArray(p.deltas) ? p.deltas : []) {
          if (!d || typeof d.v !== 'string') continue;
          const ch = d.t || 'text';
          inst.tokens[ch] = (inst.tokens[ch] || '') + d.v;
          if (ch === 'text' || ch === 'reasoning') {
            const tail = inst.node.tokenTail + d.v;
            inst.node.tokenTail = tail.length > TAIL ? tail.slice(-TAIL) : tail;
          }
        }
        inst.tokenVersion = (inst.tokenVersion || 0) + 1;
        inst.node.dirty = true; inst.node.rev++;
        return true;
      }
      case 'exec.paused': {
        if (typeof p.pauseId !== 'string') return false;
        const inst = this.instanceFor(p, ts);
        if (!inst) return false;
        inst.holds.push({ pauseId: p.pauseId, point: p.point, reason: p.reason, since: ts, until: null, action: null });
        inst.openPauses++;
        this.holds.set(p.pauseId, inst);
        this.restate(inst);
        return true;
      }
      case 'exec.resumed': {
        const inst = this.holds.get(p.pauseId);
        if (!inst) return false;
        this.holds.delete(p.pauseId);
        const h = inst.holds.findLast((x) => x.pauseId === p.pauseId);
        if (h) { h.until = ts; h.action = p.action; }
        inst.openPauses = Math.max(0, inst.openPauses - 1);
        this.restate(inst);
        return true;
      }
      default:
        return false;
    }
  }

  started(p, ts) {
    if (typeof p.nodeId !== 'string') return false;
    const node = this.ensureNode(p.nodeId, p.parentId, false);
    node.placeholder = false;
    if (typeof p.kind === 'string' && p.kind) node.kind = p.kind;
    if (typeof p.name === 'string' && p.name) node.name = p.name;
    if (p.collapsed) node.senderCollapsed = true;
    if (!this.rootId && node.kind === 'agent' && !node.parent) this.rootId = node.id;
    const id = typeof p.instanceId === 'string' ? p.instanceId : `${p.nodeId}#${node.insts.length + 1}`;
    // A second node.started for a known instance (a retry) reuses it.
    const inst = this.instanceOf(node, id) || this.newInstance(id, node, ts);
    if (p.input !== undefined) inst.input = p.input;
    if (p.redaction) inst.redaction = p.redaction;
    this.refresh(node);
    return true;
  }

  finished(p, ts) {
    const inst = this.instanceFor(p, ts);
    if (!inst) return false;
    inst.end = ts;
    inst.finalStatus = typeof p.status === 'string' && p.status ? p.status : 'ok';
    if (inst.finalStatus === 'ok') inst.errored = false; // recovered: a retry succeeded or a value was injected
    if (typeof p.durationMs === 'number') inst.durationMs = p.durationMs;
    if (typeof p.heldMs === 'number') inst.heldMs = p.heldMs;
    if (p.output !== undefined) inst.output = p.output;
    if (p.usage) {
      if (inst.usage && !inst.usage.inclusive) { this.tokensIn -= inst.usage.inputTokens || 0; this.tokensOut -= inst.usage.outputTokens || 0; }
      inst.usage = p.usage;
      if (!p.usage.inclusive) { this.tokensIn += p.usage.inputTokens || 0; this.tokensOut += p.usage.outputTokens || 0; }
    }
    if (p.injected) inst.injected = true;
    if (p.recoveredFromError) inst.recovered = true;
    this.restate(inst);
    return true;
  }

  newInstance(id, node, ts) {
    const inst = {
      id, node, status: 'running', start: ts, end: null, durationMs: null, heldMs: null,
      input: undefined, output: undefined, error: null, usage: null, tokens: {}, holds: [],
      index: this.instList.length, finalStatus: null, errored: false, openPauses: 0,
    };
    if (!this.instances.has(id)) this.instances.set(id, inst);
    this.instList.push(inst);
    node.insts.push(inst);
    node.running++;
    this.refresh(node);
    return inst;
  }

  /** The instance `id` of `node`, or null. */
  instanceOf(node, id) {
    const found = this.instances.get(id);
    if (found && found.node === node) return found;
    for (let i = node.insts.length - 1; i >= 0; i--) if (node.insts[i].id === id) return node.insts[i];
    return null;
  }

  /** An instance's state: finished → how it ended; held (run open) → paused; failed → error. */
  stateOf(inst) {
    if (inst.end !== null) return inst.finalStatus;
    if (inst.openPauses > 0 && !this.runFinished) return 'paused';
    return inst.errored ? 'error' : 'running';
  }

  /** Recomputes an instance's state and its node's counts after it changed. */
  restate(inst) {
    const node = inst.node;
    const before = inst.status;
    const after = this.stateOf(inst);
    if (before !== after) {
      if (before === 'running') node.running--;
      else if (before === 'paused') node.paused--;
      if (after === 'running') node.running++;
      else if (after === 'paused') node.paused++;
      inst.status = after;
    }
    this.refresh(node);
  }

  /**
   * The instance an event other than node.started refers to: the one with its
   * instanceId (made if unknown), else the latest unfinished one, else the
   * latest one, else a new one (its node.started was never seen).
   */
  instanceFor(p, ts) {
    if (typeof p.nodeId !== 'string') return null;
    const node = this.ensureNode(p.nodeId, undefined, false);
    if (typeof p.instanceId === 'string') return this.instanceOf(node, p.instanceId) || this.newInstance(p.instanceId, node, ts);
    for (let i = node.insts.length - 1; i >= 0; i--) if (node.insts[i].end === null) return node.insts[i];
    if (node.insts.length) return node.insts[node.insts.length - 1];
    return this.newInstance(`${p.nodeId}#1`, node, ts);
  }

  /** Finds or creates a node; `hinted` marks one known only from graph.hint. */
  ensureNode(nodeId, parentId, hinted) {
    let node = this.nodes.get(nodeId);
    const explicit = typeof parentId === 'string' && parentId && parentId !== nodeId;
    if (node) {
      // The first explicit parent wins; it replaces the root-agent default.
      if (explicit && !node.explicitParent) {
        const np = this.ensureNode(parentId, undefined, hinted);
        if (!this.isAncestor(node, np)) {
          if (node.parent !== np) this.reparent(node, np);
          node.explicitParent = true;
        }
      }
      return node;
    }
    const colon = nodeId.indexOf(':');
    node = {
      id: nodeId,
      kind: colon > 0 ? nodeId.slice(0, colon) : 'custom',
      name: colon > 0 ? nodeId.slice(colon + 1) : nodeId,
      parent: null, parentId: null, explicitParent: false, children: [], depth: 0,
      insts: [], running: 0, paused: 0, errors: 0, status: hinted ? 'hinted' : 'pending',
      hinted, placeholder: !hinted, desc: 0, folded: false, tokenTail: "", dirty: true, rev: 0,
      x: 0, y: 0, placed: false, seq: this.order.length,
    };
    this.nodes.set(nodeId, node);
    this.order.push(node);
    let parent = null;
    if (explicit) parent = this.ensureNode(parentId, undefined, hinted);
    else if (this.rootId && this.rootId !== nodeId) parent = this.nodes.get(this.rootId);
    if (parent) {
      node.explicitParent = explicit;
      this.attach(node, parent);
    } else {
      this.roots.push(node);
    }
    this.added.push(node);
    return node;
  }

  attach(node, parent) {
    node.parent = parent;
    node.parentId = parent.id;
    node.depth = parent.depth + 1;
    parent.children.push(node);
    for (let a = parent; a; a = a.parent) a.desc += 1 + node.desc;
  }

  reparent(node, parent) {
    if (node.parent) {
      const old = node.parent;
      old.children.splice(old.children.indexOf(node), 1);
      for (let a = old; a; a = a.parent) a.desc -= 1 + node.desc;
    } else {
      const i = this.roots.indexOf(node);
      if (i >= 0) this.roots.splice(i, 1);
    }
    this.attach(node, parent);
    const fix = (n) => { for (const c of n.children) { c.depth = n.depth + 1; fix(c); } };
    fix(node);
    this.structureDirty = true;
  }

  isAncestor(node, maybeDescendant) {
    for (let a = maybeDescendant; a; a = a.parent) if (a === node) return true;
    return false;
  }

  /** A node's state: paused if an instance is held, else running if one runs, else its latest instance's. */
  refresh(node) {
    if (node.paused > 0) node.status = 'paused';
    else if (node.running > 0) node.status = 'running';
    else if (node.insts.length) node.status = node.insts[node.insts.length - 1].status;
    else node.status = node.hinted ? 'hinted' : 'pending';
    node.dirty = true;
    node.rev++;
  }

  /** Usage summed over every instance (inclusive figures are not added twice). */
  usage() {
    return { inputTokens: this.tokensIn, outputTokens: this.tokensOut };
  }
}
