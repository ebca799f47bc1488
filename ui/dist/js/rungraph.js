// The page's copy of one run's graph: a plain container of nodes and
// instances that the views (graph, layout, timeline, inspector) draw. It folds
// no events and applies no run-graph rule: the server projection
// (store::projection, rules in docs/run-graph.md) builds the graph, and
// graphdelta.js copies its snapshot and deltas in here.

/** One run's nodes and instances, as the server projection last sent them. */
export class RunGraph {
  constructor(runId) {
    this.runId = runId;
    this.nodes = new Map();      // nodeId -> node
    this.order = [];             // nodes in graph order (layout order)
    this.roots = [];             // nodes without parent
    this.instances = new Map();  // instanceId -> instance (the first with that id)
    this.instList = [];          // instances in arrival order (timeline)
    this.lastSeq = null;         // seq of the last event the graph reflects
    this.eventCount = 0;
    this.times = { heldMs: 0, workMs: null }; // the run's held and work time (the server's)
    // Name, status and times of the run (from the run list, not from the graph).
    this.info = { app: '', name: '', status: 'running', startedAt: null, finishedAt: null };
    this.minTs = Infinity;
    this.maxTs = 0;
    this.structureDirty = false; // a reparent happened: layout must be recomputed
    this.added = [];             // nodes created since the layout last looked
    this.version = 0;
  }

  /** The run's token usage: the run summary's (the core computes it once), never summed here. */
  usage() {
    return (this.summary && this.summary.usage) || {};
  }

  /** The instance `id` of `node`, or null. */
  instanceOf(node, id) {
    const found = this.instances.get(id);
    if (found && found.node === node) return found;
    for (let i = node.insts.length - 1; i >= 0; i--) if (node.insts[i].id === id) return node.insts[i];
    return null;
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
}
