// The run graph on a <canvas>: one box per logical node, edges parent → child.
// Draws only what is in view (binary search per layout column), so a
// 5,000-node run costs about as much per frame as a 50-node one.

import { Layout, BOX_W, BOX_H, COL_W, ROW_H } from './layout.js';
import { el, cssVar, announce } from './dom.js';
import { KIND_GLYPH, fmtDuration } from './format.js';
import { EMBEDDED } from './embedded.js';
import { demoButton, emptyState } from './firststeps.js';

const STATUS_VAR = {
  running: '--st-running', ok: '--st-ok', error: '--st-error', aborted: '--st-aborted',
  paused: '--st-paused', hinted: '--st-hinted', pending: '--st-hinted',
};

export class GraphView {
  constructor(host, store) {
    this.store = store;
    this.host = host;
    this.canvas = el('canvas', {
      class: 'graph-canvas', tabindex: '0', role: 'application',
      'aria-label': 'Run graph. Arrow keys move between nodes, Enter inspects, Space folds, F fits, plus and minus zoom, Shift+F10 opens the node menu.',
    });
    // With no run at all, the empty graph says what would fill it and offers the demo.
    this.emptyFirst = emptyState('graph-empty-first',
      'No runs yet. Run the demo to see a live agent held at its error gate, or connect an app (see the README).',
      demoButton(store));
    this.emptySelect = el('p', { class: 'empty-line', 'data-testid': 'graph-empty-select' }, 'Select a run in the list to see its graph.');
    this.empty = el('div', { class: 'graph-empty' }, this.emptyFirst, this.emptySelect);
    const syncEmpty = () => {
      const none = store.runs.size === 0;
      this.emptyFirst.hidden = !none;
      this.emptySelect.hidden = none;
    };
    store.on('runs', syncEmpty);
    syncEmpty();
    this.progress = el('div', { class: 'graph-progress', hidden: true, role: 'status' });
    this.menu = el('div', { class: 'ctx-menu', role: 'menu', hidden: true, 'aria-label': 'Node actions' });
    host.append(this.canvas, this.empty, this.progress, this.menu);
    this.ctx = this.canvas.getContext('2d');
    this.model = null;
    this.layout = null;
    this.scale = 1; this.tx = 40; this.ty = 40;
    this.selected = null;
    this.hover = null;
    this.pausedIds = new Set();
    this.frameQueued = false;
    this.lastDrawMs = 0;
    this.colors = {};
    this.readTheme();
    this.bind();
    new ResizeObserver(() => this.invalidate()).observe(host);
  }

  readTheme() {
    const c = {};
    for (const [k, v] of Object.entries(STATUS_VAR)) c[k] = cssVar(v) || '#888';
    c.card = cssVar('--card'); c.text = cssVar('--text'); c.muted = cssVar('--muted');
    c.edge = cssVar('--edge'); c.accent = cssVar('--accent'); c.bg = cssVar('--canvas-bg');
    c.kind = cssVar('--kind-bg'); c.badge = cssVar('--badge-bg');
    this.colors = c;
    this.invalidate();
  }

  /** Shows a run model (or none). `fresh` = a newly opened run: fold and fit. */
  setModel(model) {
    this.model = model;
    this.layout = model ? new Layout(model) : null;
    this.selected = null;
    this.hover = null;
    this.opened = false;
    this.empty.hidden = !!model;
    this.hideMenu();
    this.invalidate();
  }

  /**
   * Called when the run's graph has arrived: fold big runs, lay out, fit. A
   * graph that replaces the one shown (a fresh snapshot) keeps its nodes'
   * folds (`keepFolds`) and the camera (`view`).
   */
  open({ keepFolds = false, view = null } = {}) {
    if (!this.layout) return;
    const t0 = performance.now();
    if (!keepFolds) this.layout.autoFold();
    this.layout.full();
    this.opened = true;
    this.progress.hidden = true;
    if (view) ({ scale: this.scale, tx: this.tx, ty: this.ty } = view);
    else this.fitInitial();
    this.drawNow();
    this.lastOpenMs = performance.now() - t0;
  }

