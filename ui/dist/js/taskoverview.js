// The overview a task opens on (the JSON of /task-graph/api/task/overview): one row per turn
// with the person's message, the turn's span on the shared time axis, its counts, failures,
// retries and cost, and above the rows the critical path as one band on that axis — the
// agent's work in amber, waiting for the person as its own hatched segments. A turn's
// subagents expand in place under its row. Click a row (or Enter on it) to zoom into the turn.
//
// The rows are elements for their words only. What sits on the time axis is drawn: the band
// on its canvas (segstrip.js), and every row's bar and path marks on one canvas that stays in
// view over the rows' track column ("lanes") and paints the rows in view. So when the axis
// rescales (a live session's end moves, every bar moves) no element moves: the browser re-lays
// out only the rows whose words changed, and the lanes are repainted (issue 26 item 6).

import { el } from './dom.js';
import { timeAxis } from './timeaxis.js';
import { fmtMs } from './taskgraph.js';
import { fmtCostShort, costDetail } from './format.js';
import { SegmentStrip, mergeRuns, paintRuns, placeSeg, runAt, runTitle, cssVar, warmPaint } from './segstrip.js';
import { PathGroups } from './pathgroups.js';

/** Row height bounds (px): rows shrink to fit the page, never under MIN_ROW. */
const MIN_ROW = 16;
const MAX_ROW = 30;
/** A hover resting this long on a row loads its turn ahead of a click (ms). */
const HOVER_PREFETCH_MS = 90;

function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

/** A bar's fill per turn status: the colour variable and its opacity. */
const BAR_FILL = { failed: ['--st-error', 0.6], running: ['--st-running', 0.6], cancelled: ['--st-aborted', 0.55] };

export class TaskOverviewView {
  /** `onZoom(turnId)` opens a turn; `onPrefetch(turnId)` may load it ahead (pointer down, a hover that rests). */
  constructor(host, { onZoom, onPrefetch } = {}) {
    this.host = host;
    this.onZoom = onZoom || (() => {});
    this.onPrefetch = onPrefetch || (() => {});
    this.expanded = new Set();
    this.root = el('div', { class: 'tov', role: 'grid', 'aria-label': 'Turns of the task' });
    // The lanes: one canvas the size of the view, held in view while the rows scroll under it.
    this.lanes = el('canvas', { class: 'tov-lanes', 'aria-hidden': 'true' });
    this.lanesWrap = el('div', { class: 'tov-lanes-wrap' }, this.lanes);
    host.append(this.lanesWrap, this.root);
    this.rowEls = [];
    this.renders = 0;
    /** The path's segments by turn, regrouped per turn on a live update (pathgroups.js). */
    this.groups = new PathGroups();
    /** What the lanes drew last: per row in view, its bar and path runs (hover titles, test hook). */
    this.drawn = [];
    // The page's size sets the rows' height (fitRows) and the lanes' geometry. Both are read
    // when the browser has laid the page out (observers and scroll events run then), never in
    // a live update: a read after DOM changes lays the whole page out at once (29 ms at 250 turns).
    this.hostHeight = null;
    this.geo = null;
    this.scrollTop = 0;
    this.ro = new ResizeObserver(() => {
      this.hostHeight = host.clientHeight;
      this.geo = null;
      this.bandSize = null;
      if (!this.ov) return;
      this.fitRows();
      this.drawStrips();
    });
    this.ro.observe(this.root);
    this.ro.observe(host);
    this.onScroll = () => {
      this.scrollTop = host.scrollTop;
      this.drawLanes();
    };
    host.addEventListener('scroll', this.onScroll, { passive: true });
    this.onTheme = () => this.drawStrips();
    window.addEventListener('mindgate:theme', this.onTheme);
    // Hovering a row's track names what is under the pointer: a path run, else the turn's span.
    this.root.addEventListener('mousemove', (e) => this.hover(e));
  }

  /** Draws a whole overview. */
  set(ov) {
    this.ov = ov;
    this.axis = timeAxis(ov.turns || []);
    this.groups.reset(ov.critical_path?.segments || []);
    this.renders++;
    this.bandSize = null;
    this.geo = null;
    this.rowEls = (ov.turns || []).map((t, i) => this.row(t, i));
    this.root.replaceChildren(this.axisRow(), this.pathRow(), ...this.rowEls.flat());
    this.visualRows();
    this.fitRows();
    this.drawStrips();
  }

