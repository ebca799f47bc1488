// The critical path's segments grouped by turn, for the overview's rows (each row draws its
// turn's segments under its bar), with each group's places on the time axis and its drawn
// runs kept until they change. A live update regroups only the turns whose segments it
// changed, and re-places only the turns the axis moved under: every other turn keeps its
// group object (issue 26 item 6 — at 250 turns and ~10,000 path segments, regrouping and
// re-placing the whole path on every append was the page's first-update cost).

import { mergeRuns, placeSeg } from './segstrip.js';

/** Whether segment `s` is drawn in its turn's row (waiting for the person's reply lies between turns). */
const inRow = (s) => s.kind !== 'user_reply';

/** The segments of `segments` (the path, in order) by turn id, in path order: the whole regroup. */
export function groupPath(segments) {
  const byTurn = new Map();
  for (const s of segments) {
    if (!inRow(s)) continue;
    let list = byTurn.get(s.turn_id);
    if (!list) byTurn.set(s.turn_id, (list = []));
    list.push(s);
  }
  return byTurn;
}

/** A group's segments in words (test hook): what a whole regroup must give alike. */
const segKey = (s) => `${s.kind}:${s.node_id}:${s.start_time}-${s.end_time}`;

export class PathGroups {
  constructor() {
    /** Turn id → {segs, gen, placed, runs, runsW, runsSpan}. */
    this.byTurn = new Map();
    /** Bumped at every regroup; a group carries the one it was made at (test hook). */
    this.gen = 0;
    /** Groups made by the last regroup. */
    this.rebuilt = 0;
  }

  group(segs) {
    return { segs, gen: this.gen, placed: null, runs: null, runsW: 0, runsSpan: 0 };
  }

  /** Groups the whole path `segments` anew. */
  reset(segments) {
    this.gen++;
    this.byTurn = new Map();
    for (const [id, segs] of groupPath(segments)) this.byTurn.set(id, this.group(segs));
    this.rebuilt = this.byTurn.size;
  }

  /**
   * The path spliced: its tail `removed` taken off, `added` appended. Only the turns owning one
   * of those segments are regrouped (their kept segments, then the added ones: the path's
   * order, as a whole regroup has it). Returns the regrouped turns' ids.
   */
  splice(removed, added) {
    this.gen++;
    const ids = new Set();
    for (const s of removed) if (inRow(s)) ids.add(s.turn_id);
    for (const s of added) if (inRow(s)) ids.add(s.turn_id);
    const gone = removed.length ? new Set(removed) : null;
    for (const id of ids) {
      const old = this.byTurn.get(id)?.segs || [];
      const segs = gone ? old.filter((s) => !gone.has(s)) : old.slice();
      for (const s of added) if (s.turn_id === id && inRow(s)) segs.push(s);
      if (segs.length) this.byTurn.set(id, this.group(segs));
      else this.byTurn.delete(id);
    }
    this.rebuilt = ids.size;
    return ids;
  }

  /** Forgets the places on the axis of the turns `ids` (the axis moved under them). */
  unplace(ids) {
    for (const id of ids) {
      const g = this.byTurn.get(id);
      if (g) { g.placed = null; g.runs = null; }
    }
  }

  /** Forgets every turn's places (a new axis). */
  unplaceAll() {
    for (const g of this.byTurn.values()) { g.placed = null; g.runs = null; }
  }

  /**
   * Turn `id`'s drawn runs at `w` CSS pixels on `axis`: its segments placed once per axis
   * change (`unplace`), merged once per width and span.
   */
  runs(id, axis, w) {
    const g = this.byTurn.get(id);
    if (!g) return [];
    const span = axis.span || 1;
    if (!g.placed) {
      g.placed = g.segs.map((seg) => placeSeg(seg, axis));
      g.runs = null;
    }
    if (!g.runs || g.runsW !== w || g.runsSpan !== span) {
      g.runs = mergeRuns(g.placed, w, span);
      g.runsW = w;
      g.runsSpan = span;
    }
    return g.runs;
  }

  /** Every group in words, by turn id: its generation and its segments (test hook). */
  describe() {
    const out = {};
    for (const [id, g] of this.byTurn) out[id] = { gen: g.gen, segs: g.segs.map(segKey) };
    return out;
  }
}

/** What a whole regroup of `segments` gives, in the words of `describe()` without generations (test hook). */
export function describeWhole(segments) {
  const out = {};
  for (const [id, segs] of groupPath(segments)) out[id] = segs.map(segKey);
  return out;
}
