// Annotations: what a person (or an agent) says about a run or a node instance — thumbs
// up or down, a score, labels, a comment — and the results of `mindgate check`. The box
// reads `GET /api/annotations?runId&nodeId` and writes `POST /api/annotations`,
// `PATCH /api/annotations/:id` (an edit, from the ✎ of a row) and
// `DELETE /api/annotations/:id` with the control token; the server keeps each version
// before in the history, which a row of an edited annotation shows under "History". Agents' annotations are marked. Keys (outside a text field): U thumbs up,
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

/** Who wrote it: a person or an agent (marked), and its name when it has one. */
function whoBadge(author) {
  const agent = author && author.kind === 'agent';
  const name = author && author.name ? ` ${author.name}` : '';
  return el('span', { class: `annot-who badge${agent ? ' agent' : ''}`, title: agent ? 'Written by an agent (the agent token, e.g. MCP)' : 'Written by a person' }, `${agent ? 'agent' : 'person'}${name}`);
}

/** What an annotation says (verdict, score, labels), as inline parts. */
function sayParts(a) {
  const parts = [];
  if (a.verdict) parts.push(el('span', { class: `annot-verdict v-${a.verdict}`, 'aria-label': `thumbs ${a.verdict}` }, a.verdict === 'up' ? '▲' : '▼'));
  if (a.score !== undefined && a.score !== null) parts.push(el('span', { class: 'annot-score mono' }, `${a.scoreName || 'score'} ${a.score}`));
  for (const l of a.labels || []) parts.push(el('span', { class: 'chip annot-label' }, l));
  return parts;
}

/**
 * One annotation as a row: who, verdict, score, labels, comment, check result; with
 * `onEdit` an edit button, with `onHistory` (for an edited one) its earlier versions
 * behind a disclosure; with `nodeHref` the node it is about, linked.
 */
export function annotationRow(a, { onDelete, onOpenNode, onEdit, onHistory, nodeHref } = {}) {
  const parts = [whoBadge(a.author)];
  if (a.nodeId && nodeHref) parts.push(el('a', { class: 'mono small annot-node', href: nodeHref(a.nodeId), title: `Open node ${a.nodeId}` }, a.nodeId));
  parts.push(...sayParts(a));
  if (a.kind === 'check' && a.check) parts.push(checkSummary(a.check, onOpenNode));
  const edited = (a.version || 1) > 1;
  const row = el('li', { class: 'annot-row', 'data-annotation': a.id },
    el('div', { class: 'annot-line' }, ...parts,
      el('span', { class: 'muted small annot-when', title: edited ? `made ${fmtTime(a.createdAt)}, changed ${fmtTime(a.updatedAt)}` : null }, `${fmtTime(a.updatedAt || a.createdAt)}${edited ? ' · edited' : ''}`),
      onEdit && a.kind !== 'check' ? el('button', { type: 'button', class: 'chip-x annot-edit', 'aria-label': 'Edit this annotation', title: 'Edit (the version before is kept in its history)', onclick: () => onEdit(a, row) }, '✎') : '',
      onDelete ? el('button', { type: 'button', class: 'chip-x', 'aria-label': 'Delete this annotation', title: 'Delete (kept in its history)', onclick: () => onDelete(a) }, '✕') : ''),
    a.comment ? el('div', { class: 'annot-comment' }, a.comment) : '',
    edited && onHistory ? historyDisclosure(a, onHistory) : '');
  return row;
}

/** "History": the annotation's earlier versions (`GET /api/annotations/:id`), read when opened. */
function historyDisclosure(a, load) {
  const list = el('ol', { class: 'annot-history', 'aria-label': 'Earlier versions, newest first' });
  const box = el('details', { class: 'annot-history-box', 'data-testid': 'annot-history' },
    el('summary', { class: 'small muted' }, `History (${a.version - 1} earlier ${a.version - 1 === 1 ? 'version' : 'versions'})`), list);
  box.addEventListener('toggle', async () => {
    if (!box.open || list.childElementCount) return;
    list.replaceChildren(el('li', { class: 'muted small' }, 'Loading…'));
    try {
      const history = await load(a);
      list.replaceChildren(...[...history].reverse().map((h) => el('li', { class: 'annot-history-item' },
        el('div', { class: 'small' }, `${h.action === 'delete' ? 'Deleted' : 'Edited'} ${fmtTime(h.at)} by `, whoBadge(h.by), ' — before:'),
        el('div', { class: 'annot-line' }, ...sayParts(h.before), sayParts(h.before).length || h.before.comment ? '' : el('span', { class: 'muted small' }, '(nothing)')),
        h.before.comment ? el('div', { class: 'annot-comment' }, h.before.comment) : '')));
      if (!history.length) list.replaceChildren(el('li', { class: 'muted small' }, 'No earlier versions.'));
    } catch (err) {
      list.replaceChildren(el('li', { class: 'small err-text' }, err.message));
    }
  });
  return box;
}

/** The history of an annotation (its versions before this one, oldest first). */
export function loadHistory(token, id) {
  return api(token, `/api/annotations/${encodeURIComponent(id)}`).then((d) => d.history || []);
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
        onEdit: this.writable ? (x, row) => this.edit(x, row) : null,
        onHistory: EMBEDDED ? null : (x) => loadHistory(this.store.token, x.id),
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

  /** Turns a row into a form that edits its annotation (`PATCH`; the version before is kept). */
  edit(a, row) {
    if (row.querySelector('.annot-edit-form')) return;
    const verdict = el('select', { class: 'annot-verdict-in', 'aria-label': 'Verdict' },
      el('option', { value: '' }, 'no verdict'), el('option', { value: 'up' }, '▲ up'), el('option', { value: 'down' }, '▼ down'));
    verdict.value = a.verdict || '';
    const named = !!a.scoreName;
    const score = el('input', { type: 'number', step: 'any', class: 'annot-score-in', value: a.score ?? '', placeholder: a.scoreName || 'score', 'aria-label': named ? `Score (${a.scoreName})` : 'Score from 0 to 1' });
    if (!named) { score.min = '0'; score.max = '1'; }
    const labels = el('input', { type: 'text', class: 'annot-labels-in', value: (a.labels || []).join(', '), 'aria-label': 'Labels, comma separated' });
    const comment = el('textarea', { class: 'annot-comment-in', rows: '2', 'aria-label': 'Comment' });
    comment.value = a.comment || '';
    const msg = el('span', { class: 'small annot-msg', 'aria-live': 'polite' });
    const form = el('form', { class: 'annot-form annot-edit-form', 'aria-label': 'Edit the annotation' },
      el('div', { class: 'annot-form-row' }, verdict, score, labels),
      comment,
      el('div', { class: 'annot-form-row' },
        el('button', { type: 'submit', class: 'btn annot-save' }, 'Save changes'),
        el('button', { type: 'button', class: 'btn', onclick: () => form.remove() }, 'Cancel'), msg));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const body = {
        verdict: verdict.value || null,
        score: score.value === '' ? null : Number(score.value),
        labels: labels.value.split(',').map((x) => x.trim()).filter(Boolean),
        comment: comment.value.trim() || null,
      };
      try {
        await api(this.store.token, `/api/annotations/${encodeURIComponent(a.id)}`, { method: 'PATCH', body });
        this.msg.textContent = 'Saved.';
        this.msg.classList.remove('err');
        await this.reload();
      } catch (err) {
        msg.textContent = err.message;
        msg.classList.add('err');
      }
    });
    row.append(form);
    verdict.focus();
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
