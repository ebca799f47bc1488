// Held gates with Continue / Retry / Inject / Abort, the JSON editor (a value
// to inject, or the edited input of a gate the app marked editable), why a
// replay holds here, and the log of resume results (taken / no-such-pause are
// shown, not hidden).

import { el, typingTarget } from './dom.js';
import { fmtDuration } from './format.js';
import { api } from './conn.js';

/** The JSON type of a value, as the app's `shape` check sees it. */
const jsonType = (v) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`);

/** One line of JSON, cut to `max` characters. */
const brief = (v, max = 160) => {
  let s;
  try { s = JSON.stringify(v); } catch { s = String(v); }
  return s.length > max ? `${s.slice(0, max)}…` : s;
};

export class PausePanel {
  constructor(host, store) {
    this.store = store;
    this.focusId = null;
    this.count = el('span', { class: 'count-badge', 'aria-label': 'held gates' }, '0');
    this.list = el('ul', { class: 'pause-list', 'aria-label': 'Held gates' });
    this.none = el('p', { class: 'muted small pad' }, 'Nothing is held. Set a breakpoint from a node\'s menu (right-click) or switch to Step.');
    this.log = el('ul', { class: 'result-log', role: 'log', 'aria-label': 'Resume results', 'aria-live': 'polite' });
    host.append(
      el('div', { class: 'panel-head' }, el('h2', {}, 'Held gates'), this.count,
        el('span', { class: 'muted small keys', title: 'Keyboard shortcuts for the focused gate' }, 'C R I A E')),
      this.none, this.list, this.log);
    this.dialog = this.buildDialog();
    store.on('state', () => this.render());
    store.on('run', () => this.render());
    store.on('runs', () => this.render());
    store.on('result', (results) => this.renderLog(results));
    setInterval(() => this.tick(), 1000);
    document.addEventListener('keydown', (e) => this.onKey(e));
  }

  ordered() {
    const cur = this.store.runId;
    return [...this.store.pauses].sort((a, b) => (b.runId === cur) - (a.runId === cur) || (a.since || 0) - (b.since || 0));
  }

  /** The gate the keyboard shortcuts act on. */
  focused() {
    const list = this.ordered();
    return list.find((p) => p.pauseId === this.focusId) || list[0] || null;
  }

  render() {
    const list = this.ordered();
    this.count.textContent = String(list.length);
    document.title = list.length ? `(${list.length} held) Mindgate` : 'Mindgate';
    this.count.classList.toggle('hot', list.length > 0);
    this.none.hidden = list.length > 0;
    const focus = this.focused();
    const disabled = this.store.readOnly;
    this.list.replaceChildren(...list.slice(0, 200).map((p) => {
      const run = this.store.runs.get(p.runId);
      const node = this.store.model && p.runId === this.store.runId ? this.store.model.nodes.get(p.nodeId) : null;
      const label = node ? node.name : p.nodeId;
      const act = (action) => () => { this.focusId = p.pauseId; this.act(p, action); };
      const item = el('li', {
        class: `pause-item${p === focus ? ' focused' : ''}`, role: 'group',
        'aria-label': `Held: ${p.nodeId} ${p.point}${p.reason ? `, ${p.reason}` : ''}`,
        onclick: (e) => { if (e.target.tagName !== 'BUTTON') { this.focusId = p.pauseId; this.render(); this.reveal(p); } },
      },
        el('div', { class: 'pause-line' },
          el('span', { class: 'pause-icon', 'aria-hidden': 'true' }),
          el('button', { type: 'button', class: 'link-button pause-node', title: 'Show in graph', onclick: () => this.reveal(p) }, label),
          el('span', { class: 'pill st-paused' }, p.point),
          p.reason ? el('span', { class: 'small muted' }, p.reason) : ''),
        el('div', { class: 'small muted pause-meta' },
          p.runId !== this.store.runId ? `${run ? run.name || run.id : p.runId} · ` : '',
          el('span', { class: 'since', 'data-since': String(p.since || Date.now()) }, `held ${fmtDuration(Date.now() - (p.since || Date.now()))}`),
          p.loop ? ` · loop ×${p.loop.repeats}` : ''),
        p.replay ? el('div', { class: `small pause-replay replay-${p.replay.role}`, role: 'note' },
          p.replay.message || '',
          p.replay.role === 'mismatch' && 'expected' in p.replay
            ? el('div', { class: 'mono small' }, `recorded ${brief(p.replay.expected)} · now ${brief(p.replay.actual)}`) : '') : '',
        el('div', { class: 'pause-actions' },
          el('button', { type: 'button', class: 'btn primary', onclick: act('continue'), disabled, title: 'Continue (C)' }, 'Continue'),
          el('button', { type: 'button', class: 'btn', onclick: act('retry'), disabled, title: 'Retry (R)' }, 'Retry'),
          el('button', { type: 'button', class: 'btn', onclick: act('inject'), disabled, title: 'Inject a value (I)' }, 'Inject'),
          p.editable ? el('button', { type: 'button', class: 'btn', onclick: act('edit'), disabled, title: 'Edit the input, then continue (E)' }, 'Edit input') : '',
          el('button', { type: 'button', class: 'btn danger', onclick: act('abort'), disabled, title: 'Abort the run (A)' }, 'Abort')));
      return item;
    }));
  }

  reveal(p) {
    if (p.runId !== this.store.runId) location.hash = `#/run/${encodeURIComponent(p.runId)}/node/${encodeURIComponent(p.nodeId)}`;
    else this.store.selectNode(p.nodeId, { reveal: true });
  }

  tick() {
    for (const s of this.list.querySelectorAll('.since')) {
      s.textContent = `held ${fmtDuration(Date.now() - Number(s.dataset.since))}`;
    }
  }

  renderLog(results) {
    this.log.replaceChildren(...results.slice(0, 6).map((r) => el('li', { class: `result ${r.kind}` }, r.text)));
  }

  act(p, action) {
    if (action === 'inject') { this.openInject(p); return; }
    if (action === 'edit') { if (p.editable) this.openEdit(p); return; }
    this.store.resume(p, action);
  }

  onKey(e) {
    if (e.ctrlKey || e.metaKey || e.altKey || typingTarget(e) || this.dialog.open) return;
    const map = { c: 'continue', r: 'retry', i: 'inject', a: 'abort', e: 'edit' };
    const action = map[e.key.toLowerCase()];
    if (!action) return;
    const p = this.focused();
    if (!p || this.store.readOnly) return;
    e.preventDefault();
    this.act(p, action);
  }

  buildDialog() {
    const area = el('textarea', {
      class: 'json-editor', rows: '10', spellcheck: 'false', 'aria-label': 'Value to inject (JSON)',
      'aria-describedby': 'inject-error',
    });
    const error = el('p', { id: 'inject-error', class: 'form-error', role: 'alert' });
    const title = el('h2', { id: 'inject-title' }, 'Inject a value');
    const target = el('p', { class: 'muted small' });
    const send = el('button', { type: 'submit', class: 'btn primary' }, 'Inject value');
    this.dialogTitle = title;
    this.dialogSend = send;
    const cancel = el('button', { type: 'button', class: 'btn', onclick: () => dlg.close() }, 'Cancel');
    const form = el('form', { method: 'dialog' }, title, target, area, error, el('div', { class: 'dialog-actions' }, cancel, send));
    const dlg = el('dialog', { class: 'inject-dialog', 'aria-labelledby': 'inject-title' }, form);
    document.body.append(dlg);
    const validate = () => {
      const text = area.value.trim();
      if (!text) return { ok: false, msg: 'Enter a JSON value (for example "done", 42, {"ok": true} or null).' };
      let value;
      try { value = JSON.parse(text); } catch (err) { return { ok: false, msg: `Invalid JSON: ${err.message}` }; }
      const original = this.editOriginal;
      if (this.mode === 'edit' && original !== undefined && jsonType(value) !== jsonType(original)) {
        return { ok: false, msg: `The input must stay ${jsonType(original)} (this is ${jsonType(value)})` };
      }
      return { ok: true, value };
    };
    area.addEventListener('input', () => { error.textContent = ''; area.removeAttribute('aria-invalid'); });
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const v = validate();
      if (!v.ok) {
        error.textContent = `${v.msg.replace(/\.?$/, '.')} Nothing was sent.`;
        area.setAttribute('aria-invalid', 'true');
        area.focus();
        return;
      }
      const p = this.injectTarget;
      dlg.close();
      if (p && this.mode === 'edit') this.store.resume(p, 'continue', undefined, v.value);
      else if (p) this.store.resume(p, 'inject', v.value);
    });
    area.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); form.requestSubmit(); }
    });
    this.injectArea = area;
    this.injectError = error;
    this.injectTargetText = target;
    return dlg;
  }

  setMode(mode) {
    this.mode = mode;
    const edit = mode === 'edit';
    this.dialogTitle.textContent = edit ? 'Edit the input' : 'Inject a value';
    this.dialogSend.textContent = edit ? 'Continue with this input' : 'Inject value';
    this.injectArea.setAttribute('aria-label', edit ? 'Edited input (JSON)' : 'Value to inject (JSON)');
  }

  /** The editor on the held call's input (read from node detail); Continue sends it as `input`. */
  async openEdit(p) {
    this.setMode('edit');
    this.injectTarget = p;
    this.editOriginal = undefined;
    this.injectError.textContent = '';
    this.injectArea.removeAttribute('aria-invalid');
    this.injectTargetText.textContent = `${p.nodeId} continues with this input instead of the one it was called with (Ctrl+Enter sends).`;
    this.injectArea.value = '';
    this.dialog.showModal();
    try {
      const d = await api(this.store.token, `/api/runs/${encodeURIComponent(p.runId)}/nodes/${encodeURIComponent(p.nodeId)}`);
      const insts = (d && d.instances) || [];
      const inst = insts.find((i) => i.instanceId === p.instanceId) || insts[insts.length - 1];
      if (inst && inst.input !== undefined && this.injectTarget === p && !this.injectArea.value) {
        this.editOriginal = inst.input;
        const text = JSON.stringify(inst.input, null, 2);
        if (text.length <= 100_000) this.injectArea.value = text;
      }
    } catch (err) {
      this.injectError.textContent = `Could not read the current input (${err.message}); type the whole input.`;
    }
    this.injectArea.focus();
  }

  openInject(p) {
    this.setMode('inject');
    this.editOriginal = undefined;
    this.injectTarget = p;
    this.injectError.textContent = '';
    this.injectArea.removeAttribute('aria-invalid');
    this.injectTargetText.textContent = `The held ${p.point} gate of ${p.nodeId} returns this value instead of running (Ctrl+Enter sends).`;
    let preset = '';
    const node = this.store.model && p.runId === this.store.runId ? this.store.model.nodes.get(p.nodeId) : null;
    const last = node && [...node.insts].reverse().find((i) => i.output !== undefined);
    if (last) { try { preset = JSON.stringify(last.output, null, 2); } catch { preset = ''; } }
    if (preset.length > 100_000) preset = '';
    this.injectArea.value = preset;
    this.dialog.showModal();
    this.injectArea.focus();
    this.injectArea.select();
  }
}
