// The waterfall of a whole task session (the JSON of /task-graph/api/task/timeline): one row
// per LLM step and call, its bar on the overview's time axis (long replies drawn short), the
// critical path's bars in amber, waiting calls hatched, failures red. Drawn on a <canvas>
// that paints only the rows in view, so a 35,000-node session scrolls as fast as a small one.
// Clicking a bar opens its turn's graph with the node selected; `reveal(id)` scrolls to a node
// (the graph's "Show in timeline").

import { timeAxis } from './timeaxis.js';
import { fmtMs } from './taskgraph.js';

const ROW = 20;
const LABEL_W = 300;
const PAD = 12;
const TYPE_LABEL = { agent: 'LLM', tool: 'tool', skill: 'skill', subagent: 'subagent', code: 'code', test: 'test', plan: 'plan' };

function css(name, fallback) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

export class TaskTimelineView {
  /** `onOpen(bar)` opens a bar's node in its turn's graph. */
  constructor(host, { onOpen } = {}) {
    this.host = host;
    this.onOpen = onOpen || (() => {});
    this.scroller = document.createElement('div');
    this.scroller.className = 'ttl-scroll';
    this.scroller.tabIndex = 0;
    this.scroller.setAttribute('role', 'img');
    this.scroller.setAttribute('aria-label', 'Timeline of the session: steps and calls on the time axis');
    this.spacer = document.createElement('div');
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'ttl-canvas';
    this.scroller.append(this.canvas, this.spacer);
    host.append(this.scroller);
    this.bars = [];
    this.highlight = null;
    this.scroller.addEventListener('scroll', () => this.draw());
    this.scroller.addEventListener('click', (e) => {
      const bar = this.barAt(e.clientY);
      if (bar) this.onOpen(bar);
    });
    this.scroller.addEventListener('keydown', (e) => {
      if (e.key === 'ArrowDown') this.scroller.scrollTop += ROW;
      else if (e.key === 'ArrowUp') this.scroller.scrollTop -= ROW;
      else return;
      e.preventDefault();
    });
    this.ro = new ResizeObserver(() => this.draw());
    this.ro.observe(host);
    this.onTheme = () => this.draw();
    window.addEventListener('mindgate:theme', this.onTheme);
  }

  /** Shows the bars of `timeline`, on the axis of `turns` (the overview's). */
  set(timeline, turns) {
    this.bars = timeline.bars || [];
    this.axis = timeAxis(turns || []);
    this.turnNo = new Map((turns || []).map((t) => [t.id, t.turn]));
    this.spacer.style.height = `${this.bars.length * ROW + 2 * PAD + 24}px`;
    this.draw();
  }

  /** Scrolls to node `id` and marks it. Returns whether it is in the timeline. */
  reveal(id) {
    const i = this.bars.findIndex((b) => b.id === id);
    this.highlight = i >= 0 ? id : null;
    if (i >= 0) this.scroller.scrollTop = Math.max(0, i * ROW - this.scroller.clientHeight / 3);
    this.draw();
    return i >= 0;
  }

  barAt(clientY) {
    const r = this.scroller.getBoundingClientRect();
    const i = Math.floor((clientY - r.top + this.scroller.scrollTop - PAD - 24) / ROW);
    return this.bars[i] || null;
  }

  /** Rows in view in page coordinates (test hook). */
  rows() {
    const r = this.scroller.getBoundingClientRect();
    const top = this.scroller.scrollTop;
    const out = [];
    this.bars.forEach((b, i) => {
      const y = PAD + 24 + i * ROW - top;
      if (y + ROW < 0 || y > this.scroller.clientHeight) return;
      out.push({ id: b.id, y: r.top + y, h: ROW, highlighted: this.highlight === b.id, critical: b.critical });
    });
    return out;
  }

  draw() {
    if (this.pending) return;
    this.pending = requestAnimationFrame(() => { this.pending = 0; this.paint(); });
  }

