// A search hit's signals drawn as bars, so a person sees why it was recalled: `bm25Norm`
// (lexical, 0–1 among the hits' lexical candidates), `vector` (cosine), `fused` (the 0–1
// fusion score), `trust` (the provenance discount), `decay`, `neighbour` (the share a
// better hit remembered next to it in the same session lent it), `hop` (found through an
// entity). The raw `bm25` and `rrf` and the `vectorNorm` stay in the bar's title, not drawn:
// every key is defined in docs/memory-search.md#signals. Bars are drawn against 1.

import { el } from './dom.js';

/** Signal name → what a person reads, whether it lives in [0, 1], and what it means (the bar's title). */
export const SIGNALS = [
  ['bm25Norm', 'lexical', true, 'how well the words match, from 0 (the weakest lexical match of this search) to 1 (the best)'],
  ['vector', 'vector', true, 'how close the meaning is (cosine of the embeddings)'],
  ['fused', 'fusion', true, 'the combined 0–1 score of the matches, before trust and decay'],
  ['trust', 'trust', true, 'the provenance discount: 1 for a trusted record, less when quarantined or foreign'],
  ['decay', 'decay', true, 'how much of the memory is retained since it was last used'],
  ['neighbour', 'session neighbour', true, 'the share of a better hit\'s score this record got for being remembered next to it in the same session (it need not match the query itself)'],
  ['hop', 'entity hop', true, 'added through an entity it shares with a hit (one hop), not matched'],
];

/** A drawn signal → the raw signal named in its title beside it. */
const RAW = { bm25Norm: 'bm25', vector: 'vectorNorm', fused: 'rrf' };

/** Bars for `signals`, scaled among `hits` (the hits shown together). */
export function signalBars(signals = {}, hits = []) {
  const bars = [];
  for (const [name, label, unit, meaning] of SIGNALS) {
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
      'aria-valuemin': '0', 'aria-valuemax': String(max), 'aria-valuenow': String(v), 'data-signal': name, title: titleOf(name, label, meaning, v, signals),
    },
    el('span', { class: 'mem-signal-name' }, label),
    el('span', { class: 'mem-signal-track' }, el('span', { class: 'mem-signal-fill', style: { width: `${pct}%` } })),
    el('span', { class: 'mem-signal-value mono' }, fmtSignal(v))));
  }
  return el('div', { class: 'mem-signals', 'aria-label': 'Signals' }, ...bars);
}

function titleOf(name, label, meaning, v, signals) {
  const raw = RAW[name];
  const extra = raw && Number.isFinite(signals[raw]) ? ` (${raw} ${signals[raw]})` : '';
  return `${label}: ${meaning}. ${name} = ${v}${extra}`;
}

function fmtSignal(v) {
  if (v !== 0 && Math.abs(v) < 0.001) return v.toExponential(1);
  return v.toFixed(3);
}
