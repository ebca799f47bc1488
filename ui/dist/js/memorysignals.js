// A search hit's signals drawn as bars, so a person sees why it was recalled: `bm25`
// (lexical, −bm25), `vector` (cosine), `fused` / `rrf` (the fusion score), `trust` (the
// provenance discount), `decay`, `hop` (found through an entity). Unbounded signals are
// drawn against the largest value among the hits shown; bounded ones against 1.

import { el } from './dom.js';

/** Signal name → what a person reads, and whether it lives in [0, 1]. */
export const SIGNALS = [
  ['bm25', 'lexical', false],
  ['vector', 'vector', true],
  ['fused', 'fusion', false],
  ['rrf', 'fusion (rrf)', false],
  ['trust', 'trust', true],
  ['decay', 'decay', true],
  ['hop', 'entity hop', true],
];

/** Bars for `signals`, scaled among `hits` (the hits shown together). */
export function signalBars(signals = {}, hits = []) {
  const bars = [];
  for (const [name, label, unit] of SIGNALS) {
    const v = signals[name];
    if (v === undefined || v === null || !Number.isFinite(v)) continue;
    let max = 1;
    if (!unit) {
      max = 0;
      for (const h of hits) max = Math.max(max, Math.abs(h.signals?.[name] ?? 0));
      if (max === 0) max = Math.abs(v) || 1;
    }
    const pct = Math.max(0, Math.min(100, (Math.max(0, v) / max) * 100));
    bars.push(el('div', {
      class: `mem-signal sig-${name}`, role: 'meter', 'aria-label': `${label} ${fmtSignal(v)}`,
      'aria-valuemin': '0', 'aria-valuemax': String(max), 'aria-valuenow': String(v), 'data-signal': name, title: `${label}: ${v}`,
    },
    el('span', { class: 'mem-signal-name' }, label),
    el('span', { class: 'mem-signal-track' }, el('span', { class: 'mem-signal-fill', style: { width: `${pct}%` } })),
    el('span', { class: 'mem-signal-value mono' }, fmtSignal(v))));
  }
  return el('div', { class: 'mem-signals', 'aria-label': 'Signals' }, ...bars);
}

function fmtSignal(v) {
  if (v !== 0 && Math.abs(v) < 0.001) return v.toExponential(1);
  return v.toFixed(3);
}
