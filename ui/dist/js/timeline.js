// Timeline: a waterfall of the selected run's instances over time, drawn on a
// canvas and virtualised by scroll position. Bars come from the run graph's
// instances (start, end, state); their holds at gates (the graph's `holds`, every
// instance that was held, errored and resumed ones too) are drawn amber over them, with
// gates held now from the pause feed. Linked to the graph: clicking a
// bar selects its node, selecting a node highlights (and scrolls to) its bars.

import { el, cssVar } from './dom.js';
import { fmtDuration, countOf } from './format.js';

const ROW = 18;
const LABEL_W = 170;
const AXIS = 22;

export class Timeline {
  constructor(host, store) {
    this.store = store;
    this.scroller = el('div', { class: 'tl-scroll', tabindex: '0', role: 'region', 'aria-label': 'Timeline: instances over time. Up and down arrows move between instances.' });
    this.spacer = el('div', { class: 'tl-spacer' });
    this.canvas = el('canvas', { class: 'tl-canvas', 'aria-hidden': 'true' });
    this.scroller.append(this.canvas, this.spacer);
    this.head = el('div', { class: 'panel-head tl-head' }, el('h2', {}, 'Timeline'), this.summary = el('span', { class: 'muted small' }));
    host.append(this.head, this.scroller);
    this.ctx = this.canvas.getContext('2d');
    this.queued = false;
    this.scroller.addEventListener('scroll', () => this.invalidate());
    new ResizeObserver(() => this.invalidate()).observe(this.scroller);
    this.scroller.addEventListener('click', (e) => this.onClick(e));
    this.scroller.addEventListener('keydown', (e) => this.onKey(e));
    this.scroller.addEventListener('mousemove', (e) => this.onHover(e));
    store.on('model', () => this.invalidate());
    store.on('run', () => { this.scroller.scrollTop = 0; this.invalidate(); });
    store.on('select', () => { this.scrollToSelection(); this.invalidate(); });
    window.addEventListener('mindgate:theme', () => this.invalidate());
    setInterval(() => { const m = store.model; if (m && m.info.status === 'running' && !store.loading) this.invalidate(); }, 500);
  }

  invalidate() {
    if (this.queued) return;
    this.queued = true;
    requestAnimationFrame(() => { this.queued = false; this.draw(); });
  }

  range(m) {
    const t0 = m.info.startedAt || (m.minTs === Infinity ? Date.now() : m.minTs);
    let t1 = Math.max(m.maxTs, m.info.finishedAt || 0);
    if (m.info.status === 'running') t1 = Math.max(t1, Date.now());
    if (t1 <= t0) t1 = t0 + 1;
    return [t0, t1];
  }

