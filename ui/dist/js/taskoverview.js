// The overview a task opens on (the JSON of /task-graph/api/task/overview): one row per turn
// with the person's message, the turn's span on the shared time axis, its counts, failures,
// retries and cost, and above the rows the critical path as one band on that axis — the
// agent's work in amber, waiting for the person as its own hatched segments. A turn's
// subagents expand in place under its row. Click a row (or Enter on it) to zoom into the turn.
// Live updates re-render only the rows of the turns that changed. The path's segments (the
// band and each row's marks) are drawn on canvases (segstrip.js): a long session's path has
// tens of thousands of them.

import { el } from './dom.js';
import { timeAxis } from './timeaxis.js';
import { fmtMs } from './taskgraph.js';
import { fmtCostShort, costDetail } from './format.js';
import { SegmentStrip } from './segstrip.js';

/** Row height bounds (px): rows shrink to fit the page, never under MIN_ROW. */
const MIN_ROW = 16;
const MAX_ROW = 30;

function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

export class TaskOverviewView {
  /** `onZoom(turnId)` opens a turn; `onOpenChild(id)` opens a child session. */
  constructor(host, { onZoom, onOpenChild } = {}) {
    this.host = host;
    this.onZoom = onZoom || (() => {});
    this.onOpenChild = onOpenChild || (() => {});
    this.expanded = new Set();
    this.root = el('div', { class: 'tov', role: 'grid', 'aria-label': 'Turns of the task' });
    host.append(this.root);
    this.rowEls = [];
    /** Each row's path marks (turn index → strip), drawn once the rows are laid out. */
    this.rowStrips = new Map();
    this.renders = 0;
    // The page's height sets the rows' (fitRows), its width the strips' drawing. The host's
    // height is kept from here, so a live update never reads it (a read forces the browser
    // to lay out the whole page at once: 29 ms at 250 turns).
    this.hostHeight = null;
    this.ro = new ResizeObserver((entries) => {
      // Layout is done when observers run: these reads cost nothing here.
      this.hostHeight = host.clientHeight;
      this.bandSize = null;
      if (!this.ov) return;
      this.fitRows();
      this.drawStrips();
    });
    this.ro.observe(this.root);
    this.ro.observe(host);
    this.onTheme = () => this.drawStrips();
    window.addEventListener('mindgate:theme', this.onTheme);
  }

  /** A left/width style for drawn times [a, b] (ms on the axis), relative to `--span`. */
  static place(a, b, min) {
    return { left: `calc(100% * ${a} / var(--span))`, width: `max(${min}px, calc(100% * ${Math.max(0, b - a)} / var(--span)))` };
  }

  /** Draws a whole overview. */
  set(ov) {
    this.ov = ov;
    this.axis = timeAxis(ov.turns || []);
    this.root.style.setProperty('--span', String(this.axis.span || 1));
    this.groupSegments();
    this.renders++;
    this.rowStrips.clear();
    this.bandSize = null;
    this.rowEls = (ov.turns || []).map((t, i) => this.row(t, i));
    this.root.replaceChildren(this.axisRow(), this.pathRow(), ...this.rowEls.flat());
    this.fitRows();
    this.drawStrips();
  }

  /** The path's strips placed on the axis and drawn: the band, and the rows' marks of `only` (turn indices; all when absent). */
  drawStrips(only) {
    if (!this.band || !this.root.isConnected || this.host.hidden) return;
    // The band's size changes with the page's (the observer forgets it), not with a live
    // update: read once, not per update (a read after DOM changes lays the page out at once).
    this.bandSize ??= { w: this.bandTrack.clientWidth, h: this.bandTrack.clientHeight };
    const { w, h } = this.bandSize;
    if (!w) { this.bandSize = null; return; }
    const span = this.axis.span || 1;
    this.band.draw(w, h, span);
    const rows = only ? only.map((i) => [i, this.rowStrips.get(i)]) : [...this.rowStrips];
    for (const [, strip] of rows) if (strip) strip.draw(w, 3, span);
  }

  /** Segments `segs` with their drawn spans on the current axis. */
  placed(segs) {
    return segs.map((seg) => ({ seg, a: this.axis.d(seg.start_time), b: this.axis.d(seg.end_time) }));
  }

