// Task graph of a coding-agent session (the JSON of /task-graph/api/task) drawn on a
// <canvas>: the task on top, one column (lane) per phase, its LLM steps stacked in order
// and each step's tools indented under it. Boxes fold by `contains` (a phase hides its
// steps, a step its tools). The critical path is drawn as a thick amber line through its
// nodes; failed nodes get a red frame and ✕, retried ones a ↻N badge.

export const COL_W = 260;
/** A lane's width when one turn is shown alone (names get room). */
export const TURN_COL_W = 560;
const COL_GAP = 36;
const PAD = 20;
const TASK_H = 40;
const PHASE_H = 44;
const STEP_H = 30;
const TOOL_H = 26;
const ROW_GAP = 6;
const INDENT = 18;
/** Above this many nodes a graph opens with every step folded. */
export const FOLD_STEPS_OVER = 600;

const TYPE_LABEL = { task: 'task', phase: 'turn', agent: 'LLM', tool: 'tool', skill: 'skill', subagent: 'subagent', code: 'code', test: 'test', plan: 'plan' };

/** Hit-test grid cell size (layout pixels). */
const CELL = 256;

/**
 * Applies a `delta` of /task-graph/api/live to `graph` in place: nodes and edges replaced by
 * index (an index equal to the length appends; a node's event ids spliced when it says
 * `event_ids_keep`), lists cut to the delta's counts, every other top-level field replaced.
 * Returns the graph.
 */
export function applyDelta(graph, d) {
  const put = (list, index, items) => {
    for (let k = 0; k < index.length; k++) list[index[k]] = items[k];
  };
  graph.nodes = graph.nodes || [];
  graph.edges = graph.edges || [];
  // A node with `event_ids_keep: n` keeps the first n event ids it had and appends the given ones.
  const nodes = (d.nodes || []).map((n, k) => {
    if (!Number.isInteger(n.event_ids_keep)) return n;
    const { event_ids_keep: keep, ...node } = n;
    const had = graph.nodes[d.node_index[k]]?.event_ids || [];
    node.event_ids = had.slice(0, keep).concat(n.event_ids || []);
    return node;
  });
  put(graph.nodes, d.node_index || [], nodes);
  put(graph.edges, d.edge_index || [], d.edges || []);
  if (Number.isInteger(d.node_count)) graph.nodes.length = d.node_count;
  if (Number.isInteger(d.edge_count)) graph.edges.length = d.edge_count;
  // `fields` holds the changed top-level fields; its `summary` only the summary's changed keys.
  const { summary, ...fields } = d.fields || {};
  Object.assign(graph, fields);
  if (summary) graph.summary = Object.assign(graph.summary || {}, summary);
  // The critical path as a splice: keep the first `keep[list]` ids of each list, append the rest.
  const cp = d.critical_path;
  if (cp) {
    const path = graph.critical_path || (graph.critical_path = {});
    for (const k of ['node_ids', 'hot_node_ids', 'edge_ids']) {
      const list = path[k] || [];
      list.length = Math.min(list.length, cp.keep?.[k] ?? 0);
      for (const id of cp[k] || []) list.push(id);
      path[k] = list;
    }
    path.duration_ms = cp.duration_ms;
    path.total_ms = cp.total_ms;
    path.waiting = cp.waiting || [];
    path.waiting_ms = cp.waiting_ms || 0;
  }
  return graph;
}

/** Retried nodes: more than one attempt, or a `retries` self-edge. */
export function retriedIds(graph) {
  const ids = new Set();
  for (const e of graph.edges || []) if (e.type === 'retries') ids.add(e.source);
  for (const r of graph.summary?.retried_steps || []) ids.add(r.id);
  for (const n of graph.nodes || []) if ((n.meta?.attempts?.length || 0) > 1) ids.add(n.id);
  return ids;
}

/**
 * Lays the graph out. `collapsed` holds ids of folded phases/steps. Returns
 * { boxes, byId, width, height, hidden } where each box is
 * { id, node, x, y, w, h, depth, hiddenCount, parentBox }.
 */