  setProgress(text) {
    this.progress.hidden = !text;
    this.progress.textContent = text || '';
  }

  setPaused(ids) { this.pausedIds = ids; this.invalidate(); }

  invalidate() {
    if (this.frameQueued) return;
    this.frameQueued = true;
    requestAnimationFrame(() => { this.frameQueued = false; this.drawNow(); });
  }

  // ---- coordinates -------------------------------------------------------

  toWorld(sx, sy) { return [(sx - this.tx) / this.scale, (sy - this.ty) / this.scale]; }
  toScreen(wx, wy) { return [wx * this.scale + this.tx, wy * this.scale + this.ty]; }

  viewSize() { return [this.canvas.clientWidth || 1, this.canvas.clientHeight || 1]; }

  fitInitial() {
    const [w, h] = this.viewSize();
    const L = this.layout;
    if (!L || !L.placedCount) { this.scale = 1; this.tx = 40; this.ty = 40; return; }
    const s = Math.min((w - 80) / L.maxX, (h - 80) / L.maxY, 1.1);
    this.scale = Math.max(0.5, s);
    this.tx = 40;
    this.ty = 56; // below the run summary overlay
    if (s >= 0.5) { // everything fits: center it
      this.tx = (w - L.maxX * this.scale) / 2;
      this.ty = Math.max(24, (h - L.maxY * this.scale) / 2);
    }
  }

  fit() {
    const [w, h] = this.viewSize();
    const L = this.layout;
    if (!L || !L.placedCount) return;
    this.scale = Math.max(0.02, Math.min((w - 60) / L.maxX, (h - 60) / L.maxY, 1.5));
    this.tx = (w - L.maxX * this.scale) / 2;
    this.ty = (h - L.maxY * this.scale) / 2;
    this.invalidate();
  }

  zoomAt(factor, sx, sy) {
    const ns = Math.min(3, Math.max(0.02, this.scale * factor));
    const [wx, wy] = this.toWorld(sx, sy);
    this.scale = ns;
    this.tx = sx - wx * ns;
    this.ty = sy - wy * ns;
    this.invalidate();
  }

  /** Pans so that `node` is in view, unfolding its ancestors if needed. */
  reveal(node, center = false) {
    if (!node || !this.layout) return;
    let unfolded = false;
    for (let a = node.parent; a; a = a.parent) if (a.folded) { a.folded = false; unfolded = true; }
    if (unfolded || !node.placed) this.layout.full();
    const [w, h] = this.viewSize();
    const [sx, sy] = this.toScreen(node.x, node.y);
    const inView = sx >= 0 && sy >= 0 && sx + BOX_W * this.scale <= w && sy + BOX_H * this.scale <= h;
    if (center || !inView) {
      if (this.scale < 0.5) this.scale = 0.8;
      this.tx = w / 2 - (node.x + BOX_W / 2) * this.scale;
      this.ty = h / 2 - (node.y + BOX_H / 2) * this.scale;
    }
    this.invalidate();
  }

  /** Folds or unfolds a subtree, keeping the toggled box where it is on screen. */
  toggleFold(node) {
    if (!node || !node.children.length) return;
    const [sx, sy] = this.toScreen(node.x, node.y);
    node.folded = !node.folded;
    this.layout.full();
    this.tx = sx - node.x * this.scale;
    this.ty = sy - node.y * this.scale;
    announce(`${node.name} ${node.folded ? 'folded' : 'unfolded'}`);
    this.invalidate();
  }

  // ---- drawing -----------------------------------------------------------