  /**
   * Applies an `overview_delta` of /task-graph/api/live?view=overview: the top-level fields
   * and only the changed turns; re-renders just those rows (the axis and path band are
   * redrawn when the span changed). Returns the number of rows re-rendered.
   */
  applyDelta(d) {
    if (!this.ov) return 0;
    const { turns: changed = [], turn_count: count, ...fields } = d;
    // The path's segments come as a splice: keep the first `keep`, append the ones sent.
    const cp = fields.critical_path;
    let keep = null;
    if (cp && Number.isInteger(cp.keep)) {
      const all = this.ov.critical_path?.segments || [];
      keep = Math.min(cp.keep, all.length);
      all.length = keep;
      for (const seg of cp.segments || []) all.push(seg);
      cp.segments = all;
      delete cp.keep;
    }
    Object.assign(this.ov, fields);
    this.groupSegments();
    const turns = this.ov.turns;
    turns.length = Math.min(turns.length, count ?? turns.length);
    for (const c of changed) turns[c.index] = c.turn;
    const axis = timeAxis(turns);
    const first = Math.min(...changed.map((c) => c.index), turns.length);
    const anchor = turns[first - 1];
    // Bars are placed in drawn ms over `--span`: when the turns before the first changed one
    // keep their places (a live session grows at its end), only the changed rows re-render.
    const stable = this.rowEls.length === turns.length
      && (!anchor || axis.d(anchor.start_time) === this.axis.d(anchor.start_time));
    if (!stable) {
      this.set(this.ov);
      return turns.length;
    }
    this.axis = axis;
    this.root.style.setProperty('--span', String(axis.span || 1));
    this.root.children[0].replaceWith(this.axisRow());
    for (const c of changed) {
      this.rowStrips.delete(c.index);
      const fresh = this.row(turns[c.index], c.index);
      const old = this.rowEls[c.index];
      old[0].replaceWith(...fresh);
      for (const extra of old.slice(1)) extra.remove();
      this.rowEls[c.index] = fresh;
    }
    if (keep === null || !this.band) this.root.children[1].replaceWith(this.pathRow());
    else this.spliceBand(keep);
    this.fitRows();
    // The other rows' marks keep their places (the axis before them held still).
    this.drawStrips(changed.map((c) => c.index));
    return changed.length;
  }

  /** The path's segments by turn (each row draws its own under its bar). */
  groupSegments() {
    this.segsByTurn = new Map();
    for (const s of this.ov.critical_path?.segments || []) {
      if (s.kind === 'user_reply') continue;
      let list = this.segsByTurn.get(s.turn_id);
      if (!list) this.segsByTurn.set(s.turn_id, (list = []));
      list.push(s);
    }
  }

  /** Row height: the whole session on one screen when it fits at MIN_ROW px or more. */
  fitRows() {
    const n = (this.ov?.turns || []).length + this.expandedRows();
    this.hostHeight ??= this.host.clientHeight;
    const avail = this.hostHeight - 2 * 24 - 2;
    const h = Math.max(MIN_ROW, Math.min(MAX_ROW, Math.floor(avail / Math.max(1, n))));
    if (h !== this.rowHeight) {
      this.rowHeight = h;
      this.root.style.setProperty('--tov-row', `${h}px`);
    }
  }

  expandedRows() {
    let k = 0;
    for (const t of this.ov?.turns || []) if (this.expanded.has(t.id)) k += t.subagents.length;
    return k;
  }

  axisRow() {
    const ticks = el('div', { class: 'tov-track tov-axis-track' });
    // Ticks count from the axis's origin, the first turn's start (a session may open a while before its first message).
    const start = this.axisStart();
    const n = 6;
    for (let k = 0; k <= n; k++) {
      const f = k / n;
      const edge = k === 0 ? ' first' : k === n ? ' last' : '';
      ticks.append(el('span', { class: `tov-tick${edge}`, style: { left: `${f * 100}%` } }, k === 0 ? '0' : fmtMs(this.axisTime(f) - start)));
    }
    // Long replies are drawn short: a faint mark at each (hover for the real time).
    for (const b of this.axis.breaks) {
      ticks.append(el('span', { class: 'tov-break', style: { left: `${b.at * 100}%` }, title: `${fmtMs(b.ms)} between turns, drawn short` }));
    }
    return el('div', { class: 'tov-row tov-axis', role: 'row' },
      el('span', { class: 'tov-num' }, '#'),
      el('span', { class: 'tov-msg muted' }, 'Turn (your message)'),
      ticks,
      el('span', { class: 'tov-counts muted' }, 'Steps · calls · failures'),
      el('span', { class: 'tov-cost muted' }, 'Cost'));
  }

