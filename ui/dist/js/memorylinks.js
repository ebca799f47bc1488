// Links from the run debugger into the memory inspector: a `retriever` node's hits (the
// output of `memory:search` from the SDKs, or any list of records carrying `link` or
// `id` + `kind`) open their record at `#/memory/<kind>/<id>`, and "memory as known at this
// moment" opens the inspector at the instance's start on the transaction-time axis.

import { el } from './dom.js';

/** The memory hits of a retriever's output (an array, or `{hits: [...]}`); [] when none. */
export function memoryHits(output) {
  const list = Array.isArray(output) ? output : Array.isArray(output?.hits) ? output.hits : [];
  return list.filter((h) => h && typeof h === 'object' && (typeof h.link === 'string' ? h.link.startsWith('#/memory/') : (typeof h.id === 'string' && typeof h.kind === 'string')));
}

/** The inspector route of one hit. */
export function hitRoute(h) {
  return typeof h.link === 'string' ? h.link : `#/memory/${encodeURIComponent(h.kind)}/${encodeURIComponent(h.id)}`;
}

/** The inspector at transaction time `ms` (epoch ms): what the store believed then. */
export function knownAtRoute(ms) {
  return `#/memory/semantic?knownAt=${encodeURIComponent(new Date(ms).toISOString())}`;
}

/** The section the run inspector shows for a retriever instance; null when it has no hits. */
export function retrieverSection(inst) {
  const hits = memoryHits(inst.output);
  if (!hits.length && !inst.start) return null;
  return el('section', { class: 'insp-block insp-memory', 'aria-label': 'Memory hits' },
    el('h3', { class: 'insp-sub' }, `Memory hits (${hits.length})`),
    hits.length ? el('ol', { class: 'insp-memory-hits' }, ...hits.slice(0, 200).map((h) => el('li', {},
      el('a', { href: hitRoute(h), class: 'insp-memory-hit', 'data-id': h.id || '' }, String(h.text ?? h.id).slice(0, 200)),
      typeof h.score === 'number' ? el('span', { class: 'mono small muted' }, ` ${h.score.toFixed(3)}`) : ''))) : null,
    inst.start ? el('a', { href: knownAtRoute(inst.start), class: 'small insp-memory-known' }, 'Memory as known at this moment') : null);
}