  paint() {
    const w = this.scroller.clientWidth;
    const h = this.scroller.clientHeight;
    if (!w || !h || !this.axis) return;
    this.h = h;
    const dpr = window.devicePixelRatio || 1;
    const c = this.canvas;
    if (c.width !== Math.round(w * dpr) || c.height !== Math.round(h * dpr)) {
      c.width = Math.round(w * dpr);
      c.height = Math.round(h * dpr);
      c.style.width = `${w}px`;
      c.style.height = `${h}px`;
    }
    c.style.top = `${this.scroller.scrollTop}px`;
    const ctx = c.getContext('2d');
    const col = {
      bg: css('--canvas-bg', '#f3f4f7'), text: css('--text', '#111'), muted: css('--muted', '#666'), grid: css('--grid', '#e6e8ee'),
      ok: css('--st-ok', 'green'), err: css('--st-error', 'red'), run: css('--st-running', 'blue'), wait: css('--st-hinted', 'grey'),
      accent: css('--accent', '#55d'), crit: '#f29d0c', sel: css('--sel-bg', '#e8e8fb'),
    };
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = col.bg;
    ctx.fillRect(0, 0, w, h);
    const x0 = LABEL_W + PAD;
    const span = Math.max(1, w - x0 - PAD);
    const top = this.scroller.scrollTop;
    const first = Math.max(0, Math.floor((top - PAD - 24) / ROW));
    const last = Math.min(this.bars.length, first + Math.ceil(h / ROW) + 2);
    ctx.font = '12px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    let turn = null;
    for (let i = first; i < last; i++) {
      const b = this.bars[i];
      const y = PAD + 24 + i * ROW - top;
      if (this.highlight === b.id) {
        ctx.fillStyle = col.sel;
        ctx.fillRect(0, y, w, ROW);
      }
      if (b.turn_id !== turn && (i === 0 || this.bars[i - 1].turn_id !== b.turn_id)) {
        ctx.fillStyle = col.grid;
        ctx.fillRect(0, y, w, 1);
      }
      turn = b.turn_id;
      const indent = b.type === 'agent' ? 0 : 14;
      ctx.fillStyle = col.muted;
      ctx.textAlign = 'left';
      const tag = `${this.turnNo.get(b.turn_id) ?? ''}·${TYPE_LABEL[b.type] || b.type}`;
      ctx.fillText(tag, PAD + indent, y + ROW / 2);
      ctx.fillStyle = col.text;
      const lx = PAD + indent + 70;
      ctx.fillText(clip(ctx, b.name, LABEL_W - lx), lx, y + ROW / 2);
      const a = x0 + this.axis.x(b.start_time) * span;
      const e = x0 + this.axis.x(b.end_time) * span;
      const bw = Math.max(2, e - a);
      ctx.fillStyle = b.waiting ? col.wait : b.status === 'FAILED' ? col.err : b.critical ? col.crit : b.status === 'RUNNING' ? col.run : col.ok;
      ctx.globalAlpha = b.critical || b.status === 'FAILED' ? 1 : 0.55;
      ctx.fillRect(a, y + 4, bw, ROW - 8);
      ctx.globalAlpha = 1;
      if (b.hot) {
        ctx.strokeStyle = col.text;
        ctx.lineWidth = 1.5;
        ctx.strokeRect(a - 1, y + 3, bw + 2, ROW - 6);
      }
      ctx.fillStyle = col.muted;
      const dur = fmtMs(b.end_time - b.start_time);
      if (e + 6 + ctx.measureText(dur).width < w - PAD) ctx.fillText(dur, e + 6, y + ROW / 2);
    }
    // The axis header, drawn over the rows.
    ctx.fillStyle = col.bg;
    ctx.fillRect(0, 0, w, PAD + 22);
    ctx.fillStyle = col.muted;
    ctx.fillText(`${this.bars.length.toLocaleString()} steps and calls`, PAD, PAD + 8);
    ctx.fillStyle = col.grid;
    for (const br of this.axis.breaks || []) ctx.fillRect(x0 + br.at * span, PAD + 14, 1, 8);
    ctx.fillStyle = col.muted;
    ctx.textAlign = 'right';
    ctx.fillText('time →', w - PAD, PAD + 8);
    ctx.textAlign = 'left';
    this.canvas.dataset.frame = String((Number(this.canvas.dataset.frame) || 0) + 1);
  }

  destroy() {
    this.ro.disconnect();
    window.removeEventListener('mindgate:theme', this.onTheme);
    if (this.pending) cancelAnimationFrame(this.pending);
    this.scroller.remove();
  }
}

function clip(ctx, s, max) {
  s = String(s || '').replace(/\s+/g, ' ');
  if (ctx.measureText(s).width <= max) return s;
  let lo = 0;
  let hi = s.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(`${s.slice(0, mid)}…`).width <= max) lo = mid; else hi = mid - 1;
  }
  return `${s.slice(0, lo)}…`;
}
