// Annotations: what a person (or an agent) says about a run or a node instance — thumbs
// up or down, a score, labels, a comment — and the results of `mindgate check`. The box
// reads `GET /api/annotations?runId&nodeId` and writes `POST /api/annotations` /
// `DELETE /api/annotations/:id` with the control token (the server keeps each version in
// the history). Agents' annotations are marked. Keys (outside a text field): U thumbs up,
// B thumbs down, L to the label field of the inspector (or the run's when no node is
// selected).

import { el } from './dom.js';
import { api } from './conn.js';
import { fmtTime } from './format.js';
import { EMBEDDED } from './embedded.js';

/** `GET /api/annotations` for a run (and a node). */
export function loadAnnotations(token, runId, nodeId) {
  const q = new URLSearchParams({ runId });
  if (nodeId) q.set('nodeId', nodeId);
  return api(token, `/api/annotations?${q}`).then((d) => d.annotations || []);
}

/** One annotation as a row: who, verdict, score, labels, comment, check result. */
export function annotationRow(a, { onDelete, onOpenNode } = {}) {
  const agent = a.author && a.author.kind === 'agent';
  const parts = [
    el('span', { class: `annot-who badge${agent ? ' agent' : ''}`, title: agent ? 'Written by an agent (the agent token, e.g. MCP)' : 'Written by a person' }, agent ? 'agent' : 'person'),
  ];
  if (a.verdict) parts.push(el('span', { class: `annot-verdict v-${a.verdict}`, 'aria-label': `thumbs ${a.verdict}` }, a.verdict === 'up' ? '▲' : '▼'));
  if (a.score !== undefined && a.score !== null) parts.push(el('span', { class: 'annot-score mono' }, `${a.scoreName || 'score'} ${a.score}`));
  for (const l of a.labels || []) parts.push(el('span', { class: 'chip annot-label' }, l));
  if (a.kind === 'check' && a.check) parts.push(checkSummary(a.check, onOpenNode));
  const row = el('li', { class: 'annot-row', 'data-annotation': a.id },
    el('div', { class: 'annot-line' }, ...parts,
      el('span', { class: 'muted small annot-when' }, fmtTime(a.updatedAt || a.createdAt)),
      onDelete ? el('button', { type: 'button', class: 'chip-x', 'aria-label': 'Delete this annotation', title: 'Delete (kept in its history)', onclick: () => onDelete(a) }, '✕') : ''),
    a.nodeId && !onOpenNode ? '' : '',
    a.comment ? el('div', { class: 'annot-comment' }, a.comment) : '');
  return row;
}

/** A check's result: passed or failed, and each failed rule (linked to its node). */
function checkSummary(check, onOpenNode) {
  const failed = (check.rules || []).filter((r) => !r.passed);
  return el('span', { class: 'annot-check' },
    el('span', { class: `pill ${check.passed ? 'st-ok' : 'st-error'}` }, check.passed ? 'check passed' : 'check failed'),
    ...failed.map((r) => el('span', { class: 'annot-rule small' }, ' ',
      r.nodeId && onOpenNode
        ? el('button', { type: 'button', class: 'link-button', onclick: () => onOpenNode(r.nodeId) }, r.name)
        : el('span', { class: 'mono' }, r.name),
      r.message ? el('span', { class: 'muted' }, `: ${r.message}`) : '')));
}

/**
 * The box on the inspector (a node) or the run dialog (a run): the annotations, then a
 * form to add one (not on a read-only or exported page).
 */
