// One memory record in the inspector's detail pane: its fields and trust state, the review
// buttons of a quarantined record, a fact's conflict (drawn by the page's callback), a
// fact's life (its supersession chain, the ledger, and the
// as-of / known-at sliders that ask the server which version was valid and believed then),
// an insight's citations as links, a procedure's steps, a block's char-limit gauge, an
// entity's facts with merge / unmerge.

import { el, toast } from './dom.js';

/** A status pill: the record's `state` as the server computed it (active, quarantined,
 * superseded or tombstoned); the page never derives it. */
export function statusPill(r) {
  if (!r) return null;
  const st = r.state || r.status || 'active';
  return el('span', { class: `mem-pill ms-${st}`, 'data-status': st }, st);
}

/** A short clock time of an ISO-8601 instant (the date too when not today). */
export function shortTime(iso) {
  if (!iso) return '–';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toDateString() === new Date().toDateString() ? d.toLocaleTimeString() : d.toLocaleString();
}

function day(iso) { return iso ? iso.replace(/T00:00:00(\.000)?Z$/, '').replace('T', ' ').replace(/\.\d+Z$/, 'Z') : ''; }

/** The validity window of a fact (valid time) or the span of an episode, as text; '' when none. */
export function validityText(r) {
  if (!r) return '';
  if (r.startedAt) return `${day(r.startedAt)} → ${day(r.endedAt)}`;
  if (r.validFrom || r.validTo) return `valid ${r.validFrom ? `from ${day(r.validFrom)}` : 'always'}${r.validTo ? ` to ${day(r.validTo)}` : ''}`;
  return '';
}

