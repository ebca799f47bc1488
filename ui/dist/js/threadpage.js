// The thread page (#/threads/<id>): the runs of one conversation in the order they
// started, read as one conversation — each run's agent input and output, each run linked
// — with the thread's totals as the server computes them (GET /api/threads/:id).

import { el } from './dom.js';
import { api } from './conn.js';
import { fmtDuration, fmtTime, countOf, fmtUsd } from './format.js';

export function parseThreadRoute(hash) {
  const m = /^#\/threads\/(.+)$/.exec(hash || '');
  return m ? decodeURIComponent(m[1]) : null;
}

export function threadHref(id) {
  return `#/threads/${encodeURIComponent(id)}`;
}

/** A value as a person reads it: strings as they are, anything else as indented JSON. */
function asText(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'object' && !Array.isArray(v)) {
    for (const k of ['text', 'message', 'content', 'answer', 'output', 'input', 'question', 'prompt']) {
      if (typeof v[k] === 'string') return v[k];
    }
  }
  return JSON.stringify(v, null, 2);
}

export class ThreadPage {
  constructor(root, main, store) {
    this.root = root;
    this.main = main;
    this.store = store;
    this.loading = 0;
    window.addEventListener('hashchange', () => this.route());
    this.route();
  }

  route() {
    const id = parseThreadRoute(location.hash);
    if (id === null) {
      if (!this.root.hidden) {
        this.root.hidden = true;
        if (!/^#\/(memory|tasks?|diff)(\/|$)/.test(location.hash)) this.main.hidden = false;
      }
      return;
    }
    this.main.hidden = true;
    this.root.hidden = false;
    // Another page leaving on the same hash change may show the run view again after us.
    setTimeout(() => { if (parseThreadRoute(location.hash) !== null) this.main.hidden = true; });
    this.show(id);
  }

  async show(id) {
    const load = ++this.loading;
    this.root.replaceChildren(el('div', { class: 'thread-head' }, el('h2', {}, `Thread ${id}`), el('span', { class: 'muted' }, 'Loading…')));
    let detail;
    try {
      detail = await api(this.store.token, `/api/threads/${encodeURIComponent(id)}`);
    } catch (e) {
      if (load === this.loading) this.root.replaceChildren(el('div', { class: 'thread-head' }, el('h2', {}, `Thread ${id}`), el('p', { class: 'error' }, e.message)));
      return;
    }
    if (load !== this.loading) return;
    const turns = el('ol', { class: 'thread-runs', 'aria-label': 'Runs in order' });
    this.root.replaceChildren(this.head(detail.thread), turns);
    for (const run of detail.runs) {
      const body = el('div', { class: 'thread-turn-body' }, el('span', { class: 'muted small' }, 'Loading…'));
      turns.append(el('li', { class: 'thread-turn', 'data-run': run.id },
        el('div', { class: 'thread-turn-head' },
          el('a', { href: `#/run/${encodeURIComponent(run.id)}`, class: 'thread-run-link' }, run.name || run.id),
          el('span', { class: `pill st-${run.status}` }, run.status),
          el('span', { class: 'muted small' }, `${fmtTime(run.startedAt)} · ${fmtDuration(run.durationMs)} · ${countOf((run.usage?.inputTokens || 0) + (run.usage?.outputTokens || 0), 'token')}${run.counts?.errors ? ` · ${countOf(run.counts.errors, 'error')}` : ''}`)),
        body));
      this.fill(run.id, body, load);
    }
  }

  head(t) {
    const fig = (name, value, text) => el('span', { class: 'thread-fig', 'data-figure': name, 'data-value': String(value ?? '') }, text);
    return el('div', { class: 'thread-head' },
      el('a', { href: '#/', class: 'link-button' }, '← Runs'),
      el('h2', {}, `Thread ${t.id}`),
      el('div', { class: 'thread-figs' },
        fig('runs', t.runCount, countOf(t.runCount, 'run')),
        fig('duration', t.durationMs, `${fmtDuration(t.durationMs)} total`),
        fig('work', t.workMs, `${fmtDuration(t.workMs)} work`),
        fig('tokens', (t.tokens?.inputTokens || 0) + (t.tokens?.outputTokens || 0), countOf((t.tokens?.inputTokens || 0) + (t.tokens?.outputTokens || 0), 'token')),
        fig('cost', t.costUsd, t.costUsd === null || t.costUsd === undefined ? 'cost unknown' : fmtUsd(t.costUsd)),
        fig('errors', t.errors, countOf(t.errors, 'error')),
        t.userId ? fig('user', t.userId, `user ${t.userId}`) : '',
        ...(t.tags || []).map((tag) => el('span', { class: 'badge' }, tag))));
  }

  /** The run's agent input and output: its first root node's first execution. */
  async fill(runId, body, load) {
    try {
      const graph = await api(this.store.token, `/api/runs/${encodeURIComponent(runId)}/graph`);
      const root = (graph.nodes || []).find((n) => !n.parentId);
      if (!root) { body.replaceChildren(el('span', { class: 'muted small' }, 'No nodes.')); return; }
      const node = await api(this.store.token, `/api/runs/${encodeURIComponent(runId)}/nodes/${encodeURIComponent(root.nodeId)}`);
      if (load !== this.loading) return;
      const inst = (node.instances || [])[0] || {};
      const said = (role, v) => v === undefined || v === null ? '' : el('div', { class: `thread-msg ${role}` }, el('span', { class: 'thread-role' }, role === 'in' ? 'Input' : 'Output'), el('pre', { class: 'thread-text' }, asText(v)));
      const err = inst.errorDetail ? el('div', { class: 'thread-msg err' }, el('span', { class: 'thread-role' }, 'Error'), el('pre', { class: 'thread-text' }, asText(inst.errorDetail.message || inst.errorDetail))) : '';
      body.replaceChildren(said('in', inst.input), said('out', inst.output), err);
    } catch (e) {
      body.replaceChildren(el('span', { class: 'muted small' }, `Cannot read the run: ${e.message}`));
    }
  }
}
