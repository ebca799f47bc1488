// The thread page (#/threads/<id>): the runs of one conversation in the order they
// started, read as one conversation — each run's model calls as transcripts (the core's,
// drawn by transcript.js), the history a later call resends shown once, each run linked —
// with the thread's totals as the server computes them (GET /api/threads/:id).

import { el } from './dom.js';
import { api } from './conn.js';
import { fmtDuration, fmtTime, countOf, fmtUsd } from './format.js';
import { TranscriptView } from './transcript.js';

/** How many runs' graphs and model calls the page reads ahead of the one it draws. */
const READ_AHEAD = 4;

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
        if (!/^#\/(memory|tasks?|diff|datasets)(\/|$)/.test(location.hash)) this.main.hidden = false;
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
    const bodies = [];
    for (const run of detail.runs) {
      const body = el('div', { class: 'thread-turn-body' }, el('span', { class: 'muted small' }, 'Loading…'));
      bodies.push(body);
      turns.append(el('li', { class: 'thread-turn', 'data-run': run.id },
        el('div', { class: 'thread-turn-head' },
          el('a', { href: `#/run/${encodeURIComponent(run.id)}`, class: 'thread-run-link' }, run.name || run.id),
          el('span', { class: `pill st-${run.status}` }, run.status),
          el('span', { class: 'muted small' }, `${fmtTime(run.startedAt)} · ${fmtDuration(run.durationMs)} · ${countOf((run.usage?.inputTokens || 0) + (run.usage?.outputTokens || 0), 'token')}${run.counts?.errors ? ` · ${countOf(run.counts.errors, 'error')}` : ''}`)),
        body));
    }
    this.fillAll(detail.runs, bodies, load);
  }

  head(t) {
    const fig = (name, value, text) => el('span', { class: `thread-fig ${name}`, 'data-figure': name, 'data-value': String(value ?? '') }, text);
    return el('div', { class: 'thread-head' },
      el('a', { href: '#/', class: 'link-button' }, '← Runs'),
      el('h2', {}, el('span', { class: 'thread-word' }, 'Thread'), el('span', { class: 'thread-id' }, t.id)),
      el('div', { class: 'thread-figs' },
        fig('runs', t.runCount, countOf(t.runCount, 'run')),
        fig('duration', t.durationMs, `${fmtDuration(t.durationMs)} total`),
        fig('work', t.workMs, `${fmtDuration(t.workMs)} work`),
        fig('tokens', (t.tokens?.inputTokens || 0) + (t.tokens?.outputTokens || 0), countOf((t.tokens?.inputTokens || 0) + (t.tokens?.outputTokens || 0), 'token')),
        fig('cost', t.costUsd, t.costUsd === null || t.costUsd === undefined ? 'cost unknown' : fmtUsd(t.costUsd)),
        fig('errors', t.errors, countOf(t.errors, 'error')),
        t.userId ? fig('user', t.userId, `user ${t.userId}`) : '',
        ...(t.tags || []).map((tag) => el('span', { class: 'thread-fig tag', title: 'A tag of its runs (run meta tags)' }, `#${tag}`))));
  }

  /**
   * Fills each run's turn, oldest first, as one conversation: the run's model calls
   * (their transcripts, the core's) with the messages an earlier call of the thread
   * already showed left out, so a history each call resends reads once. A run without
   * a model call shows its agent's input and output.
   */
  async fillAll(runs, bodies, load) {
    // At most READ_AHEAD runs are read at once, in order (a thread holds up to 1,000).
    const reads = [];
    const readAt = (i) => {
      if (i < runs.length && !reads[i]) reads[i] = this.readRun(runs[i].id).catch((e) => ({ error: e }));
      return reads[i];
    };
    for (let i = 0; i < READ_AHEAD; i++) readAt(i);
    const shown = [];
    for (let i = 0; i < runs.length; i++) {
      const read = await readAt(i);
      if (load !== this.loading) return;
      readAt(i + READ_AHEAD);
      const body = bodies[i];
      if (read.error) { body.replaceChildren(el('span', { class: 'muted small' }, `Cannot read the run: ${read.error.message}`)); continue; }
      const calls = read.calls;
      if (!calls.length) { body.replaceChildren(...agentTurn(read.root)); continue; }
      const messages = [];
      for (const t of calls) {
        const keys = t.messages.map(messageKey);
        let same = 0;
        while (same < keys.length && same < shown.length && keys[same] === shown[same]) same++;
        messages.push(...t.messages.slice(same));
        shown.splice(same, shown.length - same, ...keys.slice(same));
      }
      const last = calls[calls.length - 1];
      // The run's own token total (the core's run usage), not a sum made here.
      const usage = runs[i].usage || { inputTokens: 0, outputTokens: 0 };
      const models = [...new Set(calls.map((t) => t.model).filter(Boolean))];
      body.replaceChildren();
      const view = new TranscriptView(body, {
        toolTarget: (name, callId) => toolTarget(read.graph, name, callId),
        onOpen: (target) => { location.hash = `#/run/${encodeURIComponent(read.runId)}/node/${encodeURIComponent(target.nodeId)}`; },
      });
      view.set({ messages, model: models.join(', '), finishReason: last.finishReason, usage }, null);
      if (read.root?.errorDetail) body.append(errorBlock(read.root.errorDetail));
    }
  }

  /** A run's graph, its root's first execution, and its model calls' transcripts in the order they started. */
  async readRun(runId) {
    const base = `/api/runs/${encodeURIComponent(runId)}`;
    const graph = await api(this.store.token, `${base}/graph`);
    const nodes = graph.nodes || [];
    const rootNode = nodes.find((n) => !n.parentId);
    const llms = nodes.filter((n) => n.kind === 'llm' && (n.instances || []).length);
    const details = await Promise.all([rootNode, ...llms].map((n) => n && api(this.store.token, `${base}/nodes/${encodeURIComponent(n.nodeId)}`)));
    const root = details[0] ? (details[0].instances || [])[0] || null : null;
    const calls = details.slice(1).flatMap((d) => (d.instances || []).filter((i) => i.transcript))
      .map((inst, order) => ({ inst, order }))
      .sort((a, b) => (a.inst.startedAt ?? 0) - (b.inst.startedAt ?? 0) || a.order - b.order)
      .map(({ inst }) => inst.transcript);
    return { runId, graph, root, calls };
  }
}

