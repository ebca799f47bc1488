// The data source of an exported page (`mindgate export --html`): one run embedded as JSON
// in `<script type="application/json" id="mindgate-export">` — the run summary, its
// projection snapshot (the `GET /api/runs/:id/graph` nodes), every node's detail and the run
// report, the shapes the HTTP API serves. When it is present the page talks to no server:
// `api()` answers from it and the feed delivers the snapshot in `graph.snapshot` parts, so
// the store applies it with the same graphdelta.js as a live one. Absent, nothing changes.

const SNAPSHOT_PART_NODES = 500;

function read() {
  const node = typeof document !== 'undefined' ? document.getElementById('mindgate-export') : null;
  if (!node) return null;
  try { return JSON.parse(node.textContent); } catch { return null; }
}

/** The embedded run export, or null on a served page. */
export const EMBEDDED = read();

if (EMBEDDED && EMBEDDED.run && !location.hash.startsWith('#/run/')) {
  history.replaceState(null, '', `#/run/${encodeURIComponent(EMBEDDED.run.id)}`);
}

function notFound(path) {
  const err = new Error(`not in this exported file: ${path}`);
  err.status = 404;
  err.code = 'not_found';
  return err;
}

/** `api()` of an exported page: GET answers from the embedded run; anything else is refused. */
export async function embeddedApi(path, method = 'GET') {
  const e = EMBEDDED;
  const id = encodeURIComponent(e.run.id);
  if (method !== 'GET') throw Object.assign(new Error('this is an exported file: nothing can be changed'), { status: 403, code: 'forbidden' });
  const url = new URL(path, 'http://export.invalid');
  const p = url.pathname;
  if (p === '/api/runs') return { runs: [e.run], nextBefore: null };
  if (p === `/api/runs/${id}`) return { ...e.run, pauses: [] };
  if (p === `/api/runs/${id}/report` && e.report) return e.report;
  if (p === '/api/annotations') {
    const nodeId = url.searchParams.get('nodeId');
    const all = e.annotations || [];
    return { annotations: nodeId ? all.filter((a) => a.nodeId === nodeId) : all };
  }
  if (p === `/api/runs/${id}/graph`) return { runId: e.run.id, nodes: e.snapshot.nodes, edges: e.snapshot.edges || [], ...(e.snapshot.times || {}) };
  const node = p.startsWith(`/api/runs/${id}/nodes/`) ? decodeURIComponent(p.slice(`/api/runs/${id}/nodes/`.length)) : null;
  if (node !== null && e.nodes && e.nodes[node]) return e.nodes[node];
  throw notFound(path);
}

/** The feed messages of the exported run: welcome, the run list, then the snapshot on subscribe. */
export function embeddedWelcome() {
  return [
    { type: 'welcome', version: EMBEDDED.mindgate || '', readOnly: true, exported: true },
    { type: 'runs', runs: [EMBEDDED.run] },
    { type: 'state', breakpoints: [], mode: 'run', pauses: [], apps: [] },
  ];
}

/** The `graph.snapshot` parts a subscribe to the exported run is answered with. */
export function embeddedSnapshot(runId) {
  if (!EMBEDDED || runId !== EMBEDDED.run.id) return [];
  const nodes = EMBEDDED.snapshot.nodes || [];
  const seq = EMBEDDED.snapshot.seq ?? null;
  const parts = [];
  for (let i = 0; i < nodes.length || i === 0; i += SNAPSHOT_PART_NODES) {
    const more = i + SNAPSHOT_PART_NODES < nodes.length;
    const part = { type: 'graph.snapshot', runId, seq, nodes: nodes.slice(i, i + SNAPSHOT_PART_NODES), more };
    // The run's held and work time ride on the last part, as the live feed sends them.
    if (!more && EMBEDDED.snapshot.times) part.times = EMBEDDED.snapshot.times;
    parts.push(part);
  }
  return parts;
}
