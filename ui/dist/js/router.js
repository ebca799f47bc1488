// Deep links: #/run/<runId>/node/<nodeId>. The hash is the source of truth for
// back/forward; selection inside a run rewrites it without a history entry.

export class Router {
  constructor(store) {
    this.store = store;
    window.addEventListener('hashchange', () => this.apply());
    store.on('select', () => this.write());
  }

  static parse(hash) {
    const m = /^#\/run\/([^/]+)(?:\/node\/(.+))?$/.exec(hash || '');
    if (!m) return { runId: null, nodeId: null };
    return { runId: decodeURIComponent(m[1]), nodeId: m[2] ? decodeURIComponent(m[2]) : null };
  }

  static format(runId, nodeId) {
    if (!runId) return '#/';
    return `#/run/${encodeURIComponent(runId)}${nodeId ? `/node/${encodeURIComponent(nodeId)}` : ''}`;
  }

  /** `#/tasks` and `#/task/<id>` belong to the Tasks page (tasks.js). */
  static isTasks(hash) {
    return /^#\/tasks?(\/|$)/.test(hash || '');
  }

  /** `#/memory…` belongs to the memory inspector (memory.js). */
  static isMemory(hash) {
    return /^#\/memory(\/|$)/.test(hash || '');
  }

  /** `#/diff…` belongs to the diff view (diffview.js). */
  static isDiff(hash) {
    return /^#\/diff(\/|$)/.test(hash || '');
  }

  /** `#/threads/<id>` belongs to the thread page (threadpage.js). */
  static isThread(hash) {
    return /^#\/threads(\/|$)/.test(hash || '');
  }

  /** `#/datasets…` belongs to the datasets page (datasetpage.js). */
  static isDatasets(hash) {
    return /^#\/datasets(\/|$)/.test(hash || '');
  }

  /** A hash another page owns (the run viewer leaves it alone). */
  static isOtherPage(hash) {
    return Router.isTasks(hash) || Router.isMemory(hash) || Router.isDiff(hash) || Router.isThread(hash) || Router.isDatasets(hash);
  }

  apply() {
    if (Router.isOtherPage(location.hash)) return;
    const { runId, nodeId } = Router.parse(location.hash);
    this.store.selectRun(runId, nodeId);
  }

  go(runId, nodeId) {
    const h = Router.format(runId, nodeId);
    if (location.hash !== h) location.hash = h; else this.apply();
  }

  write() {
    if (Router.isOtherPage(location.hash)) return;
    const h = Router.format(this.store.runId, this.store.nodeId);
    if (location.hash !== h && !(h === '#/' && !location.hash)) history.replaceState(null, '', h);
  }
}