export function layoutTaskGraph(graph, collapsed, colW = COL_W) {
  const nodes = graph.nodes || [];
  const byNode = new Map(nodes.map((n) => [n.id, n]));
  const children = new Map();
  for (const n of nodes) {
    if (n.parent_id === null || n.parent_id === undefined) continue;
    const p = byNode.has(n.parent_id) ? n.parent_id : 'task';
    if (!children.has(p)) children.set(p, []);
    children.get(p).push(n);
  }
  const countBelow = (id) => {
    let c = 0;
    const stack = [...(children.get(id) || [])];
    while (stack.length) {
      const n = stack.pop();
      c++;
      for (const k of children.get(n.id) || []) stack.push(k);
    }
    return c;
  };
  const boxes = [];
  const byId = new Map();
  const hidden = new Map(); // hidden node id -> visible ancestor box id
  const task = byNode.get('task') || nodes.find((n) => n.type === 'task');
  const top = task ? (children.get(task.id) || []) : [];
  const phases = top.filter((n) => n.type === 'phase');
  const loose = top.filter((n) => n.type !== 'phase');
  const lanes = loose.length ? [{ header: null, items: loose }, ...phases.map((p) => ({ header: p }))] : phases.map((p) => ({ header: p }));
  const laneY = PAD + TASK_H + 28;
  let maxY = laneY;
  lanes.forEach((lane, i) => {
    const x = PAD + i * (colW + COL_GAP);
    let y = laneY;
    let headerBox = null;
    if (lane.header) {
      const p = lane.header;
      headerBox = { id: p.id, node: p, x, y, w: colW, h: PHASE_H, depth: 1, hiddenCount: 0, parentBox: task?.id || null };
      boxes.push(headerBox);
      byId.set(p.id, headerBox);
      y += PHASE_H + ROW_GAP + 4;
    }
    const items = lane.header ? (children.get(lane.header.id) || []) : lane.items;
    if (headerBox && collapsed.has(headerBox.id)) {
      headerBox.hiddenCount = countBelow(headerBox.id);
      const hide = (id) => { for (const k of children.get(id) || []) { hidden.set(k.id, headerBox.id); hide(k.id); } };
      hide(headerBox.id);
      maxY = Math.max(maxY, y);
      return;
    }
    const place = (n, depth, parentId) => {
      const indent = (depth - 2) * INDENT;
      const h = depth <= 2 ? STEP_H : TOOL_H;
      const b = { id: n.id, node: n, x: x + indent, y, w: colW - indent, h, depth, hiddenCount: 0, parentBox: parentId };
      boxes.push(b);
      byId.set(n.id, b);
      y += h + ROW_GAP;
      const kids = children.get(n.id) || [];
      if (!kids.length) return;
      if (collapsed.has(n.id)) {
        b.hiddenCount = countBelow(n.id);
        const hide = (id) => { for (const k of children.get(id) || []) { hidden.set(k.id, n.id); hide(k.id); } };
        hide(n.id);
        return;
      }
      for (const k of kids) place(k, Math.min(depth + 1, 4), n.id);
    };
    for (const n of items) place(n, 2, lane.header ? lane.header.id : task?.id || null);
    maxY = Math.max(maxY, y);
  });
  const width = PAD * 2 + Math.max(1, lanes.length) * (colW + COL_GAP) - COL_GAP;
  if (task) {
    const b = { id: task.id, node: task, x: PAD, y: PAD, w: Math.max(colW, Math.min(width - PAD * 2, 640)), h: TASK_H, depth: 0, hiddenCount: 0, parentBox: null };
    boxes.unshift(b);
    byId.set(task.id, b);
  }
  // Hit index: boxes by grid cell, so a pointer looks at a handful of boxes, not all.
  const grid = new Map();
  boxes.forEach((b, i) => {
    for (let cx = Math.floor(b.x / CELL); cx <= Math.floor((b.x + b.w) / CELL); cx++) {
      for (let cy = Math.floor(b.y / CELL); cy <= Math.floor((b.y + b.h) / CELL); cy++) {
        const key = `${cx},${cy}`;
        let cell = grid.get(key);
        if (!cell) grid.set(key, (cell = []));
        cell.push(i);
      }
    }
  });
  const parents = new Set(children.keys());
  return { boxes, byId, width, height: maxY + PAD, hidden, grid, parents, laneY, colW };
}

