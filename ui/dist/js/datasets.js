// "Add to dataset": a node instance (its input and output) or the open run (its agent
// input and final output) becomes an example of a dataset (docs/evaluate.md#datasets).
// The server takes the example from the stored run (`POST /api/datasets/:name/examples`
// with `{from: {runId, nodeId?, instanceId?}}`, the control token), so the page sends only
// what it points at. A small dialog: pick an existing dataset or name a new one.

import { el } from './dom.js';
import { api } from './conn.js';
import { EMBEDDED } from './embedded.js';

const NAME_RULE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The one dialog of the page; `open(target)` with `{runId, nodeId?, instanceId?}`. */
export class DatasetDialog {
  constructor(store) {
    this.store = store;
    this.target = null;
    this.options = el('datalist', { id: 'dataset-names' });
    this.name = el('input', {
      type: 'text', class: 'ds-name-in', list: 'dataset-names', required: true, autocomplete: 'off',
      placeholder: 'a dataset, or a new name', 'aria-label': 'Dataset name', 'data-testid': 'dataset-name',
    });
    this.what = el('p', { class: 'small muted ds-what' });
    this.msg = el('span', { class: 'small ds-msg', 'aria-live': 'polite', 'data-testid': 'dataset-msg' });
    this.name.addEventListener('input', () => { this.msg.textContent = ''; this.msg.classList.remove('err'); });
    this.addBtn = el('button', { type: 'submit', class: 'btn ds-add' }, 'Add');
    this.form = el('form', { class: 'ds-form', onsubmit: (e) => { e.preventDefault(); this.add(); } },
      el('h3', { class: 'insp-sub' }, 'Add to dataset'),
      this.what,
      el('label', { class: 'ds-row' }, el('span', { class: 'small' }, 'Dataset'), this.name, this.options),
      el('div', { class: 'dialog-actions' }, this.msg, this.addBtn,
        el('button', { type: 'button', class: 'btn', onclick: () => this.dialog.close() }, 'Close')));
    this.dialog = el('dialog', { class: 'annot-dialog ds-dialog', 'aria-label': 'Add to dataset' }, this.form);
    document.body.append(this.dialog);
  }

  get writable() { return !EMBEDDED && !this.store.readOnly; }

  /** Opens the dialog for a run, or a node instance of it. */
  async open(target) {
    if (!this.writable || !target || !target.runId) return;
    this.target = target;
    this.what.textContent = target.nodeId
      ? `The input and output of ${target.instanceId ? `instance ${target.instanceId} of ` : ''}node ${target.nodeId} become one example (run ${target.runId}).`
      : `The run's agent input and final output become one example (run ${target.runId}).`;
    this.msg.textContent = '';
    this.msg.classList.remove('err');
    this.dialog.showModal();
    this.name.focus();
    try {
      const { datasets = [] } = await api(this.store.token, '/api/datasets');
      this.options.replaceChildren(...datasets.map((d) => el('option', { value: d.name }, `${d.examples} examples, version ${d.version}`)));
      if (!this.name.value && datasets.length) this.name.value = datasets[0].name;
    } catch { /* a new name still works */ }
  }

  async add() {
    const t = this.target;
    const name = this.name.value.trim();
    if (!t) return;
    if (!NAME_RULE.test(name)) {
      this.fail("A name is 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or a digit.");
      return;
    }
    const from = { runId: t.runId };
    if (t.nodeId) from.nodeId = t.nodeId;
    if (t.nodeId && t.instanceId) from.instanceId = t.instanceId;
    this.addBtn.disabled = true;
    try {
      const r = await api(this.store.token, `/api/datasets/${encodeURIComponent(name)}/examples`, { method: 'POST', body: { from } });
      this.msg.textContent = `Added to ${r.dataset.name} (version ${r.dataset.version}, ${r.dataset.examples} examples).`;
      this.msg.classList.remove('err');
    } catch (err) {
      this.fail(err.message);
    } finally {
      this.addBtn.disabled = false;
    }
  }

  fail(text) {
    this.msg.textContent = text;
    this.msg.classList.add('err');
  }
}

let shared = null;

/** The page's dialog (made on first use). */
export function datasetDialog(store) {
  if (!shared) shared = new DatasetDialog(store);
  return shared;
}
