// The diff view (#/diff/<runA>/<runB>): two runs side by side as the server's
// `GET /api/diff` compares them (store::diff — this page never re-derives a rule): per node
// instance counts, status, durations, tokens and cost of each run, the first divergence
// highlighted, the JSON diff of the selected node's inputs and outputs, and what people and
// agents said about each run (its annotations and node annotations, `GET /api/annotations`).
// `#/diff` (or `#/diff/<runA>`) shows the run pickers.

import { el, announce, typingTarget } from './dom.js';
import { api, takeToken } from './conn.js';
import { fmtDuration, fmtCount, countOf, fmtCostShort, costDetail, isUnpriced } from './format.js';
import { RunPicker } from './runpicker.js';
import { annotationRow, loadAnnotations } from './annotations.js';

const LABELS = {
  onlyInA: 'only in A', onlyInB: 'only in B', instances: 'instances', status: 'status',
  input: 'input', output: 'output', error: 'error',
};

/** `#/diff`, `#/diff/<a>`, `#/diff/<a>/<b>` → {a, b}; anything else → null. */
export function parseDiffRoute(hash) {
  const m = /^#\/diff(?:\/([^/]+)(?:\/([^/]+))?)?\/?$/.exec(hash || '');
  if (!m) return null;
  return { a: m[1] ? decodeURIComponent(m[1]) : null, b: m[2] ? decodeURIComponent(m[2]) : null };
}

/** The hash of the diff view of runs `a` and `b`. */
export function diffHash(a, b) {
  return `#/diff${a ? `/${encodeURIComponent(a)}` : ''}${a && b ? `/${encodeURIComponent(b)}` : ''}`;
}

function tokens(t) {
  const n = t ? (t.input || 0) + (t.output || 0) + (t.cacheRead || 0) + (t.cacheWrite || 0) : 0;
  return n ? fmtCount(n) : '–';
}

function cost(c) {
  if (!c || (c.usd === 0 && !(c.unpricedModels || []).length)) return '–';
  // An unpriced cost is one short badge; the models and what the rest cost are on hover.
  return el('span', { class: isUnpriced(c) ? 'badge unpriced' : '', title: costDetail(c) }, fmtCostShort(c));
}

/** A duration that never wraps mid-value. */
function duration(ms) {
  return el('span', { class: 'nowrap' }, fmtDuration(ms));
}

function value(v) {
  if (v === undefined) return el('span', { class: 'muted' }, '∅');
  const text = JSON.stringify(v, null, 1);
  return el('code', { class: 'diff-value', title: text.length > 200 ? text.slice(0, 2000) : null }, text.length > 200 ? `${text.slice(0, 200)}…` : text);
}

export class DiffPage {
  /**
   * `source`: `{runs() → Promise<[RunSummary]>, diff(a, b) → Promise<RunDiff>,
   * annotations(runId) → Promise<[Annotation]>}`.
   */
  constructor(root, main, source) {
    this.root = root;
    this.main = main;
    this.source = source;
    this.diff = null;
    this.selected = null;
    this.loading = 0;
    window.addEventListener('hashchange', () => this.route());
    this.route();
  }