/** The box standing for `id`: its own, or the folded ancestor hiding it. */
export function visibleBox(layout, id) {
  return layout.byId.get(id) || layout.byId.get(layout.hidden.get(id));
}

function css(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

/** The theme's colours, read once per theme (a read right after a route's DOM changes restyled the page at once). */
let themeColors = null;
// The module is also imported outside a page (the layout tests run under Node).
globalThis.window?.addEventListener('mindgate:theme', () => { themeColors = null; });

export class TaskGraphView {
  /** `single`: one turn shown alone (a wide lane, fitted to the width at readable size). */
  constructor(host, { onSelect, single = false } = {}) {
    this.host = host;
    this.single = single;
    this.onSelect = onSelect || (() => {});
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'tg-canvas';
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute('role', 'img');
    this.canvas.setAttribute('aria-label', 'Task graph');
    this.canvas.setAttribute('aria-keyshortcuts', 'j k h l Enter Space');
    this.canvas.title = 'Keys: j / k next / previous node, h / l previous / next turn, Enter open, Space fold, arrows pan, + / - zoom, f fit';
    this.announce = document.createElement('div');
    this.announce.className = 'sr-only';
    this.announce.setAttribute('aria-live', 'polite');
    host.append(this.canvas, this.announce);
    this.canvas.addEventListener('focus', () => { if (!this.focused && this.layout?.boxes.length) this.focusBox(this.layout.boxes[0].id); else this.draw(); });
    this.canvas.addEventListener('blur', () => this.draw());
    this.graph = null;
    this.layout = null;
    this.collapsed = new Set();
    this.selected = null;
    this.tx = 0; this.ty = 0; this.scale = 1;
    this.critical = new Set();
    this.hot = new Set();
    this.retried = new Set();
    this.frame = 0;
    this.readTheme();
    this.bind();
    this.ro = new ResizeObserver(() => this.resize());
    this.ro.observe(host);
    this.onTheme = () => { this.readTheme(); this.draw(); };
    window.addEventListener('mindgate:theme', this.onTheme);
  }

  readTheme() {
    this.colors = themeColors ??= {
      bg: css('--canvas-bg') || '#f3f4f7', card: css('--card') || '#fff', text: css('--text') || '#111', muted: css('--muted') || '#666',
      border: css('--border') || '#ddd', edge: css('--edge') || '#aaa', accent: css('--accent') || '#55d',
      ok: css('--st-ok') || 'green', err: css('--st-error') || 'red', run: css('--st-running') || 'blue', retry: css('--st-paused') || 'orange',
      cancel: css('--st-aborted') || 'brown', idle: css('--st-hinted') || 'grey', crit: '#f29d0c',
    };
  }

  statusColor(s) {
    const c = this.colors;
    return { SUCCESS: c.ok, FAILED: c.err, RUNNING: c.run, RETRYING: c.retry, CANCELLED: c.cancel }[s] || c.idle;
  }

  /** Replaces the graph (first load or a live update); keeps folds, selection and view. */
  setGraph(graph) {
    const first = !this.graph || this.graph.session_id !== graph.session_id;
    this.graph = graph;
    if (first) {
      this.collapsed = new Set();
      if ((graph.nodes || []).length > FOLD_STEPS_OVER) {
        for (const n of graph.nodes) if (n.type === 'agent') this.collapsed.add(n.id);
      }
    }
    this.critical = new Set(graph.critical_path?.node_ids || []);
    this.hot = new Set(graph.critical_path?.hot_node_ids || []);
    this.retried = retriedIds(graph);
    this.relayout();
    // A graph set before the view knows its size (a turn loaded ahead arrives before the
    // first layout) is fitted when the size comes.
    if (first && !this.w) this.fitPending = true;
    else if (first) this.fit();
    else this.draw();
  }

  relayout() {
    this.layout = this.graph ? layoutTaskGraph(this.graph, this.collapsed, this.single ? TURN_COL_W : COL_W) : null;
  }

  toggle(id) {
    if (this.collapsed.has(id)) this.collapsed.delete(id); else this.collapsed.add(id);
    this.relayout();
    this.draw();
  }

  setAllSteps(folded) {
    if (!this.graph) return;
    for (const n of this.graph.nodes) {
      if (n.type !== 'agent') continue;
      if (folded) this.collapsed.add(n.id); else this.collapsed.delete(n.id);
    }
    if (!folded) for (const n of this.graph.nodes) if (n.type === 'phase') this.collapsed.delete(n.id);
    this.relayout();
    this.draw();
  }

  select(id) {
    this.selected = id;
    this.draw();
  }

  resize() {
    const r = this.host.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    this.w = Math.max(1, r.width);
    this.h = Math.max(1, r.height);
    this.canvas.width = Math.round(this.w * dpr);
    this.canvas.height = Math.round(this.h * dpr);
    this.canvas.style.width = `${this.w}px`;
    this.canvas.style.height = `${this.h}px`;
    this.dpr = dpr;
    if (this.fitPending && this.layout) {
      this.fitPending = false;
      this.fit();
    } else {
      this.draw();
    }
  }

  fit() {
    if (!this.layout || !this.w) { this.draw(); return; }
    if (this.single) {
      // One turn: its width at full size (text stays readable), scrolled from the top.
      this.scale = Math.min(1, this.w / (this.layout.width + 20));
      this.tx = Math.max(0, (this.w - this.layout.width * this.scale) / 2);
      this.ty = 0;
      this.draw();
      return;
    }
    const s = Math.min(1, this.w / this.layout.width, Math.max(0.35, this.h / this.layout.height));
    this.scale = Math.max(0.35, s);
    this.tx = 0;
    this.ty = 0;
    this.draw();
  }

  zoom(f, cx = this.w / 2, cy = this.h / 2) {
    const s = Math.min(2.5, Math.max(0.2, this.scale * f));
    this.tx = cx - (cx - this.tx) * (s / this.scale);
    this.ty = cy - (cy - this.ty) * (s / this.scale);
    this.scale = s;
    this.draw();
  }

  bind() {
    const c = this.canvas;
    let drag = null;
    c.addEventListener('pointerdown', (e) => {
      drag = { x: e.clientX, y: e.clientY, tx: this.tx, ty: this.ty, moved: false };
      c.setPointerCapture(e.pointerId);
    });
    c.addEventListener('pointermove', (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x;
      const dy = e.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 4) drag.moved = true;
      if (drag.moved) { this.tx = drag.tx + dx; this.ty = drag.ty + dy; this.draw(); }
    });
    c.addEventListener('pointerup', (e) => {
      const d = drag;
      drag = null;
      if (!d || d.moved) return;
      const r = c.getBoundingClientRect();
      const hit = this.hit(e.clientX - r.left, e.clientY - r.top);
      if (!hit) return;
      if (hit.toggle) this.toggle(hit.box.id);
      else { this.select(hit.box.id); this.onSelect(hit.box.id); }
    });
    c.addEventListener('dblclick', (e) => {
      const r = c.getBoundingClientRect();
      const hit = this.hit(e.clientX - r.left, e.clientY - r.top);
      if (hit && (hit.box.hiddenCount || this.hasChildren(hit.box.id))) this.toggle(hit.box.id);
    });
    c.addEventListener('wheel', (e) => {
      e.preventDefault();
      if (e.ctrlKey || e.metaKey) {
        const r = c.getBoundingClientRect();
        this.zoom(e.deltaY < 0 ? 1.1 : 1 / 1.1, e.clientX - r.left, e.clientY - r.top);
      } else {
        this.tx -= e.shiftKey ? e.deltaY : e.deltaX;
        this.ty -= e.shiftKey ? 0 : e.deltaY;
        this.draw();
      }
    }, { passive: false });
    c.addEventListener('keydown', (e) => {
      const step = 60;
      // Nodes: j/k (or Tab-free ] / [) walk the boxes, h/l the lanes, Enter opens, Space folds.
      if (e.key === 'j' || e.key === ']') { e.preventDefault(); return this.moveFocus(1); }
      if (e.key === 'k' || e.key === '[') { e.preventDefault(); return this.moveFocus(-1); }
      if (e.key === 'l') { e.preventDefault(); return this.moveFocus(1, true); }
      if (e.key === 'h') { e.preventDefault(); return this.moveFocus(-1, true); }
      if (e.key === 'Enter' && this.focused) {
        e.preventDefault();
        this.select(this.focused);
        return this.onSelect(this.focused);
      }
      if (e.key === ' ' && this.focused) {
        e.preventDefault();
        const b = this.layout?.byId.get(this.focused);
        if (b && b.depth > 0 && (b.hiddenCount || this.hasChildren(b.id))) this.toggle(b.id);
        return;
      }
      if (e.key === 'ArrowLeft') this.tx += step;
      else if (e.key === 'ArrowRight') this.tx -= step;
      else if (e.key === 'ArrowUp') this.ty += step;
      else if (e.key === 'ArrowDown') this.ty -= step;
      else if (e.key === '+' || e.key === '=') return this.zoom(1.2);
      else if (e.key === '-') return this.zoom(1 / 1.2);
      else if (e.key === 'f') return this.fit();
      else return;
      e.preventDefault();
      this.draw();
    });
  }

  hasChildren(id) {
    return this.layout ? this.layout.parents.has(id) : false;
  }

  /** Hit test in canvas pixels: { box, toggle } or null (looks only at the pointer's cell). */
  hit(px, py) {
    if (!this.layout) return null;
    const x = (px - this.tx) / this.scale;
    const y = (py - this.ty) / this.scale;
    const cell = this.layout.grid.get(`${Math.floor(x / CELL)},${Math.floor(y / CELL)}`) || [];
    for (let k = cell.length - 1; k >= 0; k--) {
      const b = this.layout.boxes[cell[k]];
      if (x >= b.x && x <= b.x + b.w && y >= b.y && y <= b.y + b.h) {
        const foldable = b.depth > 0 && (b.hiddenCount > 0 || this.hasChildren(b.id));
        return { box: b, toggle: foldable && x <= b.x + 16 };
      }
    }
    return null;
  }

  /**
   * Keyboard focus: the box after (`dir` 1) or before (-1) the focused one in lane order,
   * or the first box of the next/previous lane (`lane` true). Scrolls it into view.
   */
  moveFocus(dir, lane = false) {
    const L = this.layout;
    if (!L || !L.boxes.length) return;
    const cur = L.byId.get(this.focused) || visibleBox(L, this.focused);
    let i = cur ? L.boxes.indexOf(cur) : -1;
    if (i < 0) {
      i = 0;
    } else if (lane) {
      const x = cur.x;
      const next = dir > 0
        ? L.boxes.find((b) => b.depth === 1 && b.x > x + 1)
        : [...L.boxes].reverse().find((b) => b.depth === 1 && b.x + L.colW < x);
      if (next) i = L.boxes.indexOf(next);
    } else {
      i = Math.min(L.boxes.length - 1, Math.max(0, i + dir));
    }
    this.focusBox(L.boxes[i].id);
  }

  /** Gives `id` the keyboard focus ring, announces it and scrolls it into view. */
  focusBox(id) {
    const b = this.layout?.byId.get(id);
    if (!b) return;
    this.focused = id;
    const n = b.node;
    this.announce.textContent = `${TYPE_LABEL[n.type] || n.type} ${n.name || n.id}, ${n.status}, ${fmtMs(n.duration_ms)}`;
    const sx = this.tx + b.x * this.scale;
    const sy = this.ty + b.y * this.scale;
    if (sx < 0 || sx + b.w * this.scale > this.w) this.tx = Math.min(0, PAD - b.x * this.scale);
    if (sy < 0 || sy + b.h * this.scale > this.h) this.ty = this.h / 3 - b.y * this.scale;
    this.draw();
  }

  /** Drawn boxes in page coordinates (test hook). */
  boxes() {
    if (!this.layout) return [];
    const r = this.canvas.getBoundingClientRect();
    return this.layout.boxes.map((b) => ({
      id: b.id, name: b.node.name, type: b.node.type, status: b.node.status,
      critical: this.critical.has(b.id), hot: this.hot.has(b.id), retried: this.retried.has(b.id),
      failed: b.node.status === 'FAILED', folded: b.hiddenCount, selected: this.selected === b.id, focused: this.focused === b.id,
      x: r.left + this.tx + b.x * this.scale, y: r.top + this.ty + b.y * this.scale, w: b.w * this.scale, h: b.h * this.scale,
    }));
  }

  /** The lines last drawn (edges and the critical path) as polylines in page coordinates (test hook). */
  edgeLines() {
    const r = this.canvas.getBoundingClientRect();
    const at = ([x, y]) => [r.left + this.tx + x * this.scale, r.top + this.ty + y * this.scale];
    return (this.drawnEdges || []).map((e) => ({ ...e, pts: e.pts.map(at) }));
  }

  draw() {
    if (this.pending) return;
    this.pending = requestAnimationFrame(() => { this.pending = 0; this.paint(); });
  }

  paint() {
    const ctx = this.canvas.getContext('2d');
    if (!ctx || !this.w) return;
    const c = this.colors;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.fillStyle = c.bg;
    ctx.fillRect(0, 0, this.w, this.h);
    this.frame++;
    this.canvas.dataset.frame = String(this.frame);
    if (!this.layout) return;
    ctx.setTransform(this.dpr * this.scale, 0, 0, this.dpr * this.scale, this.dpr * this.tx, this.dpr * this.ty);
    const view = { x0: -this.tx / this.scale, y0: -this.ty / this.scale, x1: (this.w - this.tx) / this.scale, y1: (this.h - this.ty) / this.scale };
    const visible = (b) => b.x + b.w >= view.x0 && b.x <= view.x1 && b.y + b.h >= view.y0 && b.y <= view.y1;
    this.paintEdges(ctx, visible);
    ctx.textBaseline = 'middle';
    for (const b of this.layout.boxes) if (visible(b)) this.paintBox(ctx, b);
  }

  paintEdges(ctx, visible) {
    const L = this.layout;
    const c = this.colors;
    /** The lines drawn, as polylines in layout coordinates (`edgeLines()`, a test hook). */
    const drawn = (this.drawnEdges = []);
    ctx.lineWidth = 1.2;
    ctx.strokeStyle = c.edge;
    // contains: a spine from each parent down its children's left edges.
    for (const b of L.boxes) {
      if (!b.parentBox || b.depth < 3) continue;
      const p = L.byId.get(b.parentBox);
      if (!p || (!visible(b) && !visible(p))) continue;
      ctx.beginPath();
      ctx.moveTo(p.x + 8, p.y + p.h);
      ctx.lineTo(p.x + 8, b.y + b.h / 2);
      ctx.lineTo(b.x, b.y + b.h / 2);
      ctx.stroke();
      drawn.push({ kind: 'contains', from: p.id, to: b.id, pts: [[p.x + 8, p.y + p.h], [p.x + 8, b.y + b.h / 2], [b.x, b.y + b.h / 2]] });
    }
    // depends_on between phases: arrows header to header.
    for (const e of this.graph.edges || []) {
      if (e.type !== 'depends_on') continue;
      const a = L.byId.get(e.source);
      const t = L.byId.get(e.target);
      if (!a || !t || a.node.type !== 'phase' || t.node.type !== 'phase') continue;
      drawn.push({ kind: 'depends_on', from: a.id, to: t.id, pts: this.arrow(ctx, a.x + a.w, a.y + a.h / 2, t.x, t.y + t.h / 2) });
    }
    // The critical path, routed around the boxes: a line in the gutter right of each lane,
    // a short tick into each path box, and between lanes a hop through the free band above
    // the lanes — never a diagonal through boxes.
    const ids = this.graph.critical_path?.node_ids || [];
    const pts = [];
    for (const id of ids) {
      const b = visibleBox(L, id);
      if (!b || b.depth === 0) continue;
      const last = pts[pts.length - 1];
      if (last && last.b === b) continue;
      pts.push({ b, gx: b.x + b.w + 9, y: b.y + b.h / 2 });
    }
    if (pts.length) {
      const band = L.laneY - 14;
      ctx.save();
      ctx.strokeStyle = c.crit;
      ctx.globalAlpha = 0.9;
      ctx.lineWidth = 3;
      ctx.lineJoin = 'round';
      ctx.beginPath();
      const line = [];
      const to = (x, y) => { ctx.lineTo(x, y); line.push([x, y]); };
      pts.forEach((p, k) => {
        const prev = pts[k - 1];
        if (!prev) { ctx.moveTo(p.gx, p.y); line.push([p.gx, p.y]); }
        else if (Math.abs(prev.gx - p.gx) < 1) to(p.gx, p.y);
        else { to(prev.gx, band); to(p.gx, band); to(p.gx, p.y); }
      });
      ctx.stroke();
      drawn.push({ kind: 'critical_path', pts: line });
      ctx.lineWidth = 2;
      ctx.beginPath();
      for (const p of pts) {
        ctx.moveTo(p.b.x + p.b.w + 2, p.y);
        ctx.lineTo(p.gx, p.y);
        drawn.push({ kind: 'critical_tick', to: p.b.id, pts: [[p.b.x + p.b.w + 2, p.y], [p.gx, p.y]] });
      }
      ctx.stroke();
      ctx.restore();
    }
  }

  /** Draws an arrow from (x0, y0) to (x1, y1); returns the curve as points. */
  arrow(ctx, x0, y0, x1, y1) {
    ctx.beginPath();
    ctx.moveTo(x0, y0);
    const mx = (x0 + x1) / 2;
    ctx.bezierCurveTo(mx, y0, mx, y1, x1, y1);
    ctx.stroke();
    const pts = [];
    for (let k = 0; k <= 8; k++) {
      const t = k / 8;
      const u = 1 - t;
      const bx = u * u * u * x0 + 3 * u * u * t * mx + 3 * u * t * t * mx + t * t * t * x1;
      const by = u * u * u * y0 + 3 * u * u * t * y0 + 3 * u * t * t * y1 + t * t * t * y1;
      pts.push([bx, by]);
    }
    ctx.beginPath();
    ctx.moveTo(x1, y1);
    ctx.lineTo(x1 - 6, y1 - 4);
    ctx.lineTo(x1 - 6, y1 + 4);
    ctx.closePath();
    ctx.fillStyle = ctx.strokeStyle;
    ctx.fill();
    return pts;
  }

  paintBox(ctx, b) {
    const c = this.colors;
    const n = b.node;
    const crit = this.critical.has(b.id);
    const failed = n.status === 'FAILED';
    const radius = 6;
    ctx.beginPath();
    ctx.roundRect(b.x, b.y, b.w, b.h, radius);
    ctx.fillStyle = b.depth <= 1 ? c.card : c.card;
    ctx.fill();
    ctx.lineWidth = failed ? 2 : 1;
    ctx.strokeStyle = failed ? c.err : c.border;
    if (n.meta?.unclosed) ctx.setLineDash([4, 3]);
    ctx.stroke();
    ctx.setLineDash([]);
    if (crit) {
      ctx.save();
      ctx.lineWidth = this.hot.has(b.id) ? 3 : 2;
      ctx.strokeStyle = c.crit;
      ctx.beginPath();
      ctx.roundRect(b.x - 2, b.y - 2, b.w + 4, b.h + 4, radius + 2);
      ctx.stroke();
      ctx.restore();
    }
    if (this.selected === b.id || (this.focused === b.id && document.activeElement === this.canvas)) {
      ctx.save();
      ctx.lineWidth = 2;
      ctx.strokeStyle = c.accent;
      if (this.selected !== b.id) ctx.setLineDash([3, 2]);
      ctx.beginPath();
      ctx.roundRect(b.x - 4, b.y - 4, b.w + 8, b.h + 8, radius + 3);
      ctx.stroke();
      ctx.restore();
    }
    // status stripe
    ctx.fillStyle = this.statusColor(n.status);
    ctx.beginPath();
    ctx.roundRect(b.x, b.y, 4, b.h, [radius, 0, 0, radius]);
    ctx.fill();
    const foldable = b.depth > 0 && (b.hiddenCount > 0 || this.hasChildren(b.id));
    let x = b.x + 10;
    const cy = b.y + b.h / 2;
    ctx.font = '11px system-ui, sans-serif';
    if (foldable) {
      ctx.fillStyle = c.muted;
      ctx.fillText(b.hiddenCount ? '▸' : '▾', b.x + 6, cy);
      x = b.x + 17;
    }
    const label = TYPE_LABEL[n.type] || n.type;
    ctx.font = '600 9.5px system-ui, sans-serif';
    const lw = ctx.measureText(label).width + 8;
    ctx.fillStyle = c.border;
    ctx.beginPath();
    ctx.roundRect(x, cy - 7, lw, 14, 3);
    ctx.fill();
    ctx.fillStyle = c.muted;
    ctx.fillText(label, x + 4, cy + 0.5);
    x += lw + 6;
    // right side: duration, badges
    let right = b.x + b.w - 8;
    ctx.font = '11px system-ui, sans-serif';
    ctx.textAlign = 'right';
    const dur = fmtMs(n.duration_ms);
    ctx.fillStyle = c.muted;
    ctx.fillText(dur, right, cy);
    right -= ctx.measureText(dur).width + 6;
    if (b.hiddenCount) {
      const t = `+${b.hiddenCount}`;
      ctx.fillStyle = c.accent;
      ctx.fillText(t, right, cy);
      right -= ctx.measureText(t).width + 6;
    }
    if (this.retried.has(b.id)) {
      const a = n.meta?.attempts?.length;
      const t = a > 1 ? `↻${a}` : '↻';
      ctx.fillStyle = c.retry;
      ctx.fillText(t, right, cy);
      right -= ctx.measureText(t).width + 6;
    }
    if (failed) {
      ctx.fillStyle = c.err;
      ctx.fillText('✕', right, cy);
      right -= 14;
    }
    ctx.textAlign = 'left';
    ctx.fillStyle = c.text;
    ctx.font = `${b.depth <= 1 ? '600 ' : ''}12px system-ui, sans-serif`;
    ctx.fillText(clipText(ctx, n.name || n.id, right - x - 4), x, cy);
  }

  destroy() {
    this.ro.disconnect();
    window.removeEventListener('mindgate:theme', this.onTheme);
    if (this.pending) cancelAnimationFrame(this.pending);
    this.canvas.remove();
  }
}

function clipText(ctx, s, max) {
  s = String(s).replace(/\s+/g, ' ');
  if (max <= 10) return '';
  if (ctx.measureText(s).width <= max) return s;
  let lo = 0;
  let hi = s.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(`${s.slice(0, mid)}…`).width <= max) lo = mid; else hi = mid - 1;
  }
  return `${s.slice(0, lo)}…`;
}

export function fmtMs(ms) {
  if (!Number.isFinite(ms)) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor(s / 60) % 60}m`;
}
