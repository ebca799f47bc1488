// The entity graph of the memory inspector's Entities tab, on a canvas: root entities on a
// circle, merged entities beside their root (dashed), a line between two roots for every fact
// they share (the server's `GET /api/memory/entities/:id` facts). Click an entity to open it;
// drag one onto another to merge it into that one (asks first). The list below the canvas is
// the accessible form of the same graph.

import { el, cssVar, announce } from './dom.js';

/** Most entities drawn (the list shows them all). */
const MAX_DRAWN = 200;
const R_ROOT = 16;
const R_MERGED = 10;

export class EntityGraph {
  /** `onOpen(id)` opens an entity; `onMerge(fromId, intoId)` merges after the drop. */
  constructor(host, store, { onOpen, onMerge }) {
    this.store = store;
    this.onOpen = onOpen;
    this.onMerge = onMerge;
    this.canvas = el('canvas', { class: 'mem-graph', role: 'img', 'aria-label': 'Entity graph: drag an entity onto another to merge them', tabindex: '-1' });
    this.host = el('div', { class: 'mem-graph-host' }, this.canvas);
    host.append(this.host);
    this.nodes = [];
    this.edges = [];
    this.drag = null;
    this.gen = 0;
    this.canvas.addEventListener('pointerdown', (e) => this.down(e));
    this.canvas.addEventListener('pointermove', (e) => this.move(e));
    this.canvas.addEventListener('pointerup', () => this.up());
    new ResizeObserver(() => this.draw()).observe(this.host);
    window.addEventListener('mindgate:theme', () => this.draw());
  }

  /** Loads the facts of each root and lays the graph out (entities: the entity list). */
  async setEntities(entities) {
    const gen = ++this.gen;
    const shown = entities.slice(0, MAX_DRAWN);
    const roots = shown.filter((e) => !e.mergedInto);
    const facts = new Map();
    await Promise.all(roots.map(async (e) => {
      try { facts.set(e.id, (await this.store.call(`/entities/${encodeURIComponent(e.id)}`)).facts || []); } catch { facts.set(e.id, []); }
    }));
    if (gen !== this.gen) return;
    this.layout(shown, roots, facts);
    this.draw();
  }

  layout(shown, roots, facts) {
    const w = this.host.clientWidth || 600;
    const h = this.host.clientHeight || 280;
    const cx = w / 2;
    const cy = h / 2;
    const radius = Math.max(40, Math.min(w, h) / 2 - 40);
    const at = new Map();
    this.nodes = roots.map((e, i) => {
      const a = (2 * Math.PI * i) / Math.max(1, roots.length) - Math.PI / 2;
      const n = { id: e.id, name: e.name, root: true, x: cx + radius * Math.cos(a), y: cy + radius * Math.sin(a), r: R_ROOT, facts: (facts.get(e.id) || []).length };
      at.set(e.id, n);
      return n;
    });
    const children = new Map();
    for (const e of shown.filter((x) => x.mergedInto)) {
      const root = at.get(e.mergedInto);
      if (!root) continue;
      const k = children.get(root.id) || 0;
      children.set(root.id, k + 1);
      const a = Math.atan2(root.y - cy, root.x - cx) + (k - 0.5) * 0.6;
      this.nodes.push({ id: e.id, name: e.name, root: false, into: root.id, x: root.x + 34 * Math.cos(a), y: root.y + 34 * Math.sin(a), r: R_MERGED, facts: 0 });
    }
    this.edges = [];
    for (let i = 0; i < roots.length; i++) {
      const a = new Set(facts.get(roots[i].id) || []);
      for (let j = i + 1; j < roots.length; j++) {
        const shared = (facts.get(roots[j].id) || []).filter((f) => a.has(f)).length;
        if (shared) this.edges.push({ a: roots[i].id, b: roots[j].id, shared });
      }
    }
  }

  /** Where each entity is drawn (CSS pixels in the canvas), for tests and tooling. */
  boxes() {
    const r = this.canvas.getBoundingClientRect();
    return this.nodes.map((n) => ({ id: n.id, name: n.name, root: n.root, into: n.into || null, x: r.left + n.x, y: r.top + n.y, facts: n.facts }));
  }