  draw() {
    const m = this.store.model;
    const insts = m ? m.instList : [];
    this.spacer.style.height = `${AXIS + insts.length * ROW}px`;
    const w = this.scroller.clientWidth || 1;
    const h = this.scroller.clientHeight || 1;
    const dpr = window.devicePixelRatio || 1;
    const cv = this.canvas;
    cv.style.width = `${w}px`;
    cv.style.height = `${h}px`;
    this.spacer.style.marginTop = `${-h}px`;
    if (cv.width !== Math.round(w * dpr) || cv.height !== Math.round(h * dpr)) { cv.width = Math.round(w * dpr); cv.height = Math.round(h * dpr); }
    const ctx = this.ctx;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = cssVar('--canvas-bg');
    ctx.fillRect(0, 0, w, h);
    if (!m || this.store.loading) { this.summary.textContent = ''; return; }
    const [t0, t1] = this.range(m);
    this.summary.textContent = `${countOf(insts.length, 'instance')} · ${fmtDuration(t1 - t0)}`;
    const plotW = Math.max(10, w - LABEL_W - 12);
    const xOf = (t) => LABEL_W + ((t - t0) / (t1 - t0)) * plotW;
    const top = this.scroller.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW));
    const last = Math.min(insts.length - 1, Math.ceil((top + h - AXIS) / ROW));
    const col = {
      running: cssVar('--st-running'), ok: cssVar('--st-ok'), error: cssVar('--st-error'), aborted: cssVar('--st-aborted'),
      paused: cssVar('--st-paused'), text: cssVar('--text'), muted: cssVar('--muted'), accent: cssVar('--accent'), sel: cssVar('--sel-bg'), grid: cssVar('--grid'),
    };
    const selNode = this.store.nodeId;
    // Open holds of this run by instance (a pause without instanceId holds its node's latest instance).
    const openHolds = new Map();
    for (const p of this.store.pauses) {
      if (p.runId !== m.runId) continue;
      const node = m.nodes.get(p.nodeId);
      const inst = node && ((p.instanceId && m.instanceOf(node, p.instanceId)) || node.insts[node.insts.length - 1]);
      if (inst) openHolds.set(inst, p.since || Date.now());
    }
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    // grid + axis labels
    const ticks = niceTicks(t1 - t0, plotW);
    ctx.fillStyle = col.muted;
    ctx.strokeStyle = col.grid;
    ctx.lineWidth = 1;
    for (let t = 0; t <= t1 - t0; t += ticks) {
      const x = Math.round(xOf(t0 + t)) + 0.5;
      ctx.beginPath(); ctx.moveTo(x, AXIS - 4); ctx.lineTo(x, h); ctx.stroke();
      ctx.fillText(fmtDuration(t), x + 3, 10);
    }
    for (let i = first; i <= last; i++) {
      const inst = insts[i];
      const y = AXIS + i * ROW - top;
      const selected = inst.node.id === selNode;
      if (selected) { ctx.fillStyle = col.sel; ctx.fillRect(0, y, w, ROW); }
      ctx.fillStyle = selected ? col.text : col.muted;
      ctx.fillText(clip(ctx, inst.node.label || inst.node.name, LABEL_W - 14), 8, y + ROW / 2);
      const end = inst.end ?? (inst.durationMs !== null ? inst.start + inst.durationMs : (m.info.status === 'running' ? Date.now() : m.maxTs));
      const start = inst.start ?? end;
      const x0 = xOf(start), x1 = Math.max(x0 + 2, xOf(end));
      ctx.fillStyle = col[inst.status] || col.muted;
      ctx.fillRect(x0, y + 4, x1 - x0, ROW - 8);
      const holds = inst.spans.map((h) => [h.since, h.until]);
      if (openHolds.has(inst) && !inst.spans.some((h) => h.until === null)) holds.push([openHolds.get(inst), null]);
      for (const [since, until] of holds) {
        const hx0 = xOf(since), hx1 = Math.max(hx0 + 2, xOf(until ?? (inst.end ?? Date.now())));
        ctx.fillStyle = col.paused;
        ctx.fillRect(hx0, y + 2, hx1 - hx0, ROW - 4);
      }
      if (selected && (this.store.instanceId ? this.store.instanceId === inst.id : true)) {
        ctx.strokeStyle = col.accent; ctx.lineWidth = 1.5;
        ctx.strokeRect(x0 - 1, y + 3, x1 - x0 + 2, ROW - 6);
      }
    }
    // sticky axis background
    ctx.fillStyle = cssVar('--canvas-bg');
    ctx.globalAlpha = 0.85;
    ctx.fillRect(0, 0, w, AXIS - 4);
    ctx.globalAlpha = 1;
    ctx.fillStyle = col.muted;
    for (let t = 0; t <= t1 - t0; t += ticks) ctx.fillText(fmtDuration(t), xOf(t0 + t) + 3, 10);
  }

  indexAt(e) {
    const r = this.scroller.getBoundingClientRect();
    const y = e.clientY - r.top + this.scroller.scrollTop - AXIS;
    return y < 0 ? -1 : Math.floor(y / ROW);
  }

  onClick(e) {
    const m = this.store.model;
    if (!m) return;
    const inst = m.instList[this.indexAt(e)];
    if (inst) this.store.selectNode(inst.node.id, { reveal: true, instanceId: inst.id });
  }

  onHover(e) {
    const m = this.store.model;
    const inst = m ? m.instList[this.indexAt(e)] : null;
    this.scroller.title = inst ? `${inst.node.name} · ${inst.status} · ${fmtDuration(inst.durationMs ?? (inst.end ? inst.end - inst.start : null))}${inst.workMs !== null ? ` · work ${fmtDuration(inst.workMs)}` : ''}${inst.heldMs ? ` · held ${fmtDuration(inst.heldMs)}` : ''}` : '';
  }

  onKey(e) {
    const m = this.store.model;
    if (!m || !m.instList.length) return;
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
    e.preventDefault();
    const cur = this.store.instanceId ? m.instances.get(this.store.instanceId) : null;
    let i = cur ? cur.index : -1;
    i = Math.max(0, Math.min(m.instList.length - 1, i + (e.key === 'ArrowDown' ? 1 : -1)));
    const inst = m.instList[i];
    this.store.selectNode(inst.node.id, { reveal: true, instanceId: inst.id });
  }

  scrollToSelection() {
    const m = this.store.model;
    if (!m || !this.store.nodeId) return;
    let inst = this.store.instanceId ? m.instances.get(this.store.instanceId) : null;
    if (!inst) { const n = m.nodes.get(this.store.nodeId); inst = n && n.insts[0]; }
    if (!inst) return;
    const y = inst.index * ROW;
    const h = this.scroller.clientHeight - AXIS;
    if (y < this.scroller.scrollTop || y + ROW > this.scroller.scrollTop + h) this.scroller.scrollTop = Math.max(0, y - h / 3);
  }
}

function niceTicks(span, px) {
  const target = span / Math.max(1, px / 110);
  const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000, 1800000, 3600000];
  return steps.find((s) => s >= target) || 3600000;
}

function clip(ctx, text, max) {
  if (ctx.measureText(text).width <= max) return text;
  let t = text;
  while (t.length > 1 && ctx.measureText(t + '…').width > max) t = t.slice(0, -1);
  return t + '…';
}
