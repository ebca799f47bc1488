// A fixed-row-height virtual list: only the rows in view exist in the DOM, so
// a list of 100,000 entries costs the same as one of 30.

import { el } from './dom.js';

export class VirtualList {
  /**
   * `render(item, index)` returns a row element; rows are absolutely placed.
   * `opts.label` names the list for assistive technology.
   */
  constructor(host, rowHeight, render, opts = {}) {
    this.rowHeight = rowHeight;
    this.render = render;
    this.items = [];
    this.scroller = el('div', { class: 'vlist', role: opts.role || 'list', 'aria-label': opts.label || null, tabindex: opts.focusable ? '0' : null });
    this.spacer = el('div', { class: 'vlist-spacer' });
    this.scroller.append(this.spacer);
    host.append(this.scroller);
    this.rows = new Map(); // index -> element
    this.queued = false;
    this.scroller.addEventListener('scroll', () => this.queue());
    new ResizeObserver(() => this.queue()).observe(this.scroller);
  }

  setItems(items, { keepRows = false } = {}) {
    this.items = items;
    this.spacer.style.height = `${items.length * this.rowHeight}px`;
    if (!keepRows) this.clearRows();
    this.draw();
  }

  clearRows() {
    for (const r of this.rows.values()) r.remove();
    this.rows.clear();
  }

  /** Re-renders the rows in view (contents changed, count did not). */
  refresh() { this.clearRows(); this.draw(); }

  queue() {
    if (this.queued) return;
    this.queued = true;
    requestAnimationFrame(() => { this.queued = false; this.draw(); });
  }

  draw() {
    const h = this.scroller.clientHeight || 600;
    const top = this.scroller.scrollTop;
    const first = Math.max(0, Math.floor(top / this.rowHeight) - 4);
    const last = Math.min(this.items.length - 1, Math.ceil((top + h) / this.rowHeight) + 4);
    for (const [i, r] of this.rows) {
      if (i < first || i > last) { r.remove(); this.rows.delete(i); }
    }
    for (let i = first; i <= last; i++) {
      if (this.rows.has(i)) continue;
      const row = this.render(this.items[i], i);
      row.style.position = 'absolute';
      row.style.top = `${i * this.rowHeight}px`;
      row.style.height = `${this.rowHeight}px`;
      row.style.left = '0';
      row.style.right = '0';
      this.spacer.append(row);
      this.rows.set(i, row);
    }
  }

  scrollToIndex(i) {
    const top = i * this.rowHeight;
    const h = this.scroller.clientHeight;
    if (top < this.scroller.scrollTop || top + this.rowHeight > this.scroller.scrollTop + h) {
      this.scroller.scrollTop = Math.max(0, top - h / 3);
    }
  }
}
