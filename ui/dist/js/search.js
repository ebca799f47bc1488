// One search box over node names in the open run and over runs.
// "/" or Ctrl+K focuses it; arrows move, Enter opens, Escape closes.

import { el, typingTarget } from './dom.js';

const MAX = 40;

export class Search {
  constructor(host, store, router) {
    this.store = store;
    this.router = router;
    this.input = el('input', {
      type: 'search', class: 'search-input', placeholder: 'Search nodes and runs  ( / )',
      role: 'combobox', 'aria-expanded': 'false', 'aria-controls': 'search-results', 'aria-autocomplete': 'list',
      'aria-label': 'Search nodes in this run and runs',
    });
    this.results = el('ul', { id: 'search-results', class: 'search-results', role: 'listbox', hidden: true, 'aria-label': 'Search results' });
    host.append(this.input, this.results);
    this.items = [];
    this.active = -1;
    this.input.addEventListener('input', () => this.update());
    this.input.addEventListener('focus', () => { if (this.input.value) this.update(); });
    this.input.addEventListener('blur', () => setTimeout(() => this.close(), 150));
    this.input.addEventListener('keydown', (e) => this.onKey(e));
    document.addEventListener('keydown', (e) => {
      if ((e.key === '/' && !typingTarget(e)) || ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'k')) {
        e.preventDefault();
        this.input.focus();
        this.input.select();
      }
    });
  }

  update() {
    const q = this.input.value.trim().toLowerCase();
    const out = [];
    if (q) {
      const m = this.store.model;
      if (m) {
        for (const n of m.order) {
          if (n.name.toLowerCase().includes(q) || n.id.toLowerCase().includes(q)) {
            out.push({ kind: 'node', label: n.name, detail: `${n.kind} · ${n.insts.length} instance${n.insts.length === 1 ? '' : 's'}`, runId: m.runId, nodeId: n.id });
            if (out.length >= MAX) break;
          }
        }
      }
      let runs = 0;
      for (const r of this.store.runsOrdered) {
        if (runs >= 15) break;
        if ((r.name || '').toLowerCase().includes(q) || (r.app || '').toLowerCase().includes(q) || r.id.toLowerCase().includes(q)) {
          out.push({ kind: 'run', label: r.name || r.id, detail: `run · ${r.status} · ${r.app || ''}`, runId: r.id, nodeId: null });
          runs++;
        }
      }
    }
    this.items = out;
    this.active = out.length ? 0 : -1;
    this.render();
  }

  render() {
    const open = this.items.length > 0 || !!this.input.value.trim();
    this.results.hidden = !open;
    this.input.setAttribute('aria-expanded', String(open));
    if (!this.items.length) {
      this.results.replaceChildren(el('li', { class: 'muted small pad', role: 'option', 'aria-disabled': 'true' }, 'No matches'));
      this.input.removeAttribute('aria-activedescendant');
      return;
    }
    this.results.replaceChildren(...this.items.map((it, i) => el('li', {
      id: `sr-${i}`, role: 'option', class: `sr-item${i === this.active ? ' active' : ''}`, 'aria-selected': String(i === this.active),
      onmousedown: (e) => { e.preventDefault(); this.choose(i); },
    }, el('span', { class: `sr-kind ${it.kind}` }, it.kind === 'run' ? 'RUN' : 'NODE'), el('span', { class: 'sr-label' }, it.label), el('span', { class: 'muted small' }, it.detail))));
    this.input.setAttribute('aria-activedescendant', `sr-${this.active}`);
  }

  onKey(e) {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      if (!this.items.length) return;
      this.active = (this.active + (e.key === 'ArrowDown' ? 1 : -1) + this.items.length) % this.items.length;
      this.render();
    } else if (e.key === 'Enter') {
      e.preventDefault();
      if (this.active >= 0) this.choose(this.active);
    } else if (e.key === 'Escape') {
      this.input.value = '';
      this.close();
      this.input.blur();
    }
  }

  choose(i) {
    const it = this.items[i];
    if (!it) return;
    this.close();
    if (it.kind === 'node' && it.runId === this.store.runId) this.store.selectNode(it.nodeId, { reveal: true });
    else this.router.go(it.runId, it.nodeId);
  }

  close() {
    this.results.hidden = true;
    this.input.setAttribute('aria-expanded', 'false');
  }
}