  hit(e) {
    const r = this.canvas.getBoundingClientRect();
    const x = e.clientX - r.left;
    const y = e.clientY - r.top;
    let best = null;
    for (const n of this.nodes) {
      const d = Math.hypot(n.x - x, n.y - y);
      if (d <= n.r + 4 && (!best || d < best.d)) best = { n, d };
    }
    return best ? best.n : null;
  }

  down(e) {
    const n = this.hit(e);
    if (!n) return;
    this.drag = { n, x0: e.clientX, y0: e.clientY, ox: n.x, oy: n.y, moved: false };
    this.canvas.setPointerCapture?.(e.pointerId);
  }

  move(e) {
    if (!this.drag) { this.canvas.style.cursor = this.hit(e) ? 'pointer' : 'default'; return; }
    const d = this.drag;
    const dx = e.clientX - d.x0;
    const dy = e.clientY - d.y0;
    if (Math.hypot(dx, dy) > 4) d.moved = true;
    d.n.x = d.ox + dx;
    d.n.y = d.oy + dy;
    this.draw();
  }

  up() {
    const d = this.drag;
    this.drag = null;
    if (!d) return;
    if (!d.moved) { d.n.x = d.ox; d.n.y = d.oy; this.onOpen(d.n.id); return; }
    const target = this.nodes.find((n) => n !== d.n && Math.hypot(n.x - d.n.x, n.y - d.n.y) <= n.r + 6);
    d.n.x = d.ox;
    d.n.y = d.oy;
    this.draw();
    if (target) {
      const into = target.root ? target.id : target.into;
      if (into && into !== d.n.id) { announce(`Merge ${d.n.name} into ${target.name}?`); this.onMerge(d.n.id, into, d.n.name, target.name); }
    }
  }

  draw() {
    const w = this.host.clientWidth;
    const h = this.host.clientHeight;
    if (!w || !h) return;
    const dpr = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(h * dpr);
    this.canvas.style.width = `${w}px`;
    this.canvas.style.height = `${h}px`;
    const g = this.canvas.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.fillStyle = cssVar('--canvas-bg');
    g.fillRect(0, 0, w, h);
    const at = new Map(this.nodes.map((n) => [n.id, n]));
    g.strokeStyle = cssVar('--edge');
    g.fillStyle = cssVar('--muted');
    g.font = '10px system-ui, sans-serif';
    for (const e of this.edges) {
      const a = at.get(e.a);
      const b = at.get(e.b);
      g.lineWidth = Math.min(4, 1 + e.shared);
      g.beginPath(); g.moveTo(a.x, a.y); g.lineTo(b.x, b.y); g.stroke();
      if (e.shared > 1) g.fillText(String(e.shared), (a.x + b.x) / 2, (a.y + b.y) / 2);
    }
    g.setLineDash([4, 3]);
    g.lineWidth = 1;
    for (const n of this.nodes) {
      if (n.root) continue;
      const root = at.get(n.into);
      g.beginPath(); g.moveTo(n.x, n.y); g.lineTo(root.x, root.y); g.stroke();
    }
    g.setLineDash([]);
    const selected = this.store.selected?.id;
    for (const n of this.nodes) {
      g.beginPath();
      g.arc(n.x, n.y, n.r, 0, 2 * Math.PI);
      g.fillStyle = n.root ? cssVar('--accent') : cssVar('--kind-bg');
      g.fill();
      g.lineWidth = n.id === selected ? 3 : 1;
      g.strokeStyle = n.id === selected ? cssVar('--text') : cssVar('--border');
      g.stroke();
      g.fillStyle = cssVar('--text');
      g.font = `${n.root ? 600 : 400} 11px system-ui, sans-serif`;
      g.textAlign = 'center';
      g.fillText(n.name.length > 18 ? `${n.name.slice(0, 17)}…` : n.name, n.x, n.y + n.r + 12);
      if (n.root && n.facts) {
        g.fillStyle = cssVar('--accent-text');
        g.font = '700 10px system-ui, sans-serif';
        g.fillText(String(n.facts), n.x, n.y + 3.5);
      }
    }
    g.textAlign = 'start';
  }
}