export class AnnotationBox {
  constructor(store, { label, onOpenNode } = {}) {
    this.store = store;
    this.onOpenNode = onOpenNode;
    this.target = null;
    this.list = el('ul', { class: 'annot-list', 'aria-label': label || 'Annotations' });
    this.verdict = null;
    const vbtn = (v, glyph, name) => el('button', {
      type: 'button', class: `small-btn annot-v v-${v}`, 'aria-pressed': 'false', 'aria-label': name, title: `${name} (${v === 'up' ? 'U' : 'B'})`,
      onclick: () => this.setVerdict(this.verdict === v ? null : v),
    }, glyph);
    this.upBtn = vbtn('up', '▲', 'Thumbs up');
    this.downBtn = vbtn('down', '▼', 'Thumbs down');
    this.score = el('input', { type: 'number', min: '0', max: '1', step: '0.1', class: 'annot-score-in', placeholder: 'score', 'aria-label': 'Score from 0 to 1' });
    this.labels = el('input', { type: 'text', class: 'annot-labels-in', placeholder: 'labels, comma separated', 'aria-label': 'Labels, comma separated' });
    this.comment = el('textarea', { class: 'annot-comment-in', rows: '2', placeholder: 'Comment', 'aria-label': 'Comment' });
    this.msg = el('span', { class: 'small annot-msg', 'aria-live': 'polite' });
    this.form = el('form', { class: 'annot-form', onsubmit: (e) => { e.preventDefault(); this.save(); } },
      el('div', { class: 'annot-form-row' }, this.upBtn, this.downBtn, this.score, this.labels),
      this.comment,
      el('div', { class: 'annot-form-row' }, el('button', { type: 'submit', class: 'btn annot-save' }, 'Save annotation'), this.msg));
    this.comment.addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); this.save(); } });
    this.element = el('section', { class: 'insp-block annot', 'aria-label': label || 'Annotations' },
      el('h3', { class: 'insp-sub' }, label || 'Annotations'), this.list, EMBEDDED ? '' : this.form);
  }

  get writable() { return !EMBEDDED && !this.store.readOnly; }

  setVerdict(v) {
    this.verdict = v;
    this.upBtn.setAttribute('aria-pressed', String(v === 'up'));
    this.downBtn.setAttribute('aria-pressed', String(v === 'down'));
  }

  /** Shows the annotations of `runId` (and `nodeId`, `instanceId`). */
  setTarget(runId, nodeId, instanceId) {
    this.form.hidden = !this.writable;
    const same = this.target && this.target.runId === runId && this.target.nodeId === (nodeId || null);
    if (same) { this.target.instanceId = instanceId || null; return; }
    this.target = { runId, nodeId: nodeId || null, instanceId: instanceId || null };
    this.setVerdict(null);
    this.msg.textContent = '';
    this.reload();
  }

  reload() {
    const t = this.target;
    if (!t || !t.runId) { this.list.replaceChildren(); return Promise.resolve(); }
    return loadAnnotations(this.store.token, t.runId, t.nodeId).then((items) => {
      if (this.target !== t) return;
      // The run's box shows the run's own annotations; a node's shows that node's.
      const shown = t.nodeId ? items : items.filter((a) => !a.nodeId || a.kind === 'check');
      this.items = shown;
      this.list.replaceChildren(...(shown.length ? shown.map((a) => annotationRow(a, {
        onDelete: this.writable ? (x) => this.remove(x) : null,
        onOpenNode: this.onOpenNode,
      })) : [el('li', { class: 'muted small' }, 'No annotations yet.')]));
      this.store.emit('annotations', t);
    }).catch(() => { /* the list stays as it was */ });
  }

  /** Saves what the form holds (or just a verdict, from a key or a run-bar button). */
  async save(verdict) {
    const t = this.target;
    if (!t || !this.writable) return;
    const body = { runId: t.runId };
    if (t.nodeId) body.nodeId = t.nodeId;
    if (t.nodeId && t.instanceId) body.instanceId = t.instanceId;
    const v = verdict || this.verdict;
    if (v) body.verdict = v;
    if (!verdict) {
      if (this.score.value !== '') body.score = Number(this.score.value);
      const labels = this.labels.value.split(',').map((s) => s.trim()).filter(Boolean);
      if (labels.length) body.labels = labels;
      if (this.comment.value.trim()) body.comment = this.comment.value.trim();
    }
    try {
      await api(this.store.token, '/api/annotations', { method: 'POST', body });
      if (!verdict) { this.score.value = ''; this.labels.value = ''; this.comment.value = ''; this.setVerdict(null); }
      this.msg.textContent = 'Saved.';
      this.msg.classList.remove('err');
      await this.reload();
    } catch (err) {
      this.msg.textContent = err.message;
      this.msg.classList.add('err');
    }
  }

  async remove(a) {
    try {
      await api(this.store.token, `/api/annotations/${encodeURIComponent(a.id)}`, { method: 'DELETE' });
      await this.reload();
    } catch (err) {
      this.msg.textContent = err.message;
      this.msg.classList.add('err');
    }
  }
}