  /** The drawn parts placed on the axis: the band, and the lanes (the rows' bars and marks). */
  drawStrips() {
    if (!this.band || !this.root.isConnected || this.away) return;
    // The band's size changes with the page's (the observer forgets it), not with a live
    // update: read once, not per update (a read after DOM changes lays the page out at once).
    this.bandSize ??= { w: this.bandTrack.clientWidth, h: this.bandTrack.clientHeight };
    const { w, h } = this.bandSize;
    if (!w) { this.bandSize = null; return; }
    this.band.draw(w, h, this.axis.span || 1);
    this.drawLanes();
  }

  /** Where the lanes go (read once per page size): the track column and the first row's top, in the host's content. */
  geometry() {
    if (this.geo) return this.geo;
    const first = this.rowEls[0]?.[0];
    if (!this.bandTrack || !first) return null;
    const hb = this.host.getBoundingClientRect();
    const tb = this.bandTrack.getBoundingClientRect();
    this.scrollTop = this.host.scrollTop;
    const left = tb.left - hb.left - this.host.clientLeft + this.host.scrollLeft;
    const rowsTop = first.getBoundingClientRect().top - hb.top - this.host.clientTop + this.scrollTop;
    this.hostHeight ??= this.host.clientHeight;
    if (!tb.width) return null;
    this.geo = { left, width: tb.width, rowsTop };
    return this.geo;
  }

  /** Visual row k (turn rows and expanded subagent rows, in order) → its turn index, or -1. */
  visualRows() {
    const vis = [];
    (this.ov?.turns || []).forEach((t, i) => {
      vis.push(i);
      if (this.expanded.has(t.id)) for (let k = 0; k < (t.subagents || []).length; k++) vis.push(-1);
    });
    this.vis = vis;
  }

