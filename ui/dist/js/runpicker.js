// A searchable run picker (the Compare view's A and B): a combobox that finds a run by
// name, app, id prefix or start time as you type, instead of a bare <select> of ids.

import { el } from './dom.js';
import { fmtTime, fmtDuration, runDuration } from './format.js';

/** Most runs listed at once (the rest are found by typing). */
const MAX_SHOWN = 50;
let pickerCounter = 0;

/** Whether run `r` matches the typed text `q` (lower case): name, app, status, id prefix, start time. */
export function runMatches(r, q) {
  if (!q) return true;
  const id = (r.id || '').toLowerCase();
  return id.startsWith(q) || id.includes(q)
    || (r.name || '').toLowerCase().includes(q)
    || (r.app || '').toLowerCase().includes(q)
    || (r.status || '').toLowerCase() === q
    || fmtTime(r.startedAt).toLowerCase().includes(q);
}

/** The picked run as the input shows it: its name and id prefix. */
function shown(r) {
  return r ? `${r.name || r.id} · ${r.id.slice(0, 12)}` : '';
}

export class RunPicker {
  /** `label`: "Run A"; `chosen`: the run id picked now (or null); `onPick(id)` after a pick. */
  constructor(label, chosen, onPick) {
    this.id = `run-picker-${++pickerCounter}`;
    this.runs = [];
    this.value = chosen || '';
    this.onPick = onPick;
    this.active = -1;
    this.input = el('input', {
      type: 'search', class: 'diff-pick', role: 'combobox', 'aria-label': label, 'aria-autocomplete': 'list',
      'aria-expanded': 'false', 'aria-controls': `${this.id}-list`, autocomplete: 'off', spellcheck: 'false',
      placeholder: 'Search by name, id or time', value: chosen || '',
      onfocus: () => { this.input.select(); this.open(); },
      oninput: () => { this.active = -1; this.open(); },
      onkeydown: (e) => this.key(e),
      onblur: () => setTimeout(() => this.close(), 150),
    });
    this.list = el('ul', { class: 'run-picker-list', role: 'listbox', id: `${this.id}-list`, 'aria-label': `${label}: matching runs`, hidden: true });
    this.root = el('span', { class: 'run-picker' }, this.input, this.list);
  }

  /** The runs to pick from (newest first). */
  setRuns(runs) {
    this.runs = runs;
    const r = runs.find((x) => x.id === this.value);
    if (r && document.activeElement !== this.input) this.input.value = shown(r);
    // Text typed before the runs arrived is matched against them now.
    if (!this.list.hidden) this.open();
  }

  matches() {
    const q = this.input.value.trim().toLowerCase();
    const picked = this.runs.find((x) => x.id === this.value);
    // The input still shows the picked run: list every run.
    const text = picked && this.input.value === shown(picked) ? '' : q;
    return this.runs.filter((r) => runMatches(r, text));
  }

  open() {
    const found = this.matches();
    this.found = found.slice(0, MAX_SHOWN);
    this.list.replaceChildren(...this.found.map((r, i) => el('li', {
      role: 'option', id: `${this.id}-${i}`, class: `run-picker-option${i === this.active ? ' active' : ''}`,
      'aria-selected': i === this.active ? 'true' : 'false', 'data-run': r.id,
      onmousedown: (e) => { e.preventDefault(); this.pick(r); },
    },
    el('span', { class: `status-dot st-${r.status}`, title: r.status }),
    el('span', { class: 'run-picker-name' }, r.name || r.id),
    el('span', { class: 'muted small run-picker-meta' }, `${fmtTime(r.startedAt)} · ${fmtDuration(runDuration(r))} · ${r.id}`))),
    found.length > MAX_SHOWN ? el('li', { class: 'muted small run-picker-more' }, `${found.length - MAX_SHOWN} more: type to narrow`) : '',
    found.length ? '' : el('li', { class: 'muted small run-picker-more' }, 'No run matches'));
    this.list.hidden = false;
    this.input.setAttribute('aria-expanded', 'true');
    this.input.setAttribute('aria-activedescendant', this.active >= 0 ? `${this.id}-${this.active}` : '');
  }

  close() {
    this.list.hidden = true;
    this.input.setAttribute('aria-expanded', 'false');
    const r = this.runs.find((x) => x.id === this.value);
    if (r) this.input.value = shown(r);
  }

  key(e) {
    const n = (this.found || []).length;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      if (this.list.hidden) this.open();
      if (!n) return;
      this.active = e.key === 'ArrowDown' ? (this.active + 1) % n : (this.active - 1 + n) % n;
      this.open();
    } else if (e.key === 'Enter') {
      e.preventDefault();
      const r = this.found && this.found[this.active >= 0 ? this.active : 0];
      if (r) this.pick(r);
    } else if (e.key === 'Escape') {
      this.close();
    }
  }

  pick(r) {
    this.value = r.id;
    this.input.value = shown(r);
    this.close();
    if (this.onPick) this.onPick(r.id);
  }
}
