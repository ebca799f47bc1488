// Append-only layered tree layout.
//
// Columns are tree depths (parent → child reads left to right). Each column
// is a stack that only grows downward: a node takes the first free row of its
// column at or below its parent's row. So placing a new node never moves an
// existing one (the layout is stable while a run streams in), placing is O(1),
// and every column stays sorted by y, which makes culling and hit-testing a
// binary search. A full pass (after fold/unfold) replays the same rule over
// the nodes in creation order, so it reproduces the incremental result.

export const BOX_W = 200;
export const BOX_H = 46;
export const COL_GAP = 70;
export const ROW_GAP = 12;
export const COL_W = BOX_W + COL_GAP;
export const ROW_H = BOX_H + ROW_GAP;

/** Nodes visible at first open of a big run; deeper subtrees start folded. */
export const OPEN_BUDGET = 250;

export class Layout {
  constructor(model) {
    this.model = model;
    this.cols = [];
    this.cursor = [];
    this.placedCount = 0;
    this.maxX = 0;
    this.maxY = 0;
    this.version = 0;
  }

  reset() {
    this.cols = [];
    this.cursor = [];
    this.placedCount = 0;
    this.maxX = 0;
    this.maxY = 0;
    for (const n of this.model.order) n.placed = false;
  }

  static hidden(n) {
    for (let a = n.parent; a; a = a.parent) if (a.folded) return true;
    return false;
  }

  place(n) {
    if (n.placed) return;
    if (n.parent && !n.parent.placed) this.place(n.parent);
    const d = n.depth;
    const py = n.parent ? n.parent.y : 0;
    const y = Math.max(py, this.cursor[d] || 0);
    n.x = d * COL_W;
    n.y = y;
    n.placed = true;
    this.cursor[d] = y + ROW_H;
    (this.cols[d] || (this.cols[d] = [])).push(n);
    this.placedCount++;
    if (n.x + BOX_W > this.maxX) this.maxX = n.x + BOX_W;
    if (n.y + BOX_H > this.maxY) this.maxY = n.y + BOX_H;
  }

  /** Lays out every visible node from scratch (fold/unfold, reparent). */
  full() {
    this.reset();
    for (const n of this.model.order) if (!Layout.hidden(n)) this.place(n);
    this.model.added.length = 0;
    this.model.structureDirty = false;
    this.version++;
  }

  /**
   * Places nodes created since the last call. Returns true if anything moved
   * or appeared. Existing boxes keep their positions.
   */
  sync() {
    const m = this.model;
    if (m.structureDirty) { this.full(); return true; }
    if (!m.added.length) return false;
    const big = m.nodes.size > OPEN_BUDGET;
    for (const n of m.added) {
      if (big && n.depth >= 2 && !n.placed && n.children.every((c) => !c.placed)) n.folded = true;
      if (!n.placed && !Layout.hidden(n)) this.place(n);
    }
    m.added.length = 0;
    this.version++;
    return true;
  }

  /** Folds deep subtrees of a big run so about `budget` boxes show. */
  autoFold(budget = OPEN_BUDGET) {
    const m = this.model;
    for (const n of m.order) n.folded = false;
    if (m.nodes.size <= budget) return;
    let visible = m.roots.length;
    let frontier = m.roots.slice();
    while (frontier.length) {
      const next = [];
      for (const n of frontier) {
        if (!n.children.length) continue;
        if (n.depth === 0 || visible + n.children.length <= budget) {
          visible += n.children.length;
          for (const c of n.children) next.push(c);
        } else {
          n.folded = true;
        }
      }
      frontier = next;
    }
  }

  /** The placed node under a world point, or null. */
  hit(wx, wy) {
    const d = Math.floor(wx / COL_W);
    if (d < 0 || wx - d * COL_W > BOX_W) return null;
    const col = this.cols[d];
    if (!col || !col.length) return null;
    let lo = 0, hi = col.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const n = col[mid];
      if (wy < n.y) hi = mid - 1;
      else if (wy > n.y + BOX_H) lo = mid + 1;
      else return n;
    }
    return null;
  }

  /** Calls fn for every placed node intersecting the world rectangle. */
  forEachIn(x0, y0, x1, y1, fn) {
    const d0 = Math.max(0, Math.floor(x0 / COL_W) - 1);
    const d1 = Math.min(this.cols.length - 1, Math.floor(x1 / COL_W) + 1);
    for (let d = d0; d <= d1; d++) {
      const col = this.cols[d];
      if (!col) continue;
      const x = d * COL_W;
      if (x > x1 || x + BOX_W < x0) continue;
      let lo = 0, hi = col.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (col[mid].y + BOX_H < y0) lo = mid + 1; else hi = mid;
      }
      for (let i = lo; i < col.length && col[i].y <= y1; i++) fn(col[i]);
    }
  }
}
