// The logical graph of one run, built incrementally from its event stream.
//
// One node per logical nodeId; every execution is an instance of it. Events
// are applied once each (deduplicated on seq), in any order the feed delivers
// them: a child that names a parent we have not seen yet gets a placeholder
// parent that is filled in when the parent's own event arrives.

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
        return true;
      }
      case 'graph.hint': {
        if (p.gap) this.gaps.push(p.gap);
        for (const h of Array.isArray(p.nodes) ? p.nodes : []) {
          if (!h || typeof h.nodeId !== 'string') continue;
          const n = this.ensureNode(h.nodeId, h.parentId, true);
          if (n.placeholder) {
            n.placeholder = false;
            n.kind = h.kind || n.kind;
            n.name = h.name || n.name;
          }
        }
        return true;
      }
      case 'node.started': return this.started(p, ts);
      case 'node.finished': return this.finished(p, ts);
      case 'node.error': {
        const inst = this.instanceFor(p, ts);
        if (!inst) return false;
        inst.error = p.error || { name: 'Error', message: '(no detail)' };
        inst.status = 'error';
        if (p.heldMs !== undefined) inst.heldMs = p.heldMs;
        inst.node.errors++;
        this.refresh(inst.node);
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
        const node = this.nodes.get(p.nodeId);
        const inst = node ? this.openInstance(node, p.instanceId) : null;
        if (inst) inst.holds.push({ pauseId: p.pauseId, point: p.point, reason: p.reason, since: ts, until: null, action: null });
        return true;
      }
      case 'exec.resumed': {
        for (let i = this.instList.length - 1; i >= 0 && i >= this.instList.length - 200; i--) {
          const h = this.instList[i].holds.find((x) => x.pauseId === p.pauseId);
          if (h) { h.until = ts; h.action = p.action; break; }
        }
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
    node.hinted = false;
    if (p.kind) node.kind = p.kind;
    if (p.name) node.name = p.name;
    if (p.collapsed) node.senderCollapsed = true;
    if (!this.rootId && node.kind === 'agent' && !node.parent) this.rootId = node.id;
    const id = typeof p.instanceId === 'string' ? p.instanceId : `${p.nodeId}#${node.insts.length + 1}`;
    let inst = this.instances.get(id);
    if (!inst) {
      inst = this.newInstance(id, node, ts);
      node.running++;
    }
    if (p.input !== undefined) inst.input = p.input;
    if (p.redaction) inst.redaction = p.redaction;
    this.refresh(node);
    return true;
  }

  finished(p, ts) {
    const inst = this.instanceFor(p, ts);
    if (!inst) return false;
    if (inst.end === null) inst.node.running = Math.max(0, inst.node.running - 1);
    inst.end = ts;
    inst.status = p.status || 'ok';
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
    this.refresh(inst.node);
    return true;
  }

  newInstance(id, node, ts) {
    const inst = {
      id, node, status: 'running', start: ts, end: null, durationMs: null, heldMs: null,
      input: undefined, output: undefined, error: null, usage: null, tokens: {}, holds: [],
      index: this.instList.length,
    };
    this.instances.set(id, inst);
    this.instList.push(inst);
    node.insts.push(inst);
    return inst;
  }

  /** The instance an event refers to: by instanceId, else the most recent open one. */
  instanceFor(p, ts) {
    if (typeof p.instanceId === 'string') {
      const found = this.instances.get(p.instanceId);
      if (found) return found;
    }
    if (typeof p.nodeId !== 'string') return null;
    const node = this.ensureNode(p.nodeId, undefined, false);
    const open = this.openInstance(node, null);
    if (open) return open;
    // Its node.started was never seen (dropped by the client): make one up.
    const id = typeof p.instanceId === 'string' ? p.instanceId : `${p.nodeId}#${node.insts.length + 1}`;
    const inst = this.newInstance(id, node, ts);
    node.running++;
    node.hinted = false;
    return inst;
  }

  openInstance(node, instanceId) {
    if (instanceId && this.instances.has(instanceId)) return this.instances.get(instanceId);
    for (let i = node.insts.length - 1; i >= 0; i--) if (node.insts[i].end === null) return node.insts[i];
    return node.insts.length ? node.insts[node.insts.length - 1] : null;
  }

  /** Finds or creates a node; `hinted` marks one known only from graph.hint. */
  ensureNode(nodeId, parentId, hinted) {
    let node = this.nodes.get(nodeId);
    const explicit = typeof parentId === 'string' && parentId && parentId !== nodeId;
    if (node) {
      if (explicit && node.parentId !== parentId && !node.explicitParent) {
        const np = this.ensureNode(parentId, undefined, hinted);
        if (!this.isAncestor(node, np)) { this.reparent(node, np); node.explicitParent = true; }
      }
      return node;
    }
    const colon = nodeId.indexOf(':');
    node = {
      id: nodeId,
      kind: colon > 0 ? nodeId.slice(0, colon) : 'custom',
      name: colon > 0 ? nodeId.slice(colon + 1) : nodeId,
      parent: null, parentId: null, explicitParent: false, children: [], depth: 0,
      insts: [], running: 0, errors: 0, status: hinted ? 'hinted' : 'pending',
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

  /** Recomputes a node's aggregate status after one of its instances changed. */
  refresh(node) {
    if (node.running > 0) node.status = 'running';
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