  /** Wall time at the axis's origin: the first turn's start. */
  axisStart() {
    return this.ov.turns?.find((t) => Number.isFinite(t.start_time))?.start_time ?? this.ov.start_time;
  }

  /** Wall time at axis fraction f (inverse of the axis, by bisection). */
  axisTime(f) {
    let lo = this.axisStart();
    let hi = this.ov.end_time ?? (lo + this.ov.duration_ms);
    for (let k = 0; k < 40; k++) {
      const mid = (lo + hi) / 2;
      if (this.axis.x(mid) < f) lo = mid; else hi = mid;
    }
    return lo;
  }

  pathTotals() {
    const cp = this.ov.critical_path || {};
    return `${fmtMs(cp.duration_ms || 0)} work · ${fmtMs(cp.waiting_ms || 0)} waiting`;
  }

  pathRow() {
    const cp = this.ov.critical_path || {};
    this.band = new SegmentStrip('tov-band-canvas', { label: 'the critical path: agent work and waiting on the time axis' });
    this.band.set(this.placed(cp.segments || []));
    const track = el('div', { class: 'tov-track tov-band', 'data-testid': 'path-band' }, this.band.canvas);
    this.bandTrack = track;
    this.pathCounts = el('span', { class: 'tov-counts', title: 'agent work on the critical path, and its waiting for you' }, this.pathTotals());
    return el('div', { class: 'tov-row tov-path', role: 'row' },
      el('span', { class: 'tov-num' }, ''),
      el('span', { class: 'tov-msg tov-path-label' }, 'Critical path'),
      track,
      this.pathCounts,
      el('span', { class: 'tov-cost' }, ''));
  }

  /** The band after a splice (its segments are the overview's, already spliced): redrawn in place. */
  spliceBand(keep) {
    // The first `keep` segments lie before the changed turns, whose axis held still: their
    // places stay, only the new ones are placed.
    const segs = this.ov.critical_path?.segments || [];
    const kept = this.band.segs.slice(0, keep);
    this.band.set(kept.concat(this.placed(segs.slice(kept.length))));
    this.pathCounts.textContent = this.pathTotals();
  }

  /** The band's drawn runs in page coordinates (test hook). */
  bandRuns() {
    return this.band ? this.band.drawnRuns() : [];
  }

  /** The elements of turn `t`: its row, then its subagents when expanded. */
  row(t, i) {
    const c = t.counts || {};
    const a = this.axis.d(t.start_time);
    const b = this.axis.d(t.end_time ?? (t.start_time + t.duration_ms));
    const track = el('div', { class: 'tov-track' },
      el('span', { class: `tov-bar st-${String(t.status).toLowerCase()}`, style: TaskOverviewView.place(a, b, 3) }));
    const marks = this.segsByTurn?.get(t.id);
    if (marks?.length) {
      const strip = new SegmentStrip('tov-marks', { label: `the critical path in turn ${t.turn}` });
      strip.set(this.placed(marks));
      track.append(strip.canvas);
      this.rowStrips.set(i, strip);
    }
    const counts = [plural(c.steps, 'step'), plural(c.tool_calls, 'call')];
    const flags = [];
    if (c.errors) flags.push(el('span', { class: 'tov-fail', title: plural(c.errors, 'failure') }, `✕${c.errors}`));
    if (c.retries) flags.push(el('span', { class: 'tov-retry', title: plural(c.retries, 'retry', 'retries') }, `↻${c.retries}`));
    const subs = t.subagents || [];
    const open = this.expanded.has(t.id);
    const toggle = subs.length ? el('button', {
      type: 'button', class: 'tov-sub-toggle', 'aria-expanded': String(open), title: 'Show the subagent sessions in place',
      onclick: (e) => { e.stopPropagation(); this.toggleSubagents(t.id); },
    }, `${open ? '▾' : '▸'} ${plural(subs.length, 'subagent')}`) : null;
    const msg = t.user_message || '(no message)';
    const line = el('div', {
      class: `tov-row tov-turn${t.status === 'FAILED' ? ' failed' : ''}`, role: 'row', tabindex: '0',
      'data-turn': t.id, 'data-index': String(i), 'aria-label': `Turn ${t.turn}: ${msg}`,
      onclick: () => this.onZoom(t.id),
      onkeydown: (e) => this.key(e, i),
    },
    el('span', { class: 'tov-num' }, String(t.turn)),
    el('span', { class: 'tov-msg', title: msg }, msg),
    track,
    el('span', { class: 'tov-counts', title: `${fmtMs(t.duration_ms)} · ${fmtMs(t.path_ms)} of agent work on the path · waited ${fmtMs(t.waiting_ms)}` },
      counts.join(' · '), ...flags, toggle),
    el('span', { class: 'tov-cost', title: `${(t.tokens?.total ?? 0).toLocaleString()} tokens · ${costDetail(t.cost)}` }, fmtCostShort(t.cost)));
    const rows = [line];
    if (open) for (const s of subs) rows.push(this.subagentRow(s));
    return rows;
  }

