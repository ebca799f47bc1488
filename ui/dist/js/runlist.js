// The run list: newest first, live, filterable by status and text, virtualised
// and paged (older runs are fetched over HTTP on demand).

import { el } from './dom.js';
import { fmtDuration, fmtTime, fmtCount, countOf, fmtCostShort, costDetail, isUnpriced, runDuration } from './format.js';
import { demoButton, emptyState } from './firststeps.js';
import { VirtualList } from './vlist.js';
import { api } from './conn.js';

const STATUSES = ['all', 'running', 'ok', 'error', 'aborted', 'abandoned'];

export class RunList {
  constructor(host, store, router) {
    this.store = store;
    this.router = router;
    this.filterText = '';
    this.filterStatus = 'all';
    const text = el('input', {
      type: 'search', class: 'runs-filter', placeholder: 'Filter runs', 'aria-label': 'Filter runs by name, app or id',
      oninput: (e) => { this.filterText = e.target.value.trim().toLowerCase(); this.update(); },
    });
    const status = el('select', {
      'aria-label': 'Filter runs by status',
      onchange: (e) => { this.filterStatus = e.target.value; this.update(); },
    }, STATUSES.map((s) => el('option', { value: s }, s === 'all' ? 'All statuses' : s)));
    this.count = el('span', { class: 'muted small', 'aria-live': 'polite' });
    host.append(
      el('div', { class: 'panel-head' }, el('h2', {}, 'Runs'), this.count),
      el('div', { class: 'runs-filters' }, text, status),
    );
    const listHost = el('div', { class: 'runs-list-host' });
    host.append(listHost);
    this.list = new VirtualList(listHost, 72, (r, i) => this.row(r, i), { label: 'Runs' });
    this.more = el('button', { type: 'button', class: 'link-button', onclick: () => store.loadOlderRuns() }, 'Load older runs');
    this.emptyMsg = emptyState('runs-empty',
      ['No runs yet: run the demo, or start an app instrumented with GraphMind (it connects to ',
        el('code', {}, `ws://${location.host}/ingest`), ').'],
      demoButton(store));
    host.append(el('div', { class: 'runs-foot' }, this.emptyMsg, this.more));
    store.on('runs', () => this.update());
    store.on('run', () => this.list.refresh());
    // Durations of running runs tick (held ones too: a run's duration runs until it ends).
    setInterval(() => {
      for (const row of this.list.rows.values()) {
        const r = row.run && this.store.runs.get(row.run.id);
        if (r && r.status === 'running' && r.startedAt) row.querySelector('.run-line2').textContent = this.line2(r);
      }
    }, 1000);
  }

  update() {
    // A cost read with the run list is current at the run's lastSeq of that moment; live
    // summaries carry none, so a run that ends later has its cost read again (costFor).
    for (const r of this.store.runs.values()) if (r.cost && r.costLastSeq === undefined) r.costLastSeq = r.lastSeq;
    const q = this.filterText;
    const st = this.filterStatus;
    const items = this.store.runsOrdered.filter((r) => {
      if (st !== 'all' && r.status !== st) return false;
      if (!q) return true;
      return (r.name || '').toLowerCase().includes(q) || (r.app || '').toLowerCase().includes(q) || (r.id || '').toLowerCase().includes(q);
    });
    this.items = items;
    this.list.setItems(items);
    const total = this.store.runsOrdered.length;
    this.count.textContent = items.length === total ? countOf(total, 'run') : `${fmtCount(items.length)} of ${countOf(total, 'run')}`;
    this.emptyMsg.hidden = total > 0;
    this.more.hidden = this.store.olderExhausted;
  }

  /** Reads the cost of a shown run that ended after its cost was read (or never had one). */
  costFor(r) {
    this.costReads = this.costReads || new Set();
    if (r.id === this.store.local || r.status === 'running' || r.lastSeq === undefined || r.lastSeq === null || r.costLastSeq === r.lastSeq) return;
    const key = `${r.id}@${r.lastSeq}`;
    if (this.costReads.has(key)) return;
    this.costReads.add(key);
    api(this.store.token, `/api/runs/${encodeURIComponent(r.id)}`).then((run) => {
      const current = this.store.runs.get(r.id);
      if (!current || !run) return;
      current.cost = run.cost;
      current.costLastSeq = run.lastSeq;
      this.list.refresh();
    }).catch(() => { /* the row keeps what it shows */ });
  }

  row(r, i) {
    this.costFor(r);
    const selected = r.id === this.store.runId;
    const c = r.counts || {};
    const u = r.usage || {};
    const tokens = (u.inputTokens || 0) + (u.outputTokens || 0);
    const line3 = [countOf(c.events, 'event'), countOf(c.nodes, 'node'), c.errors ? countOf(c.errors, 'error') : '', tokens ? countOf(tokens, 'token') : ''].filter(Boolean).join(' · ');
    const row = el('div', {
      role: 'listitem', class: `run-row${selected ? ' selected' : ''}`,
    },
      el('button', {
        type: 'button', class: 'run-button', 'aria-current': selected ? 'true' : null,
        'aria-label': `Run ${r.name || r.id}, ${r.status}, started ${fmtTime(r.startedAt)}`,
        onclick: () => this.router.go(r.id, null),
      },
        el('span', { class: 'run-line1' },
          el('span', { class: `status-dot st-${r.status}`, title: r.status }),
          el('span', { class: 'run-name' }, r.name || r.id),
          costPart(r.cost),
          el('span', { class: `pill st-${r.status}` }, r.status)),
        el('span', { class: 'run-line2 muted small' }, this.line2(r)),
        el('span', { class: 'run-line3 muted small', title: line3 },
          `${countOf(c.events, 'event')} · ${countOf(c.nodes, 'node')}`,
          c.errors ? el('span', { class: 'err-count' }, ` · ${countOf(c.errors, 'error')}`) : '',
          tokens ? ` · ${countOf(tokens, 'token')}` : '')),
    );
    row.run = r;
    return row;
  }

  line2(r) {
    // The duration first: a long app name is cut, never the figure. A run that was held
    // at gates shows its held time beside it (work time = duration less held time).
    const held = r.heldMs > 0 ? ` (held ${fmtDuration(r.heldMs)})` : '';
    return `${fmtDuration(runDuration(r))}${held} · ${fmtTime(r.startedAt)} · ${r.app || '—'}`;
  }
}

// The run's cost as the run list shows it, a short badge beside the status: nothing for a
// run that used no tokens; `unpriced` with the models it names on hover.
function costPart(cost) {
  if (!cost || (cost.usd === 0 && !(cost.unpricedModels || []).length)) return '';
  const unpriced = isUnpriced(cost);
  return el('span', { class: `run-cost badge${unpriced ? ' unpriced' : ''}`, title: costDetail(cost), 'data-testid': 'run-cost' }, fmtCostShort(cost));
}