/** What identifies a message when a later call resends it: its role and parts' content. */
function messageKey(m) {
  const args = (v) => { if (typeof v !== 'string') return v; try { return JSON.parse(v); } catch { return v; } };
  return JSON.stringify([m.role, (m.parts || []).map((p) => [p.type, p.content ?? null, p.id ?? null, p.name ?? null, args(p.arguments) ?? null, args(p.response) ?? null])]);
}

/** The tool instance that answered `callId`, else the tool node named `name`. */
function toolTarget(graph, name, callId) {
  const tools = (graph.nodes || []).filter((n) => n.kind === 'tool');
  if (callId) {
    for (const n of tools) {
      const inst = (n.instances || []).find((i) => i.toolCallId === callId);
      if (inst) return { nodeId: n.nodeId, instanceId: inst.instanceId };
    }
  }
  const byName = tools.find((n) => n.name === name);
  return byName ? { nodeId: byName.nodeId } : null;
}

function errorBlock(detail) {
  return el('div', { class: 'thread-msg err' }, el('span', { class: 'thread-role' }, 'Error'), el('pre', { class: 'thread-text' }, asText(detail.message || detail)));
}

/** A run without model calls: its agent's input and output (and error). */
function agentTurn(inst) {
  if (!inst) return [el('span', { class: 'muted small' }, 'No nodes.')];
  const said = (role, v) => v === undefined || v === null ? '' : el('div', { class: `thread-msg ${role}` }, el('span', { class: 'thread-role' }, role === 'in' ? 'Input' : 'Output'), el('pre', { class: 'thread-text' }, asText(v)));
  return [said('in', inst.input), said('out', inst.output), inst.errorDetail ? errorBlock(inst.errorDetail) : ''];
}