  drawNow() {
    const t0 = performance.now();
    const cv = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const [w, h] = this.viewSize();
    if (cv.width !== Math.round(w * dpr) || cv.height !== Math.round(h * dpr)) {
      cv.width = Math.round(w * dpr);
      cv.height = Math.round(h * dpr);
    }
    const ctx = this.ctx;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = this.colors.bg;
    ctx.fillRect(0, 0, w, h);
    if (!this.model || !this.opened) { this.lastDrawMs = performance.now() - t0; return; }
    this.layout.sync();
    const s = this.scale;
    ctx.setTransform(dpr * s, 0, 0, dpr * s, dpr * this.tx, dpr * this.ty);
    const [x0, y0] = this.toWorld(0, 0);
    const [x1, y1] = this.toWorld(w, h);
    const inView = [];
    this.layout.forEachIn(x0, y0, x1, y1, (n) => inView.push(n));
    this.visibleCount = inView.length;

    // Edges: from every node in view to its parent, and to its placed children.
    ctx.beginPath();
    const edge = (p, c) => {
      const ax = p.x + BOX_W, ay = p.y + BOX_H / 2, bx = c.x, by = c.y + BOX_H / 2;
      ctx.moveTo(ax, ay);
      if (ay === by) ctx.lineTo(bx, by);
      else ctx.bezierCurveTo(ax + 36, ay, bx - 36, by, bx, by);
    };
    for (const n of inView) {
      if (n.parent && n.parent.placed && (n.parent.x + BOX_W < x0 || n.parent.y + BOX_H < y0 || n.parent.y > y1)) edge(n.parent, n);
      if (!n.folded) for (const c of n.children) if (c.placed) edge(n, c);
    }
    ctx.strokeStyle = this.colors.edge;
    ctx.lineWidth = Math.max(1, 1.2 / s);
    ctx.stroke();

    const detail = s >= 0.32;
    for (const n of inView) this.drawBox(n, detail);
    this.lastDrawMs = performance.now() - t0;
  }