  /** Paints the bars and path marks of the rows in view on the lanes canvas. */
  drawLanes() {
    if (!this.ov || !this.root.isConnected || this.away) return;
    const g = this.geometry();
    if (!g) return;
    const dpr = window.devicePixelRatio || 1;
    const w = g.width;
    const viewH = Math.max(1, this.hostHeight || 1);
    const c = this.lanes;
    const pw = Math.max(1, Math.round(w * dpr));
    const ph = Math.max(1, Math.round(viewH * dpr));
    if (c.width !== pw || c.height !== ph) {
      c.width = pw;
      c.height = ph;
      c.style.width = `${w}px`;
      c.style.height = `${viewH}px`;
    }
    if (c.style.left !== `${g.left}px`) c.style.left = `${g.left}px`;
    const ctx = c.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, viewH);
    const rowH = this.rowHeight || MIN_ROW;
    // The row's content box (its bottom border is 1 px): the bar 18 % down, half as high; the marks 10 % up from the bottom, 3 px.
    const ch = rowH - 1;
    const span = this.axis.span || 1;
    const turns = this.ov.turns || [];
    const from = Math.max(0, Math.floor((this.scrollTop - g.rowsTop) / rowH));
    const to = Math.min(this.vis.length, Math.ceil((this.scrollTop + viewH - g.rowsTop) / rowH) + 1);
    this.drawn = [];
    for (let v = from; v < to; v++) {
      const i = this.vis[v];
      if (i < 0) continue;
      const t = turns[i];
      const y = g.rowsTop + v * rowH - this.scrollTop;
      const a = this.axis.d(t.start_time);
      const b = this.axis.d(t.end_time ?? (t.start_time + t.duration_ms));
      const x0 = (a / span) * w;
      const x1 = Math.max(x0 + 3, (b / span) * w);
      const [color, alpha] = BAR_FILL[String(t.status).toLowerCase()] || ['--st-ok', 0.55];
      ctx.globalAlpha = alpha;
      ctx.fillStyle = cssVar(color, '#1f9d55');
      ctx.beginPath();
      ctx.roundRect(x0, y + ch * 0.18, x1 - x0, ch * 0.5, Math.min(3, (x1 - x0) / 2));
      ctx.fill();
      ctx.globalAlpha = 1;
      const runs = this.groups.runs(t.id, this.axis, w);
      const my = y + ch * 0.9 - 3;
      paintRuns(ctx, runs, 0, my, 3, dpr);
      this.drawn.push({ index: i, y, x0, x1, barTop: y + ch * 0.18, barH: ch * 0.5, runs, marksTop: my });
    }
  }

  /** Segments `segs` with their drawn spans on the current axis. */
  placed(segs) {
    return segs.map((seg) => placeSeg(seg, this.axis));
  }

  /**
   * Applies an `overview_delta` of /task-graph/api/live?view=overview: the top-level fields
   * and only the changed turns; re-renders just those rows' words (their bars are drawn, and
   * redrawn with the axis). Returns the number of rows re-rendered.
   */
  applyDelta(d) {
    if (!this.ov) return 0;
    const { turns: changed = [], turn_count: count, ...fields } = d;
    // The path's segments come as a splice: keep the first `keep`, append the ones sent.
    const cp = fields.critical_path;
    let keep = null;
    let spliced = null;
    if (cp && Number.isInteger(cp.keep)) {
      const all = this.ov.critical_path?.segments || [];
      keep = Math.min(cp.keep, all.length);
      const added = cp.segments || [];
      spliced = { removed: all.slice(keep), added };
      all.length = keep;
      for (const seg of added) all.push(seg);
      cp.segments = all;
      delete cp.keep;
    }
    Object.assign(this.ov, fields);
    // Only the turns whose path segments changed are regrouped; a whole path sent anew is regrouped whole.
    if (spliced) this.groups.splice(spliced.removed, spliced.added);
    else if (cp) this.groups.reset(cp.segments || []);
    else this.groups.rebuilt = 0;
    const turns = this.ov.turns;
    const had = this.rowEls.length;
    turns.length = Math.min(turns.length, count ?? turns.length);
    changed.sort((x, y) => x.index - y.index);
    for (const c of changed) turns[c.index] = c.turn;
    // Rows are replaced in place, or added at the end when the session gained turns (each
    // new turn is among the changed); fewer turns (a rewritten file) render anew.
    const added = changed.filter((c) => c.index >= had).map((c) => c.index);
    const grown = turns.length >= had && added.length === turns.length - had && added.every((x, k) => x === had + k);
    if (!grown || !this.band) {
      this.set(this.ov);
      return turns.length;
    }
    const axis = timeAxis(turns);
    const first = Math.min(...changed.map((c) => c.index), turns.length);
    const anchor = turns[first - 1];
    // When the turns before the first changed one keep their places on the axis (a live
    // session grows at its end) the band's earlier segments keep theirs.
    const still = !anchor || axis.d(anchor.start_time) === this.axis.d(anchor.start_time);
    this.axis = axis;
    // The turns from the anchor on are placed on the axis again; with the axis moved, all (when drawn).
    if (still) this.groups.unplace(turns.slice(Math.max(0, first - 1)).map((t) => t.id));
    else this.groups.unplaceAll();
    this.root.children[0].replaceWith(this.axisRow());
    for (const c of changed) {
      const fresh = this.row(turns[c.index], c.index);
      const old = this.rowEls[c.index];
      if (old) {
        old[0].replaceWith(...fresh);
        for (const extra of old.slice(1)) extra.remove();
      } else {
        this.root.append(...fresh);
      }
      this.rowEls[c.index] = fresh;
    }
    // A changed turn may have gained rows (a new turn, a new subagent of an open one).
    this.visualRows();
    if (keep !== null && still) this.spliceBand(keep);
    else this.root.children[1].replaceWith(this.pathRow());
    this.fitRows();
    this.drawStrips();
    return changed.length;
  }

  /**
   * Runs once, on copies, what a live update runs that the first render did not (the regroup
   * of a turn, its runs, the band's, a row and the axis made anew, the colours of every status
   * and kind of waiting), so the first update after the page opens does not pay the code's or
   * the colours' first use. Changes nothing shown. Called when the page is idle after its
   * first paint.
   */
  warm() {
    const turns = this.ov?.turns || [];
    const segs = this.ov?.critical_path?.segments || [];
    if (this.warmed || !turns.length || !this.band) return;
    const last = turns.length - 1;
    const copy = new PathGroups();
    copy.byTurn = new Map(this.groups.byTurn);
    const tail = segs.slice(Math.max(0, segs.length - 4));
    const ids = copy.splice(tail, tail);
    const axis = timeAxis(turns);
    const w = this.geo?.width || this.bandSize?.w || 1000;
    for (const id of ids) copy.runs(id, axis, w);
    this.band.segs.slice(0, Math.max(0, this.band.segs.length - tail.length)).concat(this.placed(tail));
    mergeRuns(this.band.segs, w, axis.span || 1);
    this.row(turns[last], last);
    this.axisRow();
    // Every colour an update may paint with, read before any update changes the page.
    warmPaint(this.lanes.getContext('2d'), window.devicePixelRatio || 1);
    for (const [color] of Object.values(BAR_FILL)) cssVar(color, '#1f9d55');
    cssVar('--st-ok', '#1f9d55');
    // The canvases drawn again as they are: their first draw after the page's first paint costs
    // the browser 2–5 ms more than any later one (measured on the first append: band and lanes).
    this.drawStrips();
    this.warmed = true;
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

  /** A hovered row track's tooltip: the path run under the pointer, else the turn's bar. */
  hover(e) {
    const track = e.target.closest?.('.tov-turn .tov-track');
    if (!track) return;
    const i = Number(track.parentElement.dataset.index);
    const d = this.drawn.find((r) => r.index === i);
    const t = this.ov?.turns?.[i];
    if (!d || !t) return;
    const x = e.clientX - track.getBoundingClientRect().left;
    const run = runAt(d.runs, x);
    const title = run ? runTitle(run) : x >= d.x0 - 1 && x <= d.x1 + 1 ? `Turn ${t.turn}: ${fmtMs(t.duration_ms)}` : '';
    if (track.title !== title) track.title = title;
  }

  /** The rows' drawn bars and path runs, for the rows in view, in page coordinates (test hook). */
  drawnBars() {
    const box = this.lanes.getBoundingClientRect();
    return this.drawn.map((r) => ({
      turn: this.ov.turns[r.index].id, index: r.index,
      left: box.left + r.x0, right: box.left + r.x1, top: box.top + r.barTop, bottom: box.top + r.barTop + r.barH,
      marks: r.runs.map((m) => ({ kind: m.kind, node: m.first.node_id, count: m.count, left: box.left + m.x0, right: box.left + m.x1, top: box.top + r.marksTop })),
    }));
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
    // The bar and the path's marks are drawn on the lanes over this cell (drawLanes).
    const track = el('div', { class: 'tov-track', role: 'img', 'aria-label': `${fmtMs(t.duration_ms)}, ${fmtMs(t.path_ms)} of agent work on the critical path` });
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
      // The turn's detail is loaded from the pointer's press (or a hover that rests), before the click.
      onpointerdown: () => this.onPrefetch(t.id),
      onpointerenter: () => { clearTimeout(this.hoverTimer); this.hoverTimer = setTimeout(() => this.onPrefetch(t.id), HOVER_PREFETCH_MS); },
      onpointerleave: () => clearTimeout(this.hoverTimer),
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
    this.visualRows();
    this.fitRows();
    this.drawLanes();
    fresh[0].querySelector('.tov-sub-toggle')?.focus();
  }

  key(e, i) {
    const rows = this.rowEls.map((r) => r[0]);
    if (e.key === 'ArrowDown' || e.key === 'j') { e.preventDefault(); rows[Math.min(rows.length - 1, i + 1)]?.focus(); }
    else if (e.key === 'ArrowUp' || e.key === 'k') { e.preventDefault(); rows[Math.max(0, i - 1)]?.focus(); }
    else if (e.key === 'Enter' || e.key === 'l' || e.key === 'ArrowRight') { e.preventDefault(); this.onZoom(this.ov.turns[i].id); }
    else if (e.key === ' ') { e.preventDefault(); if (this.ov.turns[i].subagents?.length) this.toggleSubagents(this.ov.turns[i].id); }
  }

  /**
   * Puts the overview away while another view (a turn, the timeline) shows over it, or back.
   * Away, the browser skips its rows (`content-visibility: hidden`) but keeps their layout, so
   * neither leaving nor coming back re-lays out the whole session's rows.
   */
  setAway(away) {
    if (this.away === away) return;
    this.away = away;
    this.host.classList.toggle('away', away);
    this.host.setAttribute('aria-hidden', String(away));
    if (!away && this.ov) this.drawStrips();
  }

  /** Focuses turn `id`'s row (after returning from its zoom). */
  focusTurn(id) {
    const i = (this.ov?.turns || []).findIndex((t) => t.id === id);
    const r = this.rowEls[i]?.[0];
    if (r) { r.focus(); r.scrollIntoView({ block: 'nearest' }); }
  }

  destroy() {
    this.ro.disconnect();
    clearTimeout(this.hoverTimer);
    this.host.removeEventListener('scroll', this.onScroll);
    this.lanesWrap.remove();
    window.removeEventListener('mindgate:theme', this.onTheme);
    this.root.remove();
  }
}