  subagentRow(s) {
    const child = s.child_session;
    const counts = child?.counts;
    const tools = counts ? counts.tools + counts.skills + counts.subagents + counts.plans + counts.code_changes + counts.tests : 0;
    return el('div', { class: 'tov-row tov-child', role: 'row', 'data-node': s.node_id, 'data-child': child?.id || '' },
      el('span', { class: 'tov-num' }, '↳'),
      el('span', { class: 'tov-msg', title: child?.title || s.name }, child ? `${s.name}: ${child.title}` : `${s.name} (no child session found)`),
      el('span', { class: 'tov-child-facts' },
        el('span', { class: `tg-pill st-${String(child?.status || s.status).toLowerCase()}` }, child?.status || s.status),
        ` ${fmtMs(s.duration_ms)}`,
        counts ? ` · ${plural(counts.agents, 'step')} · ${plural(tools, 'call')}${counts.errors ? ` · ✕${counts.errors}` : ''}` : ''),
      el('span', { class: 'tov-counts' }, child ? el('a', { href: `#/task/${encodeURIComponent(child.id)}`, class: 'tg-link', onclick: (e) => e.stopPropagation() }, 'Open child session') : ''),
      el('span', { class: 'tov-cost' }, ''));
  }

  toggleSubagents(id) {
    if (this.expanded.has(id)) this.expanded.delete(id); else this.expanded.add(id);
    const i = (this.ov.turns || []).findIndex((t) => t.id === id);
    if (i < 0) return;
    const fresh = this.row(this.ov.turns[i], i);
    const old = this.rowEls[i];
    old[0].replaceWith(...fresh);
    for (const extra of old.slice(1)) extra.remove();
    this.rowEls[i] = fresh;
    this.fitRows();
    this.drawStrips([i]);
    fresh[0].querySelector('.tov-sub-toggle')?.focus();
  }

  key(e, i) {
    const rows = this.rowEls.map((r) => r[0]);
    if (e.key === 'ArrowDown' || e.key === 'j') { e.preventDefault(); rows[Math.min(rows.length - 1, i + 1)]?.focus(); }
    else if (e.key === 'ArrowUp' || e.key === 'k') { e.preventDefault(); rows[Math.max(0, i - 1)]?.focus(); }
    else if (e.key === 'Enter' || e.key === 'l' || e.key === 'ArrowRight') { e.preventDefault(); this.onZoom(this.ov.turns[i].id); }
    else if (e.key === ' ') { e.preventDefault(); if (this.ov.turns[i].subagents?.length) this.toggleSubagents(this.ov.turns[i].id); }
  }

  /** Focuses turn `id`'s row (after returning from its zoom). */
  focusTurn(id) {
    const i = (this.ov?.turns || []).findIndex((t) => t.id === id);
    const r = this.rowEls[i]?.[0];
    if (r) { r.focus(); r.scrollIntoView({ block: 'nearest' }); }
  }

  destroy() {
    this.ro.disconnect();
    window.removeEventListener('mindgate:theme', this.onTheme);
    this.root.remove();
  }
}