  drawBox(n, detail) {
    const ctx = this.ctx, c = this.colors;
    const paused = this.pausedIds.has(n.id);
    const st = paused ? 'paused' : n.status;
    const col = c[st] || c.pending;
    const ghost = st === 'hinted' || st === 'pending';
    if (!detail) {
      ctx.fillStyle = ghost ? c.card : col;
      ctx.fillRect(n.x, n.y, BOX_W, BOX_H);
      if (n === this.selected) { ctx.strokeStyle = c.accent; ctx.lineWidth = 6 / this.scale; ctx.strokeRect(n.x, n.y, BOX_W, BOX_H); }
      return;
    }
    ctx.globalAlpha = ghost ? 0.55 : 1;
    ctx.beginPath();
    ctx.roundRect(n.x, n.y, BOX_W, BOX_H, 7);
    ctx.fillStyle = c.card;
    ctx.fill();
    if (ghost) ctx.setLineDash([5, 4]);
    ctx.lineWidth = paused ? 3 : 1.4;
    ctx.strokeStyle = col;
    ctx.stroke();
    ctx.setLineDash([]);
    // status stripe
    ctx.fillStyle = col;
    ctx.fillRect(n.x + 1, n.y + 6, 4, BOX_H - 12);
    // kind glyph
    ctx.beginPath();
    ctx.arc(n.x + 22, n.y + 17, 10, 0, Math.PI * 2);
    ctx.fillStyle = c.kind;
    ctx.fill();
    ctx.fillStyle = c.text;
    ctx.font = '600 11px system-ui, sans-serif';
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.fillText(KIND_GLYPH[n.kind] || '?', n.x + 22, n.y + 17.5);
    // name
    ctx.textAlign = 'left';
    ctx.font = '600 12.5px system-ui, sans-serif';
    const badge = n.insts.length > 1 ? `×${n.insts.length}` : '';
    const nameMax = BOX_W - 44 - (badge ? 34 : 0);
    const title = n.label || n.name;
    if (n._labelFor !== title) { n._label = this.clipText(title, nameMax); n._labelFor = title; }
    ctx.fillText(n._label, n.x + 38, n.y + 17.5);
    // subtitle: streaming text while running, else a short summary
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillStyle = c.muted;
    let sub;
    if (paused) sub = 'held at a gate';
    else if (n.status === 'running' && n.tokenTail) sub = '› ' + n.tokenTail.replace(/\s+/g, ' ');
    else sub = this.summary(n);
    if (n._subFor !== sub) { n._sub = this.clipText(sub, BOX_W - 20, true); n._subFor = sub; }
    ctx.fillText(n._sub, n.x + 12, n.y + 36);
    if (paused) {
      ctx.fillStyle = c.paused;
      ctx.fillRect(n.x + BOX_W - 22, n.y + 28, 4, 11);
      ctx.fillRect(n.x + BOX_W - 15, n.y + 28, 4, 11);
    }
    if (badge) {
      ctx.font = '600 10.5px system-ui, sans-serif';
      const bw = ctx.measureText(badge).width + 10;
      ctx.beginPath();
      ctx.roundRect(n.x + BOX_W - bw - 6, n.y + 8, bw, 17, 8);
      ctx.fillStyle = c.badge;
      ctx.fill();
      ctx.fillStyle = c.text;
      ctx.textAlign = 'center';
      ctx.fillText(badge, n.x + BOX_W - bw / 2 - 6, n.y + 17);
      ctx.textAlign = 'left';
    }
    if (n.folded && n.desc > 0) {
      const label = `+${n.desc}`;
      ctx.font = '600 10.5px system-ui, sans-serif';
      const bw = ctx.measureText(label).width + 12;
      ctx.beginPath();
      ctx.roundRect(n.x + BOX_W + 6, n.y + BOX_H / 2 - 9, bw, 18, 9);
      ctx.fillStyle = c.badge;
      ctx.fill();
      ctx.strokeStyle = c.edge;
      ctx.lineWidth = 1;
      ctx.stroke();
      ctx.fillStyle = c.text;
      ctx.fillText(label, n.x + BOX_W + 12, n.y + BOX_H / 2 + 0.5);
    }
    ctx.globalAlpha = 1;
    if (n === this.selected || n === this.hover) {
      ctx.beginPath();
      ctx.roundRect(n.x - 3, n.y - 3, BOX_W + 6, BOX_H + 6, 9);
      ctx.strokeStyle = c.accent;
      ctx.lineWidth = n === this.selected ? 2.5 : 1;
      ctx.stroke();
    }
  }

  summary(n) {
    if (n.status === 'hinted') return 'not run yet';
    if (n.placeholder && !n.insts.length) return 'waiting for its start event';
    const last = n.insts[n.insts.length - 1];
    if (!last) return n.status;
    // Held at a gate here: work time and held time apart (the projection's), not one sum
    // (the status shows in the box's colour; the line must fit the box).
    const held = last.spans && last.spans.length && last.workMs !== null && last.workMs !== undefined;
    const parts = held ? [`${fmtDuration(last.workMs)} work`, `${fmtDuration(last.heldMs || 0)} held`] : [n.status];
    if (!held && last.durationMs !== null) parts.push(fmtDuration(last.durationMs));
    if (n.errors) parts.push(`${n.errors} error${n.errors > 1 ? 's' : ''}`);
    return parts.join(' · ');
  }

