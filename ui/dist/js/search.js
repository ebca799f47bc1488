// One search box over node names in the open run, over runs, and over the text of every
// stored run (GET /api/search: names, inputs, outputs, errors, tokens — the store's index).
// "/" or Ctrl+K focuses it; arrows move, Enter opens, Escape closes. A text hit opens its
// node and marks the match in the inspector.

import { el, typingTarget } from './dom.js';
import { api } from './conn.js';

const MAX = 40;
const TEXT_HITS = 20;
/** How long a chosen hit waits for the inspector to show its text before it gives up. */
const MARK_WAIT_MS = 5000;

export class Search {
  constructor(host, store, router) {
    this.store = store;
    this.router = router;
    this.input = el('input', {
      type: 'search', class: 'search-input', placeholder: 'Search runs, nodes and text  ( / )',
      role: 'combobox', 'aria-expanded': 'false', 'aria-controls': 'search-results', 'aria-autocomplete': 'list',
      'aria-label': 'Search nodes in this run, runs, and the text of every run',
    });
    this.results = el('ul', { id: 'search-results', class: 'search-results', role: 'listbox', hidden: true, 'aria-label': 'Search results' });
    host.append(this.input, this.results);
    this.items = [];
    this.active = -1;
    this.textHits = [];
    this.textQuery = '';
    this.pending = null;
    this.input.addEventListener('input', () => { this.update(); this.searchText(); });
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
    if (q && this.textQuery === q) out.push(...this.textHits);
    this.items = out;
    this.active = out.length ? 0 : -1;
    this.render();
  }

  /** Asks the server's search index for the box's text (debounced; the latest answer wins). */
  searchText() {
    clearTimeout(this.timer);
    const q = this.input.value.trim();
    if (!q || this.store.exported) return;
    this.timer = setTimeout(async () => {
      if (this.pending) this.pending.abort();
      const ctl = new AbortController();
      this.pending = ctl;
      try {
        const data = await api(this.store.token, `/api/search?q=${encodeURIComponent(q)}&limit=${TEXT_HITS}`, { signal: ctl.signal });
        if (this.input.value.trim() !== q) return;
        const names = new Map(this.store.runsOrdered.map((r) => [r.id, r.name || r.id]));
        this.textQuery = q.toLowerCase();
        this.textHits = (data.hits || []).map((h) => ({
          kind: 'text', label: h.nodeId || h.type, snippet: h.snippet, mark: h.mark,
          detail: `${h.type} · ${names.get(h.runId) || h.runId}`, runId: h.runId, nodeId: h.nodeId, query: q,
        }));
        this.update();
      } catch (e) {
        if (e.name !== 'AbortError') this.textHits = [];
      }
    }, 120);
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
      id: `sr-${i}`, role: 'option', class: `sr-item ${it.kind}${i === this.active ? ' active' : ''}`, 'aria-selected': String(i === this.active),
      onmousedown: (e) => { e.preventDefault(); this.choose(i); },
    }, el('span', { class: `sr-kind ${it.kind}` }, it.kind === 'run' ? 'RUN' : it.kind === 'text' ? 'TEXT' : 'NODE'), el('span', { class: 'sr-label' }, it.label),
    it.kind === 'text' ? snippetEl(it) : '', el('span', { class: 'muted small' }, it.detail))));
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
    if (it.kind === 'text') markWhenShown(document.getElementById('inspector'), it.query);
  }

  close() {
    this.results.hidden = true;
    this.input.setAttribute('aria-expanded', 'false');
  }
}

/** A hit's snippet with its match in a <mark>. */
function snippetEl(it) {
  const chars = [...(it.snippet || '')];
  if (!it.mark) return el('span', { class: 'sr-snippet' }, chars.join(''));
  const [a, b] = it.mark;
  return el('span', { class: 'sr-snippet' }, chars.slice(0, a).join(''), el('mark', {}, chars.slice(a, b).join('')), chars.slice(b).join(''));
}

/**
 * Marks the first occurrence of `query` in `host` (the inspector) once it shows it: the
 * node's detail arrives after the navigation, so this watches the host for a bounded time.
 */
export function markWhenShown(host, query) {
  if (!host || !query) return;
  const needle = query.toLowerCase();
  const tryMark = () => {
    const walker = document.createTreeWalker(host, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const at = n.nodeValue.toLowerCase().indexOf(needle);
      if (at < 0 || n.parentElement?.closest('mark.search-hit')) continue;
      const hit = n.splitText(at);
      hit.splitText(needle.length);
      const mark = el('mark', { class: 'search-hit' });
      hit.replaceWith(mark);
      mark.append(hit);
      mark.scrollIntoView({ block: 'center' });
      return true;
    }
    return false;
  };
  if (tryMark()) return;
  const observer = new MutationObserver(() => { if (tryMark()) stop(); });
  const timer = setTimeout(() => stop(), MARK_WAIT_MS);
  const stop = () => { observer.disconnect(); clearTimeout(timer); };
  observer.observe(host, { childList: true, subtree: true, characterData: true });
}
