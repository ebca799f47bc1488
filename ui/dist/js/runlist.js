// The run list: newest first, live, filterable by status and text, virtualised
// and paged (older runs are fetched over HTTP on demand).

import { el } from './dom.js';
import { fmtDuration, fmtTime, fmtCount, countOf, fmtCostShort, costDetail, isUnpriced, runDuration } from './format.js';
import { demoButton, emptyState } from './firststeps.js';
import { VirtualList } from './vlist.js';
import { api } from './conn.js';
import { threadHref } from './threadpage.js';

/**
 * `thread:ID`, `user:ID` and `tag:TAG` in the filter box match a run's meta keys exactly;
 * `label:L`, `verdict:up|down`, `score>=X` and `score<=X` match its annotations (the server
 * answers which runs: `GET /api/runs?label&verdict&minScore&maxScore`).
 */
function parseFilter(text) {
  const keys = {};
  const annot = {};
  const words = [];
  for (const w of text.split(/\s+/).filter(Boolean)) {
    const m = /^(thread|user|tag):(.+)$/i.exec(w);
    const a = /^(label|verdict):(.+)$/i.exec(w);
    const s = /^score(>=|<=)([0-9.]+)$/i.exec(w);
    if (m) keys[m[1].toLowerCase()] = m[2];
    else if (a) annot[a[1].toLowerCase()] = a[2];
    else if (s) annot[s[1] === '>=' ? 'minScore' : 'maxScore'] = s[2];
    else words.push(w.toLowerCase());
  }
  return { keys, annot, q: words.join(' ') };
}

const STATUSES = ['all', 'running', 'ok', 'error', 'aborted', 'abandoned'];

