// The critical path's segments (work, and the kinds of waiting for the person) drawn on a
// <canvas> instead of one element each: a 100,000-event session's path has ~20,000 segments,
// and as elements they made every render and live append re-lay out the page.
// Segments closer than a pixel merge into one drawn run (per kind, in order), so drawing costs
// the track's width, not the path's length; hovering a run names it (the canvas's tooltip).

import { fmtMs } from './taskgraph.js';

const WAIT_LABEL = { permission: 'waited at a permission prompt', interrupted: 'a call that never ran', user_reply: 'waited for your reply' };
/** The colour variable of each waiting kind (drawn hatched); work is solid amber. */
const WAIT_COLOR = { user_reply: '--st-hinted', permission: '--st-running', interrupted: '--st-aborted' };
const WORK = '#f29d0c';

/** What a segment is, in words (its tooltip). */
export function segmentLabel(s) {
  const ms = fmtMs(s.end_time - s.start_time);
  return s.kind === 'work' ? `agent work ${ms}` : `${WAIT_LABEL[s.kind] || s.kind} ${ms}`;
}

/** Theme colours read so far (a read after a DOM change makes the browser restyle at once). */
const COLORS = new Map();
window.addEventListener('mindgate:theme', () => COLORS.clear());

function cssVar(name, fallback) {
  if (!COLORS.has(name)) COLORS.set(name, getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback);
  return COLORS.get(name);
}

/** The value of CSS custom property `name` on the page (cached until the theme changes). */
export { cssVar };

/** Hatch fills made so far, by colour and pixel ratio (a page draws hundreds of strips). */
const HATCHES = new Map();

/** Diagonal stripes of `color` (the hatching of waiting), as a fill for `ctx`. */
function hatch(ctx, color, dpr) {
  const key = `${color}|${dpr}`;
  if (!HATCHES.has(key)) HATCHES.set(key, makeHatch(ctx, color, dpr));
  return HATCHES.get(key);
}

function makeHatch(ctx, color, dpr) {
  const n = Math.round(6 * dpr);
  const tile = document.createElement('canvas');
  tile.width = n;
  tile.height = n;
  const t = tile.getContext('2d');
  t.strokeStyle = color;
  t.lineWidth = 3 * dpr * Math.SQRT1_2;
  t.beginPath();
  for (let k = -1; k <= 1; k++) {
    t.moveTo(k * n, n);
    t.lineTo(k * n + n, 0);
  }
  t.stroke();
  return ctx.createPattern(tile, 'repeat');
}

/**
 * Segment `seg` placed on `axis` (timeaxis.js): `{seg, kind, ms, a, b}`, its kind, its length
 * and its drawn span `[a, b]` in axis ms. Every placed segment has this one shape, made here,
 * so `mergeRuns` reads the same fields of the same kind of object however the segments came
 * (the first render's JSON or a live update's).
 */
export function placeSeg(seg, axis) {
  return { seg, kind: seg.kind, ms: seg.end_time - seg.start_time, a: axis.d(seg.start_time), b: axis.d(seg.end_time) };
}

/**
 * The drawn runs of `segs` (each placed by `placeSeg`: a segment and its drawn span in axis ms) at
 * `w` CSS pixels for `span` axis ms: segments of one kind closer than a pixel merge into one
 * run, none narrower than `minPx`. Each run: {kind, x0, x1, first, ms, count} (its words: `runTitle`).
 */
export function mergeRuns(segs, w, span, minPx = 2) {
  const runs = [];
  let last = null;
  for (const s of segs) {
    const x0 = (s.a / span) * w;
    const x1 = Math.max(x0 + minPx, (s.b / span) * w);
    if (last && last.kind === s.kind && x0 <= last.x1 + 1) {
      last.x1 = Math.max(last.x1, x1);
      last.ms += s.ms;
      last.count++;
      continue;
    }
    last = { kind: s.kind, x0, x1, first: s.seg, ms: s.ms, count: 1 };
    runs.push(last);
  }
  return runs;
}

