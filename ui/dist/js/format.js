// Formatting shared by every view: durations, times, counts, node-kind glyphs.

/** A duration in ms for people: `<1 ms`, `840 ms`, `2.50 s`, `3m 5s`, `1h 2m`. */
export function fmtDuration(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '–';
  if (ms < 1) return '<1 ms';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const total = Math.round(ms / 1000);
  const m = Math.floor(total / 60);
  const s = total % 60;
  if (m < 60) return `${m}m ${s}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

/** An epoch-ms time: the clock time today, with the date on other days. */
export function fmtTime(ts) {
  if (!ts) return '–';
  const d = new Date(ts);
  const now = new Date();
  const sameDay = d.toDateString() === now.toDateString();
  const time = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  // A date not in this year carries its year.
  const date = d.getFullYear() === now.getFullYear()
    ? { month: 'short', day: 'numeric' }
    : { year: 'numeric', month: 'short', day: 'numeric' };
  return sameDay ? time : `${d.toLocaleDateString(undefined, date)} ${time}`;
}

/** A count shortened for a pill: 999, 1.2k, 34k, 1.5M. */
export function fmtCount(n) {
  if (n === null || n === undefined) return '0';
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** The one-letter glyph drawn for each node kind. */
export const KIND_GLYPH = {
  agent: 'A', llm: 'L', tool: 'T', chain: 'C', retriever: 'R',
  server: 'S', resource: 'D', prompt: 'P', custom: '·',
};

/** US dollars as every view shows them (the same rule as the server's `format_usd`). */
export function fmtUsd(usd) {
  if (usd === 0) return '$0';
  if (usd < 0.0001) return '<$0.0001';
  if (usd < 1) return `$${usd.toFixed(4)}`;
  return `$${usd.toFixed(2)}`;
}

/**
 * A cost object of the API (`{usd, pricedUsd, unpricedModels}`) for people: `$0.0123`, or
 * `unpriced: model X` when some usage named a model no price table knows (never a guess).
 */
export function fmtCost(cost) {
  if (!cost) return '';
  if (cost.usd !== null && cost.usd !== undefined) return fmtUsd(cost.usd);
  const models = (cost.unpricedModels || []).join(', ');
  return `unpriced: model ${models}${cost.pricedUsd ? ` (${fmtUsd(cost.pricedUsd)} priced)` : ''}`;
}

/** A count with its noun, read as English: `1 fact`, `2 runs`, `1.2k events` (`plural` for irregular nouns). */
export function countOf(n, noun, plural = `${noun}s`) {
  return `${fmtCount(n || 0)} ${n === 1 ? noun : plural}`;
}

/** Whether a cost is not known in dollars (some usage named a model no price table knows). */
export function isUnpriced(cost) {
  return !!cost && (cost.usd === null || cost.usd === undefined);
}

/** A cost, short: `$0.0123`, or `unpriced` (the models are in {@link costDetail}). */
export function fmtCostShort(cost) {
  if (!cost) return '';
  return isUnpriced(cost) ? 'unpriced' : fmtUsd(cost.usd);
}

/** What a short cost leaves out, for its hover text: which models have no price, and what the rest cost. */
export function costDetail(cost) {
  if (!cost) return '';
  if (!isUnpriced(cost)) return 'Cost of the token usage (docs/cost.md)';
  return `${fmtCost(cost)}: no price is known for these models, so the total is not guessed (docs/cost.md)`;
}

/**
 * A run's duration (docs/glossary.md): `finishedAt - startedAt` once it ended; while it
 * runs, up to now (the page's clock), so a held run's duration keeps growing.
 */
/**
 * A run's work time in ms: its duration less the time it was held at gates (`heldMs`,
 * the released holds): `workMs` as the core answers it (`mindgate_store::run_work_ms`,
 * docs/glossary.md). While the run runs the page ticks it by the same rule; while a gate
 * holds it (`holdSince`, when that hold began) it stands still.
 */
export function runWork(r, holdSince = null) {
  if (!r || !r.startedAt) return null;
  if (r.status === 'running' && !r.finishedAt) {
    return Math.max(0, (holdSince ?? Date.now()) - r.startedAt - (r.heldMs || 0));
  }
  return r.workMs ?? null;
}

export function runDuration(r) {
  if (!r || !r.startedAt) return null;
  if (r.status === 'running' && !r.finishedAt) return Math.max(0, Date.now() - r.startedAt);
  return r.finishedAt ? Math.max(0, r.finishedAt - r.startedAt) : r.durationMs ?? null;
}