function facts(rows) {
  return el('dl', { class: 'tg-facts mem-facts' }, ...rows.filter((r) => r && r[1] !== undefined && r[1] !== null && r[1] !== '')
    .flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
}

const list = (xs) => (xs && xs.length ? xs.join(', ') : null);

export class DetailPane {
  /**
   * `onReview(action, ids)` runs the page's validate / reject flow; `conflict(record)` draws
   * a fact's conflict section (side by side, with the decisions), or null.
   */
  constructor(host, store, { onReview, conflict } = {}) {
    this.host = host;
    this.store = store;
    this.onReview = onReview;
    this.conflict = conflict;
    this.empty();
    store.on('detail', (d) => this.draw(d));
    // An entity's merge menu lists the other roots of the entity list.
    store.on('list', () => { if (store.detail?.kind === 'entity') this.draw(store.detail); });
  }

  empty() {
    this.host.replaceChildren(el('p', { class: 'muted pad' }, 'Open a record to see its fields, its history and why it is believed.'));
  }

  draw(d) {
    if (!d) { this.empty(); return; }
    if (d.error) { this.host.replaceChildren(el('p', { class: 'pad tg-error' }, `Could not open ${d.id}: ${d.error}`)); return; }
    if (d.kind === 'entity') { this.drawEntity(d); return; }
    const r = d.record;
    const body = [];
    body.push(el('div', { class: 'mem-detail-head pad' },
      el('span', { class: 'sr-kind' }, r.kind), statusPill(r),
      r.provenance ? el('span', { class: 'sr-kind mem-prov' }, r.provenance) : null,
      el('span', { class: 'mono small muted mem-detail-id' }, r.id)));
    body.push(el('p', { class: 'pad mem-detail-text' }, this.text(r)));
    if (r.status === 'quarantined' && r.state !== 'tombstoned') {
      body.push(el('div', { class: 'pad mem-review' },
        el('span', { class: 'mem-why small' }, `Quarantined: ${r.quarantineReason || 'derived'}`),
        el('button', { type: 'button', class: 'btn primary', onclick: () => this.onReview?.('validate', [r.id]) }, 'Validate (V)'),
        el('button', { type: 'button', class: 'btn danger', onclick: () => this.onReview?.('reject', [r.id]) }, 'Reject (X)')));
    }
    const conflict = this.conflict?.(r);
    if (conflict) body.push(conflict);
    body.push(el('div', { class: 'pad' }, facts([
      ['Valid', validityText(r) || null],
      ['Stored', r.createdAt],
      ['Superseded', r.supersededAt ? `${r.supersededAt} by ${r.supersededBy}` : null],
      ['Tombstoned', r.deletedAt ? `${r.deletedAt}${r.deleteReason ? ` — ${r.deleteReason}` : ''}` : null],
      ['Quarantine reason', r.quarantineReason],
      ['Archived', r.archivedAt],
      ['Triple', [r.subject, r.predicate, r.object].filter(Boolean).join(' · ') || null],
      ['Context', r.context],
      ['Confidence', r.confidence],
      ['Importance', r.importance],
      ['Strength', r.strength],
      ['Last recalled', r.lastAccessedAt],
      ['Tags', list(r.tags)],
      ['User', r.userId], ['Agent', r.agentId], ['Session', r.sessionId],
      ['Sensitivity', r.sensitivity],
    ])));
    if (r.kind === 'procedural') body.push(this.procedure(r));
    if (r.kind === 'working') body.push(this.gauge(r));
    if (r.kind === 'insight') body.push(this.citations(r));
    if (r.kind === 'session') body.push(el('pre', { class: 'pad mono small tg-pre' }, JSON.stringify({ role: r.role, sequence: r.sequence, toolCalls: r.toolCalls, toolCallId: r.toolCallId }, null, 2)));
    if (d.history) body.push(this.life(d));
    this.host.replaceChildren(...body);
  }

  text(r) {
    if (r.value !== undefined) return r.value;
    if (r.summary !== undefined) return r.summary;
    if (r.content !== undefined) return typeof r.content === 'string' ? r.content : JSON.stringify(r.content);
    return r.text;
  }

  procedure(r) {
    return el('section', { class: 'pad mem-procedure', 'aria-label': 'Procedure' },
      el('h3', { class: 'insp-sub' }, 'Procedure'),
      facts([['Condition', r.condition], ['Priority', r.priority], ['Variables', list(r.variables)], ['Successes', String(r.successCount ?? 0)]]),
      r.steps?.length ? el('ol', { class: 'mem-steps' }, ...r.steps.map((s) => el('li', {}, s))) : el('p', { class: 'muted small' }, 'No steps (a plain rule).'),
      r.successCriteria?.length ? el('div', {}, el('h3', { class: 'insp-sub' }, 'Success criteria'), el('ul', {}, ...r.successCriteria.map((c) => el('li', {}, c)))) : null);
  }

  gauge(r) {
    const used = [...(r.value || '')].length;
    const pct = r.charLimit ? Math.min(100, (used / r.charLimit) * 100) : 0;
    return el('section', { class: 'pad', 'aria-label': 'Block size' },
      el('h3', { class: 'insp-sub' }, `Block ${r.label}${r.readOnly ? ' (read-only)' : ''}`),
      r.description ? el('p', { class: 'small muted' }, r.description) : null,
      el('div', { class: `mem-gauge${pct >= 90 ? ' full' : ''}`, role: 'meter', 'aria-label': `${used} of ${r.charLimit} characters`, 'aria-valuemin': '0', 'aria-valuemax': String(r.charLimit), 'aria-valuenow': String(used) },
        el('span', { class: 'mem-gauge-fill', style: { width: `${pct}%` } })),
      el('p', { class: 'small muted' }, `${used.toLocaleString()} / ${r.charLimit.toLocaleString()} characters`));
  }

  citations(r) {
    const ul = el('ul', { class: 'mem-cites', 'aria-label': 'Citations' });
    const sec = el('section', { class: 'pad' }, el('h3', { class: 'insp-sub' }, `Cites (${r.cites.length})`), ul);
    for (const id of r.cites) {
      const li = el('li', {}, el('span', { class: 'mono small muted' }, id));
      ul.append(li);
      this.store.call(`/records/${encodeURIComponent(id)}`).then((res) => {
        li.replaceChildren(el('a', { href: res.link, class: 'mem-cite', 'data-id': id }, this.text(res.record)), ' ', statusPill(res.record));
      }).catch((err) => { li.append(` — ${err.message}`); });
    }
    return sec;
  }

  /** A fact's life: the chain (oldest first), the believed-at sliders, the ledger. */
  life(d) {
    const { chain, events } = d.history;
    const sec = el('section', { class: 'mem-life', 'aria-label': 'History' });
    if (d.record.kind === 'semantic') {
      sec.append(el('h3', { class: 'insp-sub pad' }, `Supersession chain (${chain.length})`));
      sec.append(el('ol', { class: 'mem-chain pad' }, ...chain.map((v) => el('li', { class: `mem-version${v.id === d.record.id ? ' current' : ''}`, 'data-id': v.id },
        el('div', {}, statusPill(v), ' ', el('a', { href: `#/memory/semantic/${encodeURIComponent(v.id)}` }, v.text)),
        el('div', { class: 'small muted' }, `${validityText(v) || 'valid always'} · stored ${v.createdAt}${v.supersededAt ? ` · superseded ${v.supersededAt}` : ''}`)))));
      sec.append(this.beliefSliders(d, chain));
    }
    sec.append(el('h3', { class: 'insp-sub pad' }, `Ledger (${events.length})`));
    sec.append(el('table', { class: 'mem-ledger small' },
      el('thead', {}, el('tr', {}, ...['#', 'When', 'Action', 'Who', 'Why', 'Detail'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, ...events.map((e) => el('tr', { 'data-action': e.action },
        el('td', { class: 'mono' }, String(e.seq)), el('td', {}, shortTime(e.at)), el('td', { class: 'mem-action' }, e.action),
        el('td', { class: 'mem-actor' }, e.actor), el('td', { class: 'mem-reason-cell' }, e.reason || ''),
        el('td', { class: 'mono muted' }, e.detail ? JSON.stringify(e.detail) : ''))))));
    return sec;
  }

  /** As-of and known-at sliders over the chain's instants; the server says which version holds. */
  beliefSliders(d, chain) {
    const times = [];
    for (const v of chain) for (const t of [v.validFrom, v.validTo, v.createdAt, v.supersededAt]) if (t) times.push(Date.parse(t));
    const now = Date.now();
    const min = Math.min(...times, now) - 24 * 3600 * 1000;
    const out = el('div', { class: 'mem-belief pad', role: 'status', 'aria-live': 'polite' }, '');
    const state = { asOf: '', knownAt: '' };
    const ask = async () => {
      try {
        const res = await this.store.call(`/records/${encodeURIComponent(d.record.id)}/belief?${new URLSearchParams(Object.entries(state).filter(([, v]) => v))}`);
        const valid = chain.find((v) => v.id === res.valid);
        out.dataset.valid = res.valid || '';
        out.replaceChildren(
          el('div', {}, el('strong', {}, 'Valid then: '), valid ? el('span', { class: 'mem-belief-valid' }, valid.text) : el('span', { class: 'muted' }, 'no version')),
          el('div', { class: 'small muted' }, `as of ${res.asOf} · as known at ${res.knownAt} · believed then: ${res.believed.length ? res.believed.map((id) => chain.find((v) => v.id === id)?.text || id).join(' / ') : 'nothing'}`));
      } catch (err) {
        out.replaceChildren(el('span', { class: 'tg-error' }, err.message));
      }
    };
    const slider = (key, label) => {
      const s = el('input', { type: 'range', class: 'mem-slider', min: String(min), max: String(now), step: '1000', value: String(now), 'aria-label': `${label} (fact)`, 'data-key': key });
      const shown = el('span', { class: 'mono small' }, 'now');
      s.addEventListener('input', () => {
        const v = Number(s.value);
        state[key] = v >= now ? '' : new Date(v).toISOString();
        shown.textContent = state[key] || 'now';
        ask();
      });
      return el('label', { class: 'mem-time' }, el('span', { class: 'small mem-time-label' }, label), s, shown);
    };
    const box = el('div', { class: 'mem-belief-box', role: 'group', 'aria-label': 'Believed at' },
      el('h3', { class: 'insp-sub pad' }, 'At an instant'),
      el('div', { class: 'pad' }, slider('asOf', 'As of'), slider('knownAt', 'Known at')), out);
    ask();
    return box;
  }

  drawEntity(d) {
    const e = d.entity;
    const ul = el('ul', { class: 'mem-cites', 'aria-label': 'Facts of the entity' });
    for (const id of d.facts || []) {
      const li = el('li', {}, el('a', { href: `#/memory/semantic/${encodeURIComponent(id)}` }, id));
      ul.append(li);
      this.store.call(`/records/${encodeURIComponent(id)}`).then((res) => { li.firstChild.textContent = this.text(res.record); }).catch(() => {});
    }
    const roots = this.store.list.items.filter((x) => x.normalizedName !== undefined && !x.mergedInto && x.id !== e.id);
    const into = el('select', { 'aria-label': `Merge ${e.name} into` }, ...roots.map((x) => el('option', { value: x.id }, x.name)));
    const act = async (path, body) => {
      try {
        await this.store.call(`/entities/${encodeURIComponent(e.id)}/${path}`, { method: 'POST', body });
        this.store.reloadList();
        this.store.loadDetail();
      } catch (err) { toast(`${path} failed: ${err.message}`, 'error'); }
    };
    this.host.replaceChildren(
      el('div', { class: 'mem-detail-head pad' }, el('span', { class: 'sr-kind' }, 'entity'), el('span', { class: 'mono small muted' }, e.id)),
      el('p', { class: 'pad mem-detail-text' }, e.name),
      el('div', { class: 'pad' }, facts([['Normalized', e.normalizedName], ['Merged into', e.mergedInto], ['Created', e.createdAt], ['Updated', e.updatedAt]])),
      el('div', { class: 'pad mem-review' },
        e.mergedInto ? el('button', { type: 'button', class: 'btn', onclick: () => act('unmerge') }, 'Unmerge')
          : roots.length ? [into, el('button', { type: 'button', class: 'btn', onclick: () => act('merge', { into: into.value }) }, 'Merge')] : null),
      el('section', { class: 'pad' }, el('h3', { class: 'insp-sub' }, `Facts (${(d.facts || []).length})`), ul));
  }
}