// The first placed segment and run made hold fractions, so the engine stores their numbers as
// doubles from the start. Made with whole numbers first, the first fraction to come (a live
// update's) changed the objects' layout under the optimised `mergeRuns`, which then ran
// unoptimised over the whole path once: 2–16 ms on the first append at 250 turns.
mergeRuns([placeSeg({ kind: 'work', start_time: 0.5, end_time: 1.25 }, { d: (t) => t })], 3.5, 7.5);

/** A drawn run in words (its tooltip): made when hovered, not per run drawn. */
export function runTitle(r) {
  return r.count === 1 ? segmentLabel(r.first) : `${r.count} path segments: ${r.kind === 'work' ? 'agent work' : WAIT_LABEL[r.kind] || r.kind} ${fmtMs(r.ms)}`;
}

/**
 * Reads every colour and makes every hatch a path's runs can be painted with, on `ctx` at
 * pixel ratio `dpr`. Run when the page is idle: a colour first read inside a live update
 * (a kind of waiting the path did not have before) made the browser restyle the changed page
 * at once, in the update (2.3 ms on a cold page at 250 turns).
 */
export function warmPaint(ctx, dpr) {
  for (const name of Object.values(WAIT_COLOR)) hatch(ctx, cssVar(name, '#8a6d3b'), dpr);
  hatch(ctx, cssVar('--st-aborted', '#8a6d3b'), dpr);
}

/** Paints `runs` on `ctx` (its transform in CSS pixels) at `x`, `y`, `h` high: work solid, waiting hatched. */
export function paintRuns(ctx, runs, x, y, h, dpr) {
  let kind = null;
  for (const r of runs) {
    if (r.kind !== kind) {
      kind = r.kind;
      ctx.fillStyle = kind === 'work' ? WORK : hatch(ctx, cssVar(WAIT_COLOR[kind] || '--st-aborted', '#8a6d3b'), dpr);
    }
    ctx.fillRect(x + r.x0, y, r.x1 - r.x0, h);
  }
}

/** The run drawn at `x` CSS pixels among `runs` (the last drawn wins, as on screen). */
export function runAt(runs, x) {
  for (let i = runs.length - 1; i >= 0; i--) {
    const r = runs[i];
    if (x >= r.x0 - 0.5 && x <= r.x1 + 0.5) return r;
  }
  return null;
}

export class SegmentStrip {
  /** A canvas with class `className`; `minPx` is the narrowest a drawn run gets. */
  constructor(className, { minPx = 2, label = 'critical path' } = {}) {
    this.canvas = document.createElement('canvas');
    this.canvas.className = className;
    this.canvas.setAttribute('role', 'img');
    this.canvas.setAttribute('aria-label', label);
    this.minPx = minPx;
    this.segs = [];
    this.runs = [];
    this.canvas.addEventListener('mousemove', (e) => {
      const run = runAt(this.runs, e.offsetX);
      const title = run ? runTitle(run) : '';
      if (this.canvas.title !== title) this.canvas.title = title;
    });
  }

  /** The segments to draw, each with its drawn span `[a, b]` in axis ms. */
  set(segs) {
    this.segs = segs;
  }

  /** Draws at `w`×`h` CSS pixels with `span` axis ms across the width. */
  draw(w, h, span) {
    const dpr = window.devicePixelRatio || 1;
    const c = this.canvas;
    const pw = Math.max(1, Math.round(w * dpr));
    const ph = Math.max(1, Math.round(h * dpr));
    if (c.width !== pw) c.width = pw;
    if (c.height !== ph) c.height = ph;
    const ctx = c.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    this.runs = mergeRuns(this.segs, w, span || 1, this.minPx);
    paintRuns(ctx, this.runs, 0, 0, h, dpr);
  }

  /** The drawn runs in page coordinates (test hook): kind, first node, left, right. */
  drawnRuns() {
    const box = this.canvas.getBoundingClientRect();
    return this.runs.map((r) => ({ kind: r.kind, node: r.first.node_id, turn: r.first.turn_id, count: r.count, left: box.left + r.x0, right: box.left + r.x1, top: box.top, bottom: box.bottom }));
  }
}