export class RunList {
  constructor(host, store, router) {
    this.store = store;
    this.router = router;
    this.filterText = '';
    this.filterStatus = 'all';
    this.grouped = false;
    this.threads = new Map();
    const text = el('input', {
      type: 'search', class: 'runs-filter', placeholder: 'Filter runs', title: 'Name, app or id; thread:ID, user:ID or tag:TAG match those keys exactly; label:L, verdict:up|down, score>=X, score<=X match the runs\' annotations', 'aria-label': 'Filter runs by name, app or id, or thread:, user:, tag:, label:, verdict:up|down, score>=X, score<=X',
      oninput: (e) => { this.filterText = e.target.value.trim(); this.update(); },
    });
    const group = el('label', { class: 'runs-group', title: 'One row per thread: the runs of one conversation (run meta threadId, conversationId or sessionId)' },
      el('input', { type: 'checkbox', 'aria-label': 'Group runs by thread', onchange: (e) => { this.grouped = e.target.checked; this.loadThreads(); this.update(); } }),
      'Threads');
    const status = el('select', {
      'aria-label': 'Filter runs by status',
      onchange: (e) => { this.filterStatus = e.target.value; this.update(); },
    }, STATUSES.map((s) => el('option', { value: s }, s === 'all' ? 'All statuses' : s)));
    this.count = el('span', { class: 'muted small', 'aria-live': 'polite' });
    host.append(
      el('div', { class: 'panel-head' }, el('h2', {}, 'Runs'), this.count, group),
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
    store.on('runs', () => { this.update(); if (this.grouped) { clearTimeout(this.threadTimer); this.threadTimer = setTimeout(() => this.loadThreads(), 500); } });
    store.on('run', () => this.list.refresh());
    store.on('annotations', () => { if (this.annotKey) { this.annotKey = null; this.update(); } });
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
    const { keys, annot, q } = parseFilter(this.filterText);
    const annotated = this.annotatedRuns(annot);
    const st = this.filterStatus;
    let items = this.store.runsOrdered.filter((r) => {
      if (st !== 'all' && r.status !== st) return false;
      if (annotated && !annotated.has(r.id)) return false;
      if (keys.thread && r.threadId !== keys.thread) return false;
      if (keys.user && r.userId !== keys.user) return false;
      if (keys.tag && !(r.tags || []).includes(keys.tag)) return false;
      if (!q) return true;
      return (r.name || '').toLowerCase().includes(q) || (r.app || '').toLowerCase().includes(q) || (r.id || '').toLowerCase().includes(q);
    });
    if (this.grouped) items = this.groupByThread(items);
    this.items = items;
    this.list.setItems(items);
    const total = this.store.runsOrdered.length;
    const shownRuns = this.grouped ? items.reduce((n, it) => n + (it.runs ? it.runs.length : 1), 0) : items.length;
    const threads = this.grouped ? items.filter((it) => it.runs).length : 0;
    this.count.textContent = (shownRuns === total ? countOf(total, 'run') : `${fmtCount(shownRuns)} of ${countOf(total, 'run')}`)
      + (this.grouped ? ` · ${countOf(threads, 'thread')}` : '');
    this.emptyMsg.hidden = total > 0;
    this.more.hidden = this.store.olderExhausted;
  }

  /**
   * The ids of the runs whose annotations match (`null`: no annotation filter). Read from
   * the server once per filter; the list updates when the answer comes.
   */
  annotatedRuns(annot) {
    const q = new URLSearchParams(annot);
    if (![...q.keys()].length) return null;
    q.set('limit', '1000');
    const key = q.toString();
    if (this.annotKey === key) return this.annotIds || new Set();
    this.annotKey = key;
    this.annotIds = null;
    api(this.store.token, `/api/runs?${key}`).then((data) => {
      if (this.annotKey !== key) return;
      this.annotIds = new Set((data.runs || []).map((r) => r.id));
      this.update();
    }).catch(() => { if (this.annotKey === key) { this.annotIds = new Set(); this.update(); } });
    return new Set();
  }

  /** One entry per thread (where its latest shown run stands), runs without one as they are. */
  groupByThread(runs) {
    const out = [];
    const seen = new Map();
    for (const r of runs) {
      if (!r.threadId) { out.push(r); continue; }
      let entry = seen.get(r.threadId);
      if (!entry) {
        entry = { thread: r.threadId, runs: [] };
        seen.set(r.threadId, entry);
        out.push(entry);
      }
      entry.runs.push(r);
    }
    return out;
  }

  /** The threads' totals as the server computes them (GET /api/threads), for the grouped rows. */
  loadThreads() {
    if (!this.grouped || this.store.exported || this.loadingThreads) return;
    this.loadingThreads = true;
    api(this.store.token, '/api/threads?limit=500').then((data) => {
      this.threads = new Map((data.threads || []).map((t) => [t.id, t]));
      this.list.refresh();
    }).catch(() => { /* rows show what the run list knows */ }).finally(() => { this.loadingThreads = false; });
  }

  /**
   * A thread's row: its runs, duration, tokens, cost and errors as GET /api/threads totals
   * them (one fold, in the core); until that answers, what the run list knows of its runs.
   * Each figure carries `data-figure` / `data-value` (the raw number) for tests and tools.
   */
  threadRow(entry) {
    const t = this.threads.get(entry.thread);
    const latest = entry.runs[0];
    const runs = t ? t.runCount : entry.runs.length;
    const tokens = t ? t.tokens.inputTokens + t.tokens.outputTokens : null;
    const errors = t ? t.errors : entry.runs.reduce((n, r) => n + ((r.counts || {}).errors || 0), 0);
    const fig = (name, value, ...text) => el('span', { 'data-figure': name, 'data-value': value === null || value === undefined ? '' : String(value) }, ...text);
    const cost = t && (t.costUsd !== null || (t.unpricedModels || []).length) ? { usd: t.costUsd ?? 0, unpricedModels: t.unpricedModels || [] } : null;
    const row = el('div', { role: 'listitem', class: 'run-row thread-row', 'data-thread': entry.thread },
      el('a', { class: 'run-button', href: threadHref(entry.thread), title: `Thread ${entry.thread}: its runs as one conversation`, 'aria-label': `Thread ${entry.thread}, ${countOf(runs, 'run')}` },
        el('span', { class: 'run-line1' },
          el('span', { class: 'thread-kind', title: 'A thread: the runs of one conversation' }, 'Thread'),
          el('span', { class: 'run-name' }, entry.thread),
          t ? fig('cost', t.costUsd, costPart(cost)) : ''),
        el('span', { class: 'run-line2 muted small' },
          fig('runs', runs, countOf(runs, 'run')), ' · ',
          t ? fig('duration', t.durationMs, fmtDuration(t.durationMs)) : '…',
          ` · ${fmtTime(latest.startedAt)}${t && t.userId ? ` · ${t.userId}` : ''} · ${latest.app || '—'}`),
        el('span', { class: 'run-line3 muted small' },
          errors ? el('span', { class: 'err-count' }, fig('errors', errors, countOf(errors, 'error'))) : fig('errors', errors, 'no errors'),
          tokens !== null ? [' · ', fig('tokens', tokens, countOf(tokens, 'token'))] : '')));
    row.run = null;
    return row;
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
    if (r.thread !== undefined && r.runs) return this.threadRow(r);
    this.costFor(r);
    const selected = r.id === this.store.runId;
    const c = r.counts || {};
    const u = r.usage || {};
    const tokens = (u.inputTokens || 0) + (u.outputTokens || 0);
    const line3 = [countOf(c.events, 'event'), countOf(c.nodes, 'node'), c.errors ? countOf(c.errors, 'error') : '', tokens ? countOf(tokens, 'token') : ''].filter(Boolean).join(' · ');
    const row = el('div', {
      role: 'listitem', class: `run-row${selected ? ' selected' : ''}${r.threadId ? ' has-thread' : ''}`,
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
      r.threadId ? el('a', { class: 'run-thread badge', href: threadHref(r.threadId), title: `Thread ${r.threadId}: its runs as one conversation` }, 'thread') : '',
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
