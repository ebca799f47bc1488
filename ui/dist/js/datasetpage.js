// The datasets page (#/datasets, #/datasets/<name>, #/datasets/<name>/v/<N>): the live
// datasets at their newest versions (`GET /api/datasets`), and one dataset at one version
// (`GET /api/datasets/:name?version=N`) — its examples in order (input, expected, metadata,
// each source linked to its run and node in the viewer) beside its version log
// (`GET /api/datasets/:name/versions`), any version of which opens read as it was.
// The page only reads; examples are added from a run ("Add to dataset", datasets.js) or the
// CLI (docs/evaluate.md#datasets).

import { el, announce } from './dom.js';
import { api, takeToken } from './conn.js';
import { fmtTime, countOf } from './format.js';

/** `#/datasets` → {name: null}; `#/datasets/<n>` → {name}; `…/v/<N>` → {name, version}; else null. */
export function parseDatasetsRoute(hash) {
  const m = /^#\/datasets(?:\/([^/]+)(?:\/v\/(\d+))?)?\/?$/.exec(hash || '');
  if (!m) return null;
  return { name: m[1] ? decodeURIComponent(m[1]) : null, version: m[2] ? Number(m[2]) : null };
}

/** The hash of a dataset (at a version; the newest without one). */
export function datasetHash(name, version) {
  if (!name) return '#/datasets';
  return `#/datasets/${encodeURIComponent(name)}${version ? `/v/${version}` : ''}`;
}

/** The viewer's hash of a run (and a node of it). */
function runHash(runId, nodeId) {
  return `#/run/${encodeURIComponent(runId)}${nodeId ? `/node/${encodeURIComponent(nodeId)}` : ''}`;
}

const ACTIONS = {
  add: 'added', update: 'updated', remove: 'removed', import: 'imported', delete: 'deleted',
};

/** A JSON value in a box that scrolls (never cut): strings as they are. */
function jsonBox(v, testid) {
  if (v === undefined || v === null) return el('span', { class: 'muted' }, '—');
  const text = typeof v === 'string' ? v : JSON.stringify(v, null, 2);
  return el('pre', { class: 'ds-json', 'data-testid': testid, tabindex: '0' }, text);
}

function who(by) {
  const agent = by && by.kind === 'agent';
  const name = by && by.name ? ` ${by.name}` : '';
  return el('span', { class: `annot-who badge${agent ? ' agent' : ''}`, title: agent ? 'An agent (the agent token, e.g. MCP)' : 'A person (the control token)' },
    `${agent ? 'agent' : 'person'}${name}`);
}

function sourceCell(src) {
  if (!src || !src.runId) return el('span', { class: 'muted' }, 'written by hand');
  return el('div', { class: 'ds-source' },
    el('a', { href: runHash(src.runId, null), class: 'mono', 'data-testid': 'ds-source-run', title: `Open run ${src.runId}` }, src.runId),
    src.nodeId
      ? el('div', {}, el('a', { href: runHash(src.runId, src.nodeId), class: 'mono', 'data-testid': 'ds-source-node', title: `Open node ${src.nodeId} of run ${src.runId}` }, src.nodeId))
      : el('div', { class: 'muted small' }, 'the whole run'),
    src.instanceId ? el('div', { class: 'muted small mono', title: 'The node instance' }, `instance ${src.instanceId}`) : '');
}

export class DatasetsPage {
  /** `source`: `{list(), get(name, version), versions(name)}`, each a Promise of the API's answer. */
  constructor(root, main, source) {
    this.root = root;
    this.main = main;
    this.source = source;
    this.loading = 0;
    window.addEventListener('hashchange', () => this.route());
    this.route();
  }