  route() {
    const r = parseDiffRoute(location.hash);
    document.getElementById('nav-diff')?.classList.toggle('active', !!r);
    if (!r) {
      if (!this.root.hidden) {
        this.root.hidden = true;
        if (!/^#\/(memory|tasks?|threads|datasets)(\/|$)/.test(location.hash)) this.main.hidden = false;
      }
      return;
    }
    this.main.hidden = true;
    this.root.hidden = false;
    this.show(r.a, r.b);
  }

  async show(a, b) {
    const load = ++this.loading;
    const compare = () => { if (this.pickA.value && this.pickB.value) location.hash = diffHash(this.pickA.value, this.pickB.value); };
    this.pickA = new RunPicker('Run A', a, () => { if (!this.pickB.value) this.pickB.input.focus(); });
    this.pickB = new RunPicker('Run B', b, () => compare());
    const go = el('button', { type: 'button', class: 'btn', 'data-testid': 'diff-compare', onclick: compare }, 'Compare');
    this.body = el('div', { class: 'diff-body' });
    this.root.replaceChildren(
      el('div', { class: 'tg-head diff-head' },
        el('a', { href: '#/', class: 'btn' }, '← Runs'),
        el('h1', { class: 'tg-title' }, 'Compare runs'),
        el('label', { class: 'small diff-pick-label' }, 'A ', this.pickA.root),
        el('label', { class: 'small diff-pick-label' }, 'B ', this.pickB.root),
        go),
      this.body);
    this.source.runs().then((runs) => {
      if (load !== this.loading) return;
      this.pickA.setRuns(runs);
      this.pickB.setRuns(runs);
    }).catch(() => { /* the pickers stay empty; the hash still works */ });
    if (!a || !b) {
      this.body.replaceChildren(el('p', { class: 'muted pad' }, 'Pick two runs to compare them node by node.'));
      return;
    }
    this.body.replaceChildren(el('p', { class: 'muted pad' }, 'Comparing…'));
    let diff;
    try {
      diff = await this.source.diff(a, b);
    } catch (e) {
      if (load !== this.loading) return;
      this.body.replaceChildren(el('p', { class: 'pad err-text', role: 'alert', 'data-testid': 'diff-error' }, `Cannot compare: ${e.message}`));
      return;
    }
    if (load !== this.loading) return;
    this.diff = diff;
    const first = diff.firstDivergence;
    this.render(first ? first.nodeId : (diff.nodes[0] && diff.nodes[0].nodeId));
  }

  render(selectNodeId) {
    const d = this.diff;
    const first = d.firstDivergence;
    const side = (label, s) => el('div', { class: 'diff-run' },
      el('strong', {}, `${label} `), el('a', { href: `#/run/${encodeURIComponent(s.runId)}` }, s.name || s.runId),
      el('span', { class: `pill st-${s.status}` }, s.status),
      el('span', { class: 'muted small' }, ' ', duration(s.durationMs), ` · ${countOf(s.nodes, 'node')}`,
        tokens(s.tokens) === '–' ? '' : ` · ${tokens(s.tokens)} tokens`, cost(s.cost) === '–' ? '' : [' · ', cost(s.cost)]));
    const relation = d.b.replayOf === d.a.runId ? el('p', { class: 'muted small pad', 'data-testid': 'diff-replay' }, 'B is a replay of A.')
      : d.a.replayOf === d.b.runId ? el('p', { class: 'muted small pad', 'data-testid': 'diff-replay' }, 'A is a replay of B.') : '';
    const banner = first
      ? el('p', { class: 'diff-first', role: 'status', 'data-testid': 'diff-first' },
        'First divergence: ', el('button', { type: 'button', class: 'link-button', onclick: () => this.select(first.nodeId) }, first.nodeId),
        ` (${LABELS[first.difference] || first.difference}${first.instance !== undefined && first.instance !== null ? `, instance ${first.instance + 1}` : ''}${first.seq !== null && first.seq !== undefined ? `, seq ${first.seq}` : ''})`)
      : el('p', { class: 'diff-same', role: 'status', 'data-testid': 'diff-first' }, 'No divergence: the runs did the same.');
    const sub = ['#', 'status', 'time', 'tokens', 'cost'];
    this.rows = new Map();
    const rows = d.nodes.map((n) => {
      const cells = (s) => s
        ? [String(s.instances), el('span', { class: `pill st-${s.status}` }, s.status), duration(s.durationMs), tokens(s.tokens), cost(s.cost)]
        : ['–', el('span', { class: 'muted' }, 'absent'), '–', '–', '–'];
      const isFirst = first && first.nodeId === n.nodeId;
      const tr = el('tr', {
        class: `diff-row${n.differences.length ? ' differs' : ''}${isFirst ? ' first' : ''}`,
        'data-node': n.nodeId, tabindex: '0', 'aria-selected': 'false',
        onclick: () => this.select(n.nodeId),
        onkeydown: (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); this.select(n.nodeId); } },
      },
      el('td', { class: 'mono diff-node', title: n.nodeId }, isFirst ? el('span', { class: 'diff-mark', title: 'First divergence' }, '▶ ') : '', n.nodeId),
      ...[...cells(n.a), ...cells(n.b)].map((c, i) => el('td', { class: `num${i === 5 ? ' side-b' : ''}` }, c)),
      el('td', {}, n.differences.map((x) => LABELS[x] || x).join(', ')));
      this.rows.set(n.nodeId, tr);
      return tr;
    });
    this.detail = el('section', { class: 'diff-detail', 'aria-label': 'Node diff', 'data-testid': 'diff-detail' });
    this.body.replaceChildren(
      el('div', { class: 'diff-runs' }, side('A', d.a), side('B', d.b)),
      this.annotations(d),
      relation,
      banner,
      el('div', { class: 'diff-main' },
        el('div', { class: 'tg-table-wrap diff-table-wrap' },
          el('table', { class: 'tg-table diff-table', 'data-testid': 'diff-table' },
            el('thead', {},
              el('tr', {}, el('th', { scope: 'col', rowspan: 2 }, 'Node'),
                el('th', { scope: 'colgroup', colspan: 5, class: 'diff-side' }, 'Run A'),
                el('th', { scope: 'colgroup', colspan: 5, class: 'diff-side side-b' }, 'Run B'),
                el('th', { scope: 'col', rowspan: 2 }, 'Differs')),
              el('tr', {}, ...[...sub, ...sub].map((h, i) => el('th', { scope: 'col', class: `diff-sub${i === 5 ? ' side-b' : ''}`, 'aria-label': `${i < 5 ? 'A' : 'B'} ${h}` }, h)))),
            el('tbody', {}, rows))),
        this.detail));
    if (selectNodeId) this.select(selectNodeId);
  }

  /** Both runs' annotations side by side (read after the table is drawn). */
  annotations(d) {
    const column = (label, runId) => {
      const list = el('ul', { class: 'annot-list', 'aria-label': `Annotations of run ${label}` }, el('li', { class: 'muted small' }, 'Loading…'));
      const count = el('span', { class: 'muted small' });
      const load = this.loading;
      Promise.resolve(this.source.annotations ? this.source.annotations(runId) : []).then((items) => {
        if (load !== this.loading) return;
        const nodeHref = (nodeId) => `#/run/${encodeURIComponent(runId)}/node/${encodeURIComponent(nodeId)}`;
        list.replaceChildren(...(items.length
          ? items.map((a) => annotationRow(a, { nodeHref, onOpenNode: (nodeId) => this.select(nodeId) }))
          : [el('li', { class: 'muted small' }, 'No annotations.')]));
        count.textContent = items.length ? `(${items.length})` : '';
      }).catch((e) => { list.replaceChildren(el('li', { class: 'small err-text' }, `Cannot read the annotations: ${e.message}`)); });
      return el('div', { class: 'diff-annot-side', 'data-testid': `diff-annotations-${label.toLowerCase()}` },
        el('h3', { class: 'insp-sub' }, `Annotations of ${label} `, count), list);
    };
    return el('details', { class: 'diff-annotations', open: true },
      el('summary', { class: 'small' }, 'Annotations'),
      el('div', { class: 'diff-annot-grid' }, column('A', d.a.runId), column('B', d.b.runId)));
  }

  select(nodeId) {
    const n = this.diff && this.diff.nodes.find((x) => x.nodeId === nodeId);
    if (!n) return;
    this.selected = nodeId;
    for (const [id, tr] of this.rows) {
      tr.classList.toggle('selected', id === nodeId);
      tr.setAttribute('aria-selected', id === nodeId ? 'true' : 'false');
    }
    const d = this.diff;
    const links = el('p', { class: 'small' },
      n.a ? el('a', { href: `#/run/${encodeURIComponent(d.a.runId)}/node/${encodeURIComponent(nodeId)}` }, 'Open in A') : '',
      n.a && n.b ? ' · ' : '',
      n.b ? el('a', { href: `#/run/${encodeURIComponent(d.b.runId)}/node/${encodeURIComponent(nodeId)}` }, 'Open in B') : '');
    let changes;
    if (n.changes.length) {
      changes = el('table', { class: 'diff-changes', 'data-testid': 'diff-changes' },
        el('thead', {}, el('tr', {}, ...['#', 'Field', 'Change', 'Path', 'A', 'B'].map((h) => el('th', { scope: 'col' }, h)))),
        el('tbody', {}, n.changes.map((c) => el('tr', { class: `op-${c.op}` },
          el('td', {}, String(c.instance + 1)), el('td', {}, c.field), el('td', {}, c.op),
          el('td', { class: 'mono' }, c.path || '(whole value)'), el('td', {}, value(c.a)), el('td', {}, value(c.b))))));
    } else {
      changes = el('p', { class: 'muted small' }, n.differences.length ? 'Inputs and outputs are the same; see the columns.' : 'No difference in this node.');
    }
    this.detail.replaceChildren(
      el('h2', { class: 'mono' }, nodeId),
      el('p', { class: 'small' }, n.differences.length ? `Differs: ${n.differences.map((x) => LABELS[x] || x).join(', ')}` : 'Same in both runs.'),
      changes,
      n.moreChanges ? el('p', { class: 'muted small' }, `… ${n.moreChanges} more changes not listed`) : '',
      links);
    announce(`${nodeId}: ${n.differences.length ? n.differences.map((x) => LABELS[x] || x).join(', ') : 'same'}`);
  }
}

// ---- boot: the page over the server's HTTP API ---------------------------------------
const root = document.getElementById('diff-page');
const main = document.querySelector('main.layout');
if (root && main) {
  const token = takeToken();
  const page = new DiffPage(root, main, {
    runs: () => api(token, '/api/runs?limit=200').then((list) => list.runs || []),
    diff: (a, b) => api(token, `/api/diff?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`),
    annotations: (runId) => loadAnnotations(token, runId),
  });
  // D in the run viewer: a replay against its source run, any other run against one to pick.
  document.addEventListener('keydown', (e) => {
    if (typingTarget(e) || e.ctrlKey || e.metaKey || e.altKey || e.key !== 'd' || main.hidden) return;
    const m = /^#\/run\/([^/]+)/.exec(location.hash);
    e.preventDefault();
    const runId = m ? decodeURIComponent(m[1]) : null;
    if (!runId) { location.hash = diffHash(null, null); return; }
    api(token, `/api/runs/${encodeURIComponent(runId)}`)
      .then((run) => { const source = run && run.meta && run.meta.replayOf; location.hash = source ? diffHash(source, runId) : diffHash(runId, null); })
      .catch(() => { location.hash = diffHash(runId, null); });
  });
  window.mindgateDiff = { page };
}