  clipText(text, max, small) {
    const ctx = this.ctx;
    if (ctx.measureText(text).width <= max) return text;
    let lo = 0, hi = text.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      const t = small ? '…' + text.slice(text.length - mid) : text.slice(0, mid) + '…';
      if (ctx.measureText(t).width <= max) lo = mid; else hi = mid - 1;
    }
    return small ? '…' + text.slice(text.length - lo) : text.slice(0, lo) + '…';
  }

  // ---- interaction -------------------------------------------------------

  bind() {
    const cv = this.canvas;
    let drag = null;
    cv.addEventListener('pointerdown', (e) => {
      if (e.button !== 0) return;
      this.hideMenu();
      cv.focus({ preventScroll: true });
      drag = { x: e.clientX, y: e.clientY, tx: this.tx, ty: this.ty, moved: false };
      cv.setPointerCapture(e.pointerId);
    });
    cv.addEventListener('pointermove', (e) => {
      if (drag) {
        const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
        if (drag.moved) {
          this.tx = drag.tx + dx; this.ty = drag.ty + dy;
          this.invalidate();
        }
        return;
      }
      const n = this.nodeAt(e);
      if (n !== this.hover) { this.hover = n; cv.style.cursor = n ? 'pointer' : 'grab'; this.invalidate(); }
    });
    cv.addEventListener('pointerup', (e) => {
      if (!drag) return;
      const moved = drag.moved;
      drag = null;
      if (moved) return;
      const n = this.nodeAt(e);
      if (n) {
        this.store.selectNode(n.id);
      } else {
        const hitChip = this.chipAt(e);
        if (hitChip) this.toggleFold(hitChip);
      }
    });
    cv.addEventListener('dblclick', (e) => {
      const n = this.nodeAt(e);
      if (n) this.toggleFold(n);
    });
    cv.addEventListener('wheel', (e) => {
      e.preventDefault();
      const r = cv.getBoundingClientRect();
      if (e.ctrlKey || e.metaKey || !e.shiftKey) {
        const factor = Math.exp(-e.deltaY * (e.deltaMode === 1 ? 0.05 : 0.0015));
        this.zoomAt(factor, e.clientX - r.left, e.clientY - r.top);
      } else {
        this.tx -= e.deltaX || e.deltaY; this.invalidate();
      }
    }, { passive: false });
    cv.addEventListener('contextmenu', (e) => {
      e.preventDefault();
      const n = this.nodeAt(e);
      if (n) { this.store.selectNode(n.id); this.showMenu(n, e.clientX, e.clientY); }
    });
    cv.addEventListener('keydown', (e) => this.onKey(e));
    document.addEventListener('pointerdown', (e) => { if (!this.menu.contains(e.target) && e.target !== cv) this.hideMenu(); });
  }

  nodeAt(e) {
    if (!this.layout || !this.opened) return null;
    const r = this.canvas.getBoundingClientRect();
    const [wx, wy] = this.toWorld(e.clientX - r.left, e.clientY - r.top);
    return this.layout.hit(wx, wy);
  }

  /** The folded node whose "+N" chip is under the pointer. */
  chipAt(e) {
    if (!this.layout || !this.opened) return null;
    const r = this.canvas.getBoundingClientRect();
    const [wx, wy] = this.toWorld(e.clientX - r.left, e.clientY - r.top);
    const n = this.layout.hit(wx - 60, wy);
    return n && n.folded && wx > n.x + BOX_W && wx < n.x + BOX_W + 60 ? n : null;
  }

  onKey(e) {
    if (!this.model || !this.opened) return;
    const sel = this.selected;
    const go = (n) => {
      if (!n) return;
      e.preventDefault();
      this.store.selectNode(n.id);
      this.reveal(n);
      const st = this.pausedIds.has(n.id) ? 'held' : n.status;
      announce(`${n.label ? `${n.label} (${n.name})` : n.name}, ${n.kind}, ${st}, ${n.insts.length} instance${n.insts.length === 1 ? '' : 's'}${n.children.length ? `, ${n.children.length} children${n.folded ? ' folded' : ''}` : ''}`);
    };
    const [w, h] = this.viewSize();
    switch (e.key) {
      case 'ArrowLeft': return go(sel ? sel.parent : this.model.roots[0]);
      case 'ArrowRight':
        if (!sel) return go(this.model.roots[0]);
        if (sel.folded) this.toggleFold(sel);
        return go(sel.children[0]);
      case 'ArrowUp':
      case 'ArrowDown': {
        if (!sel) return go(this.model.roots[0]);
        const sibs = sel.parent ? sel.parent.children : this.model.roots;
        const i = sibs.indexOf(sel) + (e.key === 'ArrowUp' ? -1 : 1);
        return go(sibs[i]);
      }
      case 'Enter': if (sel) { e.preventDefault(); this.store.emit('inspect', sel.id); } return;
      case ' ': if (sel) { e.preventDefault(); this.toggleFold(sel); } return;
      case 'f': case 'F': if (!e.ctrlKey && !e.metaKey) { e.preventDefault(); this.fit(); } return;
      case '+': case '=': e.preventDefault(); return this.zoomAt(1.2, w / 2, h / 2);
      case '-': case '_': e.preventDefault(); return this.zoomAt(1 / 1.2, w / 2, h / 2);
      case 'ContextMenu':
      case 'F10':
        if (sel && (e.key === 'ContextMenu' || e.shiftKey)) {
          e.preventDefault();
          const r = this.canvas.getBoundingClientRect();
          const [sx, sy] = this.toScreen(sel.x + BOX_W / 2, sel.y + BOX_H);
          this.showMenu(sel, r.left + sx, r.top + sy);
        }
        return;
      default:
    }
  }

  showMenu(node, x, y) {
    const bp = (matcher) => () => { this.hideMenu(); this.store.addBreakpoint(matcher); };
    // An exported page is read-only: its node menu sets no breakpoint.
    const items = EMBEDDED ? [] : [
      ['Break before ' + node.name, bp({ kind: node.kind, name: node.name, point: 'before' })],
      ['Break after ' + node.name, bp({ kind: node.kind, name: node.name, point: 'after' })],
      ['Break on error in ' + node.name, bp({ kind: node.kind, name: node.name, point: 'error' })],
      [`Break before every ${node.kind}`, bp({ kind: node.kind, point: 'before' })],
    ];
    if (node.children.length) items.push([node.folded ? 'Unfold subtree' : 'Fold subtree', () => { this.hideMenu(); this.toggleFold(node); }]);
    items.push(['Inspect', () => { this.hideMenu(); this.store.emit('inspect', node.id); }]);
    this.menu.replaceChildren(...items.map(([label, fn]) => el('button', { role: 'menuitem', type: 'button', onclick: fn }, label)));
    this.menu.hidden = false;
    const hr = this.host.getBoundingClientRect();
    const mw = 240, mh = items.length * 32 + 8;
    this.menu.style.left = `${Math.min(x - hr.left, hr.width - mw - 4)}px`;
    this.menu.style.top = `${Math.min(y - hr.top, hr.height - mh - 4)}px`;
    const buttons = [...this.menu.querySelectorAll('button')];
    buttons[0].focus();
    this.menu.onkeydown = (e) => {
      const i = buttons.indexOf(document.activeElement);
      if (e.key === 'Escape') { e.preventDefault(); this.hideMenu(); this.canvas.focus(); }
      else if (e.key === 'ArrowDown') { e.preventDefault(); buttons[(i + 1) % buttons.length].focus(); }
      else if (e.key === 'ArrowUp') { e.preventDefault(); buttons[(i - 1 + buttons.length) % buttons.length].focus(); }
    };
  }

  hideMenu() { this.menu.hidden = true; }

  /** Screen boxes of the placed nodes in view (for tests and tooling). */
  boxes() {
    if (!this.layout || !this.opened) return [];
    const r = this.canvas.getBoundingClientRect();
    const [w, h] = this.viewSize();
    const [x0, y0] = this.toWorld(0, 0);
    const [x1, y1] = this.toWorld(w, h);
    const out = [];
    this.layout.forEachIn(x0, y0, x1, y1, (n) => {
      const [sx, sy] = this.toScreen(n.x, n.y);
      out.push({
        nodeId: n.id, name: n.name, label: n.label || null, kind: n.kind, status: this.pausedIds.has(n.id) ? 'paused' : n.status,
        instances: n.insts.length, folded: n.folded, hidden: n.folded ? n.desc : 0,
        x: r.left + sx, y: r.top + sy, w: BOX_W * this.scale, h: BOX_H * this.scale,
      });
    });
    return out;
  }
}

export { ROW_H, COL_W };
