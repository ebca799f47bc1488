// The waterfall of a whole task session (the JSON of /task-graph/api/task/timeline): one row
// per LLM step and call, its bar on the overview's time axis (long replies drawn short), the
// critical path's bars in amber, waiting calls hatched, failures red. Drawn on a <canvas>
// that paints only the rows in view, so a 35,000-node session scrolls as fast as a small one.
// Clicking a bar opens its turn's graph with the node selected; `reveal(id)` scrolls to a node
// (the graph's "Show in timeline"). The time axis zooms and pans (Ctrl/⌘+wheel zooms at the
// pointer, Shift+wheel or a sideways swipe pans, + / − / ← / → on the keyboard, `f` fits the
// rows in view, `0` the whole session): at real sizes a step is a sliver of the whole axis.

import { timeAxis } from './timeaxis.js';
import { fmtMs } from './taskgraph.js';

const ROW = 20;
/** The axis header's height above the rows. */
const HEAD = 40;
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
      const mid = (this.win[0] + this.win[1]) / 2;
      const width = this.win[1] - this.win[0];
      if (e.key === 'ArrowDown') this.scroller.scrollTop += ROW;
      else if (e.key === 'ArrowUp') this.scroller.scrollTop -= ROW;
      else if (e.key === '+' || e.key === '=') this.zoomAt(mid, 0.5);
      else if (e.key === '-' || e.key === '_') this.zoomAt(mid, 2);
      else if (e.key === 'ArrowRight') this.panBy(width / 4);
      else if (e.key === 'ArrowLeft') this.panBy(-width / 4);
      else if (e.key === 'f') this.fitRowsInView();
      else if (e.key === '0') this.setWindow(0, 1);
      else return;
      e.preventDefault();
    });
    this.scroller.addEventListener('wheel', (e) => {
      if (e.ctrlKey || e.metaKey) {
        e.preventDefault();
        this.zoomAt(this.fracAt(e.clientX), Math.exp(Math.max(-1, Math.min(1, e.deltaY / 300))));
      } else if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        e.preventDefault();
        const px = e.shiftKey && !e.deltaX ? e.deltaY : e.deltaX;
        this.panBy((px / this.trackWidth()) * (this.win[1] - this.win[0]));
      }
    }, { passive: false });
    /** The part of the axis shown, as fractions of the whole session: [from, to]. */
    this.win = [0, 1];
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
    const list = turns || [];
    this.start = list[0]?.start_time ?? 0;
    this.end = Math.max(this.start, ...list.map((t) => t.end_time ?? (t.start_time + (t.duration_ms || 0))));
    this.spacer.style.height = `${this.bars.length * ROW + 2 * PAD + HEAD}px`;
    this.draw();
  }

  /** The bars' track width in CSS pixels. */
  trackWidth() {
    return Math.max(1, this.scroller.clientWidth - LABEL_W - 2 * PAD);
  }

  /** The axis fraction under page x `clientX`. */
  fracAt(clientX) {
    const r = this.scroller.getBoundingClientRect();
    const f = (clientX - r.left - LABEL_W - PAD) / this.trackWidth();
    return this.win[0] + Math.max(0, Math.min(1, f)) * (this.win[1] - this.win[0]);
  }

  /** Shows axis fractions [a, b] (kept inside the session, at least a millionth of it). */
  setWindow(a, b) {
    const width = Math.max(1e-6, Math.min(1, b - a));
    const from = Math.max(0, Math.min(1 - width, a));
    this.win = [from, from + width];
    this.draw();
  }

  /** Zooms by `factor` (< 1 in) keeping axis fraction `at` where it is. */
  zoomAt(at, factor) {
    const [a, b] = this.win;
    this.setWindow(at - (at - a) * factor, at + (b - at) * factor);
  }

  panBy(df) {
    this.setWindow(this.win[0] + df, this.win[1] + df);
  }

  /** Zooms the axis to the bars of the rows in view (a little margin either side). */
  fitRowsInView() {
    const top = this.scroller.scrollTop;
    const first = Math.max(0, Math.floor((top - PAD - HEAD) / ROW));
    const last = Math.min(this.bars.length, first + Math.ceil(this.scroller.clientHeight / ROW));
    let a = Infinity;
    let b = -Infinity;
    for (let i = first; i < last; i++) {
      a = Math.min(a, this.axis.x(this.bars[i].start_time));
      b = Math.max(b, this.axis.x(this.bars[i].end_time));
    }
    if (!(b > a)) return;
    const m = (b - a) * 0.04;
    this.setWindow(a - m, b + m);
  }

  /** Page x of Unix ms `t` on the zoomed axis (test hook and drawing). */
  xOf(t, x0 = LABEL_W + PAD, span = this.trackWidth()) {
    return x0 + ((this.axis.x(t) - this.win[0]) / (this.win[1] - this.win[0])) * span;
  }

  /** Wall time (ms from the session's start) at axis fraction f, by bisection of the axis. */
  wallAt(f) {
    let lo = this.start;
    let hi = this.end;
    for (let k = 0; k < 40; k++) {
      const mid = (lo + hi) / 2;
      if (this.axis.x(mid) < f) lo = mid; else hi = mid;
    }
    return lo - this.start;
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
    const i = Math.floor((clientY - r.top + this.scroller.scrollTop - PAD - HEAD) / ROW);
    return this.bars[i] || null;
  }

  /** Rows in view in page coordinates (test hook). */
  rows() {
    const r = this.scroller.getBoundingClientRect();
    const top = this.scroller.scrollTop;
    const out = [];
    this.bars.forEach((b, i) => {
      const y = PAD + HEAD + i * ROW - top;
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
    const span = this.trackWidth();
    const top = this.scroller.scrollTop;
    const first = Math.max(0, Math.floor((top - PAD - HEAD) / ROW));
    const last = Math.min(this.bars.length, first + Math.ceil(h / ROW) + 2);
    ctx.font = '12px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    let turn = null;
    for (let i = first; i < last; i++) {
      const b = this.bars[i];
      const y = PAD + HEAD + i * ROW - top;
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
      // The name after the tag (a long tag such as "12·subagent" pushes it right).
      const lx = Math.max(PAD + indent + 70, PAD + indent + ctx.measureText(tag).width + 8);
      ctx.fillText(clip(ctx, b.name, LABEL_W - lx), lx, y + ROW / 2);
      const a = Math.max(x0 - 2, this.xOf(b.start_time, x0, span));
      const e = Math.min(w - PAD, this.xOf(b.end_time, x0, span));
      if (e < x0 - 2 || a > w - PAD) continue;
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
      ctx.textAlign = 'left';
      const dur = fmtMs(b.end_time - b.start_time);
      if (e + 6 + ctx.measureText(dur).width < w - PAD) ctx.fillText(dur, e + 6, y + ROW / 2);
    }
    // The axis header, drawn over the rows.
    ctx.fillStyle = col.bg;
    ctx.fillRect(0, 0, w, PAD + HEAD - 2);
    ctx.fillStyle = col.muted;
    ctx.fillText(`${this.bars.length.toLocaleString()} steps and calls`, PAD, PAD + 8);
    const zoomed = this.win[1] - this.win[0] < 0.999;
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillText(zoomed ? 'Ctrl+wheel zoom · Shift+wheel pan · 0: all' : 'Ctrl+wheel zooms time · f: fit rows in view', PAD, PAD + 24);
    ctx.font = '12px system-ui, sans-serif';
    ctx.fillStyle = col.grid;
    const frac = (f) => x0 + ((f - this.win[0]) / (this.win[1] - this.win[0])) * span;
    for (const br of this.axis.breaks || []) {
      const bx = frac(br.at);
      if (bx >= x0 && bx <= w - PAD) ctx.fillRect(bx, PAD + 14, 1, 8);
    }
    // Ticks: wall time from the session's start at five places of the shown window.
    ctx.fillStyle = col.muted;
    for (let k = 0; k <= 4; k++) {
      const f = this.win[0] + (k / 4) * (this.win[1] - this.win[0]);
      ctx.textAlign = k === 0 ? 'left' : k === 4 ? 'right' : 'center';
      const at = this.wallAt(f);
      ctx.fillText(at < 1 ? '0' : fmtMs(at), x0 + (k / 4) * span, PAD + 8);
      ctx.fillRect(x0 + (k / 4) * span - (k === 4 ? 1 : 0), PAD + 16, 1, 6);
    }
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
