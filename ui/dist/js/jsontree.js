// A collapsible JSON tree that stays responsive on megabyte values: only
// expanded containers are walked, big containers are split into groups of
// 100 entries, long strings are cut (the full text opens in a viewer), and
// the rows are virtualised.

import { el } from './dom.js';
import { VirtualList } from './vlist.js';

const ROW = 20;
const CHUNK = 100;
const STR_MAX = 160;

const keysCache = new WeakMap();
function keysOf(v) {
  let k = keysCache.get(v);
  if (!k) { k = Array.isArray(v) ? null : Object.keys(v); keysCache.set(v, k); }
  return k;
}
function sizeOf(v) { return Array.isArray(v) ? v.length : keysOf(v).length; }
function isContainer(v) { return v !== null && typeof v === 'object'; }

export class JsonTree {
  constructor(host, label) {
    this.label = label;
    this.box = el('div', { class: 'json-tree' });
    host.append(this.box);
    this.list = new VirtualList(this.box, ROW, (r) => this.row(r), { label, role: 'tree' });
    this.value = undefined;
    this.expanded = new Set();
  }

  setValue(v) {
    if (v === this.value && this.flat) return;
    this.value = v;
    this.expanded = new Set(['$']);
    // Open the first level of small values so the common case needs no clicks.
    if (isContainer(v) && sizeOf(v) <= 12) {
      const walkOpen = (val, path, depth) => {
        if (!isContainer(val) || depth > 1) return;
        this.expanded.add(path);
        if (sizeOf(val) > 12) return;
        if (Array.isArray(val)) val.forEach((c, i) => walkOpen(c, `${path}/${i}`, depth + 1));
        else for (const k of keysOf(val)) walkOpen(val[k], `${path}/${k}`, depth + 1);
      };
      walkOpen(v, '$', 0);
    }
    this.rebuild();
  }

  rebuild() {
    const rows = [];
    const v = this.value;
    if (v === undefined) {
      rows.push({ depth: 0, key: null, value: undefined, path: '$', empty: true });
    } else {
      this.walk(rows, null, v, '$', 0);
    }
    this.flat = rows;
    const h = Math.min(rows.length, 16) * ROW + 4;
    this.box.style.height = `${h}px`;
    this.list.setItems(rows);
  }

  walk(rows, key, v, path, depth) {
    const container = isContainer(v);
    const open = container && this.expanded.has(path);
    rows.push({ depth, key, value: v, path, container, open });
    if (!open) return;
    const n = sizeOf(v);
    const keys = keysOf(v);
    const emit = (i) => {
      const k = keys ? keys[i] : i;
      this.walk(rows, k, v[k], `${path}/${k}`, depth + 1);
    };
    if (n <= CHUNK) {
      for (let i = 0; i < n; i++) emit(i);
      return;
    }
    for (let start = 0; start < n; start += CHUNK) {
      const end = Math.min(n, start + CHUNK) - 1;
      const cpath = `${path}/#${start}`;
      const copen = this.expanded.has(cpath);
      rows.push({ depth: depth + 1, chunk: [start, end], path: cpath, container: true, open: copen, keys });
      if (copen) for (let i = start; i <= end; i++) {
        const k = keys ? keys[i] : i;
        this.walk(rows, k, v[k], `${path}/${k}`, depth + 2);
      }
    }
  }

  toggle(path) {
    if (this.expanded.has(path)) this.expanded.delete(path); else this.expanded.add(path);
    const top = this.list.scroller.scrollTop;
    this.rebuild();
    this.list.scroller.scrollTop = top;
    const btn = this.box.querySelector(`[data-path="${CSS.escape(path)}"]`);
    if (btn) btn.focus();
  }

  row(r) {
    const pad = { paddingLeft: `${6 + r.depth * 14}px` };
    if (r.empty) return el('div', { class: 'jt-row muted', role: 'treeitem', style: pad }, '(none)');
    const parts = [];
    if (r.container) {
      parts.push(el('button', {
        type: 'button', class: 'jt-toggle', 'aria-expanded': r.open ? 'true' : 'false', 'data-path': r.path,
        'aria-label': `${r.open ? 'Collapse' : 'Expand'} ${r.chunk ? `entries ${r.chunk[0]} to ${r.chunk[1]}` : r.key ?? 'value'}`,
        onclick: () => this.toggle(r.path),
      }, r.open ? '▾' : '▸'));
    } else {
      parts.push(el('span', { class: 'jt-toggle-space' }));
    }
    if (r.chunk) {
      parts.push(el('span', { class: 'jt-meta' }, `[${r.chunk[0]} … ${r.chunk[1]}]`));
      return el('div', { class: 'jt-row', role: 'treeitem', style: pad }, parts);
    }
    if (r.key !== null) parts.push(el('span', { class: 'jt-key' }, typeof r.key === 'number' ? `${r.key}` : r.key), el('span', { class: 'jt-colon' }, ': '));
    parts.push(this.preview(r.value, r.open));
    return el('div', { class: 'jt-row', role: 'treeitem', 'aria-expanded': r.container ? String(r.open) : null, style: pad }, parts);
  }

  preview(v, open) {
    if (v === null) return el('span', { class: 'jt-null' }, 'null');
    switch (typeof v) {
      case 'string': {
        if (v.length <= STR_MAX) return el('span', { class: 'jt-str' }, JSON.stringify(v));
        return el('span', {},
          el('span', { class: 'jt-str' }, JSON.stringify(v.slice(0, STR_MAX)).slice(0, -1) + '…"'),
          el('button', { type: 'button', class: 'link-button small', onclick: () => showText(v) }, `show all ${v.length.toLocaleString()} chars`));
      }
      case 'number': return el('span', { class: 'jt-num' }, String(v));
      case 'boolean': return el('span', { class: 'jt-bool' }, String(v));
      case 'object': {
        const n = sizeOf(v);
        if (Array.isArray(v)) return el('span', { class: 'jt-meta' }, open ? `[ ${n} ]` : `[…] ${n} item${n === 1 ? '' : 's'}`);
        return el('span', { class: 'jt-meta' }, open ? `{ ${n} }` : `{…} ${n} key${n === 1 ? '' : 's'}`);
      }
      default: return el('span', { class: 'jt-meta' }, String(v));
    }
  }
}

function showText(text) {
  const dlg = document.getElementById('text-viewer');
  dlg.querySelector('pre').textContent = text;
  dlg.showModal();
}
