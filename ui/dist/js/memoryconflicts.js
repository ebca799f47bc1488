// A fact that contradicts active facts (`conflictsWith`, stored with it by the server) shown
// side by side with them — subject, predicate, object, valid times, provenance, state — with
// a person's three one-click decisions (POST /api/memory/records/<id>/conflict): the new
// fact supersedes the old one, both are kept, or the new one is rejected. Used by the
// quarantine tab's conflict list and by the inspector; the rules are the server's.

import { el } from './dom.js';
import { statusPill, validityText, shortTime } from './memorydetail.js';

/** The decisions, in button order: [decision, label, button class, what it does]. */
export const DECISIONS = [
  ['supersede_old', 'Supersede the old one', 'btn primary', 'The new fact replaces the old one (validated if quarantined); the old one keeps its history.'],
  ['keep_both', 'Keep both', 'btn', 'Both stay active; the conflict is marked resolved.'],
  ['reject', 'Reject the new one', 'btn danger', 'The new fact is rejected (a tombstone with the reason); the old one stays.'],
];

const WORDS = { supersede_old: 'superseded the old one', keep_both: 'kept both', reject: 'rejected the new one' };

/** True while a fact's conflict waits for a decision (stored, undecided, the fact live). */
export function conflictOpen(r) {
  return !!(r && r.conflictsWith?.length && !r.conflictDecision && r.state !== 'tombstoned' && r.state !== 'superseded');
}

/** One term of a side: the value cut with an ellipsis keeps its whole text on hover. */
function row(term, cls, value, full = value) {
  return [el('dt', {}, term), el('dd', { class: cls, title: full }, value)];
}

function side(r, role) {
  const triple = r ? [r.subject, r.predicate, r.object] : [];
  return el('div', { class: `mem-conflict-side ${role}`, 'data-id': r?.id || '', 'data-role': role },
    el('div', { class: 'mem-conflict-role small' }, role === 'new' ? 'New fact' : 'Active fact', ' ', r ? statusPill(r) : null),
    r ? el('a', { class: 'mem-conflict-text', href: `#/memory/semantic/${encodeURIComponent(r.id)}`, title: r.text }, r.text)
      : el('span', { class: 'muted' }, 'loading…'),
    r ? el('dl', { class: 'mem-conflict-facts small' },
      ...row('Subject', 'mc-subject', triple[0] || '–'),
      ...row('Predicate', 'mc-predicate mono', triple[1] || '–'),
      ...row('Object', 'mc-object', triple[2] || '–'),
      ...row('Valid', 'mc-valid', (validityText(r) || 'always').replace(/^valid /, '')),
      ...row('Source', 'mc-prov', `${r.provenance || 'user'}${r.agentId ? ` · by ${r.agentId}` : ''}`),
      ...row('Stored', 'mc-stored', shortTime(r.createdAt), r.createdAt)) : null);
}

/** The core's quarantine reason of a held supersession (rules::conflicts::SUPERSEDE_HOLD_PREFIX). */
const HELD_PREFIX = 'would supersede a person\'s fact';
/** … of a new version held until a person validates it (rules::conflicts::VALIDATION_HOLD_PREFIX). */
const HELD_UNVALIDATED_PREFIX = 'would supersede fact';

/**
 * Why `fact` is a held new version: 'person' (it would supersede a person's fact),
 * 'unvalidated' (it landed quarantined, so it waits for a person to validate it), or ''.
 */
export function heldSupersession(fact) {
  const reason = fact.quarantineReason || '';
  if (reason.includes(HELD_PREFIX)) return 'person';
  return reason.includes(HELD_UNVALIDATED_PREFIX) ? 'unvalidated' : '';
}

const HELD_WORDS = {
  person: ' · an agent’s new version of a person’s fact (held instead of superseding it)',
  unvalidated: ' · a quarantined new version (held until a person validates it)',
};

/**
 * The pair: the active facts `others` (records; null while loading) beside the new `fact`,
 * then the decision buttons (`onDecide(decision)`), or the decision once made.
 */
export function conflictPair(fact, others, { onDecide, readOnly = false } = {}) {
  const olds = others && others.length ? others : [null];
  const open = conflictOpen(fact);
  const decided = fact.conflictDecision;
  const foot = decided
    ? el('p', { class: 'small mem-conflict-decided', 'data-decision': decided.decision },
      `Decided: ${WORDS[decided.decision] || decided.decision} · by ${decided.by} · ${shortTime(decided.at)}`)
    : open
      ? el('div', { class: 'mem-conflict-actions', role: 'group', 'aria-label': 'Decide the conflict' },
        ...DECISIONS.map(([d, label, cls, what]) => el('button', {
          type: 'button', class: cls, 'data-decision': d, title: readOnly ? 'Read-only: open the URL printed by `mindgate serve` to decide' : what,
          disabled: readOnly, onclick: (e) => { e.stopPropagation(); onDecide?.(d); },
        }, label)))
      : el('p', { class: 'small muted' }, 'No longer open (the fact was superseded or rejected).');
  return el('section', { class: 'mem-conflict', 'data-id': fact.id, 'aria-label': `Conflict of ${fact.text}` },
    el('div', { class: 'mem-conflict-head small' },
      el('strong', {}, 'Conflict'), HELD_WORDS[heldSupersession(fact)]
        || ` · same subject, single-valued “${fact.predicate || '?'}”, another object`),
    el('div', { class: 'mem-conflict-grid' },
      el('div', { class: 'mem-conflict-olds' }, ...olds.map((o) => side(o, 'old'))),
      el('div', { class: 'mem-conflict-vs', 'aria-hidden': 'true' }, 'vs'),
      side(fact, 'new')),
    foot);
}