  route() {
    const r = parseDatasetsRoute(location.hash);
    document.getElementById('nav-datasets')?.classList.toggle('active', !!r);
    if (!r) {
      if (!this.root.hidden) {
        this.root.hidden = true;
        if (!/^#\/(memory|tasks?|diff|threads)(\/|$)/.test(location.hash)) this.main.hidden = false;
      }
      return;
    }
    this.main.hidden = true;
    this.root.hidden = false;
    // Another page leaving on the same hash change may show the run view again after us.
    setTimeout(() => { if (parseDatasetsRoute(location.hash)) this.main.hidden = true; });
    if (r.name) this.showDataset(r.name, r.version); else this.showList();
  }

  /** The page's head: a way back (`back`, the runs by default), the title, then `rest`. */
  head(title, back, ...rest) {
    return el('div', { class: 'tg-head ds-head' },
      back || el('a', { href: '#/', class: 'btn' }, '← Runs'),
      el('h1', { class: 'tg-title', title }, title), ...rest);
  }

  async showList() {
    const load = ++this.loading;
    this.root.replaceChildren(this.head('Datasets', null), el('p', { class: 'muted pad' }, 'Loading…'));
    let datasets;
    try {
      datasets = (await this.source.list()).datasets || [];
    } catch (e) {
      if (load === this.loading) this.root.replaceChildren(this.head('Datasets', null), el('p', { class: 'pad err-text', role: 'alert', 'data-testid': 'ds-error' }, `Cannot read the datasets: ${e.message}`));
      return;
    }
    if (load !== this.loading) return;
    const body = datasets.length
      ? el('div', { class: 'tg-table-wrap' },
        el('table', { class: 'tg-table ds-table', 'data-testid': 'ds-list' },
          el('thead', {}, el('tr', {}, ...['Dataset', 'Latest version', 'Examples', 'Changed', 'Created'].map((h) => el('th', { scope: 'col' }, h)))),
          el('tbody', {}, datasets.map((d) => el('tr', { 'data-dataset': d.name },
            el('td', {}, el('a', { href: datasetHash(d.name), class: 'ds-name', title: d.name }, d.name)),
            el('td', { class: 'num' }, String(d.latest)),
            el('td', { class: 'num' }, String(d.examples)),
            el('td', { class: 'nowrap' }, fmtTime(d.updatedAt)),
            el('td', { class: 'nowrap' }, fmtTime(d.createdAt)))))))
      : el('div', { class: 'pad', 'data-testid': 'ds-empty' },
        el('p', {}, 'No datasets yet.'),
        el('p', { class: 'muted small' }, 'Open a run and use "Add to dataset" on the run bar or on a node in the inspector, or run `mindgate dataset add NAME --run RUN`.'));
    this.root.replaceChildren(this.head('Datasets', null, el('span', { class: 'muted small' }, countOf(datasets.length, 'dataset'))), body);
    announce(`${countOf(datasets.length, 'dataset')}`);
  }

  async download(d, href) {
    try {
      save(await this.source.exportBlob(href), `${d.name}-v${d.version}.jsonl`);
      announce(`Exported ${d.name} version ${d.version}`);
    } catch (e) {
      announce(`Cannot export: ${e.message}`);
    }
  }

  async showDataset(name, version) {
    const load = ++this.loading;
    const back = el('a', { href: '#/datasets', class: 'btn' }, '← Datasets');
    this.root.replaceChildren(this.head(name, back), el('p', { class: 'muted pad' }, 'Loading…'));
    let one;
    let versions;
    try {
      [one, versions] = await Promise.all([this.source.get(name, version), this.source.versions(name).then((v) => v.versions || [])]);
    } catch (e) {
      if (load === this.loading) this.root.replaceChildren(this.head(name, back), el('p', { class: 'pad err-text', role: 'alert', 'data-testid': 'ds-error' }, `Cannot read dataset ${name}: ${e.message}`));
      return;
    }
    if (load !== this.loading) return;
    const d = one.dataset;
    const examples = one.examples || [];
    const older = d.version !== d.latest;
    const exportHref = `/api/datasets/${encodeURIComponent(d.name)}/export?version=${d.version}`;
    const head = this.head(d.name, back,
      el('span', { class: 'ds-pill', 'data-testid': 'ds-version' }, `version ${d.version}${older ? ` of ${d.latest}` : ''}`),
      el('span', { class: 'muted small' }, countOf(examples.length, 'example')),
      el('a', {
        class: 'btn', href: exportHref, download: `${d.name}-v${d.version}.jsonl`, 'data-testid': 'ds-export',
        title: 'This version as JSON Lines (mindgate dataset import reads it)',
        // Read with the token (a server that wants one for reads too), saved from memory.
        onclick: (e) => { if (this.source.exportBlob) { e.preventDefault(); this.download(d, exportHref); } },
      }, 'Export JSONL'));
    const note = older
      ? el('p', { class: 'ds-older', role: 'status', 'data-testid': 'ds-older' },
        `An older version: the dataset as it was at version ${d.version}. `,
        el('a', { href: datasetHash(d.name) }, `Open the newest (version ${d.latest})`))
      : d.deletedAt ? el('p', { class: 'ds-older', role: 'status' }, `Deleted ${fmtTime(d.deletedAt)}; its versions stay readable.`) : '';
    const table = examples.length
      ? el('table', { class: 'tg-table ds-examples', 'data-testid': 'ds-examples' },
        el('thead', {}, el('tr', {}, ...['Example', 'Input', 'Expected', 'Metadata', 'Source'].map((h) => el('th', { scope: 'col' }, h)))),
        el('tbody', {}, examples.map((x) => el('tr', { 'data-example': x.id },
          el('td', { class: 'ds-ex-id' }, el('div', { class: 'mono small', title: x.id }, x.id), el('div', { class: 'small' }, who(x.addedBy)), el('div', { class: 'muted small nowrap' }, fmtTime(x.updatedAt))),
          el('td', {}, jsonBox(x.input, 'ds-input')),
          el('td', {}, jsonBox(x.expected, 'ds-expected')),
          el('td', {}, x.metadata && Object.keys(x.metadata).length ? jsonBox(x.metadata, 'ds-metadata') : el('span', { class: 'muted' }, '—')),
          el('td', {}, sourceCell(x.source))))))
      : el('p', { class: 'muted pad' }, `Version ${d.version} holds no examples.`);
    const log = el('ol', { class: 'ds-log', 'aria-label': 'Versions, newest first', 'data-testid': 'ds-log' },
      [...versions].reverse().map((v) => {
        const here = v.version === d.version;
        const what = `${ACTIONS[v.action] || v.action}${v.exampleIds && v.exampleIds.length ? ` ${countOf(v.exampleIds.length, 'example')}` : ''}`;
        return el('li', { class: `ds-log-item${here ? ' current' : ''}`, 'data-version': String(v.version) },
          here
            ? el('strong', { 'aria-current': 'page' }, `Version ${v.version}`)
            : el('a', { href: datasetHash(d.name, v.version === d.latest ? null : v.version), title: `Read the dataset as it was at version ${v.version}` }, `Version ${v.version}`),
          el('span', { class: 'small' }, ` ${what} → ${countOf(v.examples, 'example')}`),
          el('div', { class: 'muted small' }, who(v.by), ' ', fmtTime(v.at)),
          v.exampleIds && v.exampleIds.length ? el('div', { class: 'muted small mono ds-log-ids', title: v.exampleIds.join(', ') }, v.exampleIds.join(', ')) : '');
      }));
    this.root.replaceChildren(head, note,
      el('div', { class: 'ds-main' },
        el('div', { class: 'tg-table-wrap ds-examples-wrap' }, table),
        el('aside', { class: 'ds-versions', 'aria-label': 'Version log' }, el('h2', { class: 'insp-sub' }, 'Version log'), log)));
    announce(`${d.name} version ${d.version}: ${countOf(examples.length, 'example')}`);
  }
}

/** Saves `blob` as `file` (a link clicked for it). */
function save(blob, file) {
  const url = URL.createObjectURL(blob);
  const a = el('a', { href: url, download: file, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

// ---- boot: the page over the server's HTTP API ---------------------------------------
const root = document.getElementById('datasets-page');
const main = document.querySelector('main.layout');
if (root && main) {
  const token = takeToken();
  const path = (name) => `/api/datasets/${encodeURIComponent(name)}`;
  const page = new DatasetsPage(root, main, {
    list: () => api(token, '/api/datasets'),
    get: (name, version) => api(token, `${path(name)}${version ? `?version=${version}` : ''}`),
    versions: (name) => api(token, `${path(name)}/versions`),
    exportBlob: async (href) => {
      const res = await fetch(href, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
      if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
      return res.blob();
    },
  });
  window.mindgateDatasets = { page };
}
