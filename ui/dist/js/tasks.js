// The Tasks page: coding-agent sessions (DSH, pi, Claude Code, Codex, Gemini CLI, OpenCode) found by
// `mindgate serve` (#/tasks) and one session's task graph (#/task/<id>), fed by
// /task-graph/api/*. A task view follows its session live over /task-graph/api/live
// (Server-Sent Events: the whole graph once, then `delta`s with just the changed nodes and
// edges); clicking a node lists its trajectory events.

import { el } from './dom.js';
import { fmtDuration, fmtTime, countOf, fmtCostShort } from './format.js';
import { emptyState } from './firststeps.js';
import { TaskGraphView, applyDelta, fmtMs } from './taskgraph.js';
import { TaskOverviewView } from './taskoverview.js';
import { describeWhole } from './pathgroups.js';
import { TaskTimelineView } from './tasktimeline.js';
import { TaskUsageView } from './taskusage.js';
import { TaskSearchView } from './tasksearch.js';

const API = '/task-graph/api';

/** Runs `fn` when the page is idle (soon at the latest). */
function afterIdle(fn) {
  if (typeof requestIdleCallback === 'function') requestIdleCallback(fn, { timeout: 500 });
  else setTimeout(fn, 50);
}

/**
 * Makes the page's number and time formats once, while it waits for the server's answer: the
 * first `toLocaleString` loads the locale's data (~20 ms of the header's first render on a
 * cold page, on the page open's critical path).
 */
function warmFormats() {
  (1234567).toLocaleString();
  clockTime();
}

/** The live badge's time of day: one formatter, made once (made per update, the first update paid its set-up). */
let clock = null;
function clockTime(d = new Date()) {
  clock ??= new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: 'numeric', second: 'numeric' });
  return clock.format(d);
}
/** Turn details kept for zooming (each ~60 KB at 40 steps). */
const TURNS_KEPT = 8;

export function parseTaskRoute(hash) {
  if (/^#\/tasks\/?$/.test(hash || '')) return { page: 'list' };
  if (/^#\/tasks\/usage\/?$/.test(hash || '')) return { page: 'usage' };
  const s = /^#\/tasks\/search(?:\?([^#]*))?$/.exec(hash || '');
  if (s) return { page: 'search', query: new URLSearchParams(s[1] || '').get('q') || '' };
  const m = /^#\/task\/([^/?&]+)(?:\/(turn|timeline|graph))?(?:\/([^/?&]+))?(?:\?([^#]*))?/.exec(hash || '');
  if (m) {
    const q = new URLSearchParams(m[4] || '');
    const view = m[2] === 'turn' && !m[3] ? 'overview' : (m[2] || 'overview');
    return { page: 'task', id: decodeURIComponent(m[1]), view, turn: m[3] ? decodeURIComponent(m[3]) : null, node: q.get('node') };
  }
  return null;
}

// The control token conn.js keeps (remote access needs it on every request).
function token() {
  try { return sessionStorage.getItem('mindgate.token'); } catch { return null; }
}

async function getJson(url) {
  return (await getJsonText(url)).body;
}

/** GETs JSON: resolves to {body, text} (the text lets a caller see an unchanged answer). */
async function getJsonText(url) {
  const headers = { accept: 'application/json' };
  const t = token();
  if (t) headers.Authorization = `Bearer ${t}`;
  const res = await fetch(url, { headers });
  const text = await res.text();
  const receivedAt = performance.now();
  let body = null;
  try { body = JSON.parse(text); } catch { /* not JSON */ }
  if (!res.ok) throw new Error(body?.error || `${res.status} ${res.statusText}`);
  return { body, text, receivedAt, parseMs: performance.now() - receivedAt };
}

/** POSTs JSON with the control token; resolves to {status, body}, throws on a network failure. */
async function postJson(url, payload) {
  const headers = { accept: 'application/json', 'content-type': 'application/json' };
  const t = token();
  if (t) headers.Authorization = `Bearer ${t}`;
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(payload) });
  let body = null;
  try { body = await res.json(); } catch { /* not JSON */ }
  return { status: res.status, body };
}

/**
 * The headline counts as the server computed them (`summary.headline`, the same fields the CLI
 * and MCP show): never recounted here.
 */
function headlineText(h = {}) {
  const n = (x, one, many) => `${x ?? 0} ${(x ?? 0) === 1 ? one : many}`;
  return `${n(h.turns, 'turn', 'turns')}, ${n(h.steps, 'step', 'steps')}, ${n(h.tool_calls, 'tool call', 'tool calls')}` +
    (h.errors ? `, ${n(h.errors, 'error', 'errors')}` : '') + (h.retries ? `, ${n(h.retries, 'retry', 'retries')}` : '');
}

function pill(status) {
  return el('span', { class: `tg-pill st-${String(status || '').toLowerCase()}` }, status || '–');
}

export class TasksPage {
  constructor(root, main) {
    this.root = root;
    this.main = main;
    this.view = null;
    this.source = null;
    this.eventCache = new Map(); // seq -> events[]
    this.updates = 0;
    // A route the page already took (a zoom routes at its click) is not taken again.
    window.addEventListener('hashchange', () => { if (location.hash !== this.routed) this.route(); });
    this.route();
  }

  route() {
    this.routed = location.hash;
    const r = parseTaskRoute(location.hash);
    document.getElementById('nav-tasks')?.classList.toggle('active', !!r);
    if (!r) {
      this.leaveTask();
      this.root.hidden = true;
      // The other pages that hide the run viewer show it again themselves when they leave.
      if (!/^#\/(memory|diff|threads|datasets)(\/|$)/.test(location.hash)) this.main.hidden = false;
      return;
    }
    this.main.hidden = true;
    this.root.hidden = false;
    if (r.page === 'list') { this.leaveTask(); this.showList(); } else if (r.page === 'usage') { this.leaveTask(); this.showUsage(); } else if (r.page === 'search') { this.leaveTask(); this.showSearch(r.query); } else this.showTask(r);
  }

  leaveTask() {
    this.closeFeed();
    if (this.view) { this.view.destroy(); this.view = null; }
    if (this.timelineView) { this.timelineView.destroy(); this.timelineView = null; }
    this.overviewView = null;
    this.lastTurn = null;
    this.taskId = null;
  }

  /** The list page's header: back to runs, the title, the Sessions / Usage tabs, then `extra`. */
  listHead(current, ...extra) {
    const tab = (page, label, href) => el('a', { class: 'btn tg-tab', 'data-page': page, href, ...(page === current ? { 'aria-current': 'page' } : {}) }, label);
    const tabs = el('nav', { class: 'tg-tabs tg-list-tabs', 'aria-label': 'Tasks views' },
      tab('list', 'Sessions', '#/tasks'), tab('usage', 'Usage', '#/tasks/usage'));
    for (const a of tabs.children) a.classList.toggle('active', a.dataset.page === current);
    return el('div', { class: 'tg-head' },
      el('a', { href: '#/', class: 'btn' }, '← Runs'),
      el('h1', { class: 'tg-title' }, 'Tasks'),
      tabs,
      ...extra);
  }

  /** The box that searches inside every session (Enter opens #/tasks/search?q=…). */
  textSearchBox(value = '') {
    const input = el('input', { type: 'search', class: 'search-input tg-textsearch', value, placeholder: 'Search inside sessions…', title: 'Find text in every session: your messages, the model\'s replies, tool calls and their output (Enter)', 'aria-label': 'Search inside sessions' });
    input.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter') return;
      const q = input.value.trim();
      if (q) location.hash = `#/tasks/search?q=${encodeURIComponent(q)}`;
    });
    return input;
  }

  // ---- text search ----------------------------------------------------------------
  async showSearch(query) {
    const host = el('div', { class: 'ts-page' });
    const box = this.textSearchBox(query);
    this.root.replaceChildren(this.listHead('search', box), host);
    this.searchView = new TaskSearchView(host, getJson);
    await this.searchView.show(query);
  }

  // ---- usage ----------------------------------------------------------------------
  async showUsage() {
    const host = el('div', { class: 'tu-page' });
    this.root.replaceChildren(this.listHead('usage'), host);
    this.usageView = new TaskUsageView(host, getJson);
    await this.usageView.show();
  }

  // ---- list ---------------------------------------------------------------------
  async showList() {
    const filter = el('input', { type: 'search', class: 'search-input tg-filter', placeholder: 'Filter by id, agent, workspace, title…', 'aria-label': 'Filter tasks' });
    const body = el('tbody');
    const count = el('span', { class: 'muted small' }, 'Loading…');
    const table = el('table', { class: 'tg-table' },
      el('thead', {}, el('tr', {}, ...['Title', 'Agent', 'Workspace', 'Status', 'Started', 'Duration', 'Live', 'Id'].map((h) => el('th', { scope: 'col' }, h)))),
      body);
    this.root.replaceChildren(
      this.listHead('list',
        count,
        el('button', { type: 'button', class: 'btn', onclick: () => this.showList() }, 'Refresh'),
        this.textSearchBox(),
        filter),
      el('div', { class: 'tg-table-wrap' }, table));
    let tasks = [];
    try {
      tasks = (await getJson(`${API}/tasks`)).tasks || [];
    } catch (err) {
      count.textContent = `Could not list tasks: ${err.message}`;
      return;
    }
    const render = () => {
      const q = filter.value.trim().toLowerCase();
      const shown = q ? tasks.filter((t) => [t.id, t.agent, t.workspace, t.title].some((v) => String(v || '').toLowerCase().includes(q))) : tasks;
      count.textContent = shown.length === tasks.length ? countOf(tasks.length, 'session') : `${shown.length} of ${countOf(tasks.length, 'session')}`;
      body.replaceChildren(...shown.map((t) => el('tr', { class: 'tg-row', 'data-id': t.id },
        el('td', {}, el('a', { href: `#/task/${encodeURIComponent(t.id)}`, class: 'tg-link' }, t.title || t.id),
          // A subagent's session: marked, with a link to the session that spawned it.
          t.parent_session ? el('span', { class: 'tg-child-of small muted' }, ' ↳ subagent of ',
            el('a', { href: `#/task/${encodeURIComponent(t.parent_session)}`, class: 'tg-parent-link' }, t.parent_session.slice(0, 12))) : null),
        el('td', {}, t.agent),
        // The real folder from the recorded cwd; the agents' lossy folder encoding only on hover.
        el('td', { class: 'mono small', title: t.workspace }, t.cwd || t.workspace),
        el('td', {}, pill(t.status)),
        el('td', { class: 'small' }, t.start_time ? fmtTime(t.start_time) : '–'),
        el('td', { class: 'small' }, fmtDuration(t.duration_ms)),
        el('td', {}, t.live ? el('span', { class: 'tg-live' }, '● live') : ''),
        el('td', { class: 'mono small muted' }, t.id))));
      if (!tasks.length) {
        body.replaceChildren(el('tr', {}, el('td', { colspan: 8 }, emptyState('tasks-empty',
          'No coding-agent sessions found: Claude Code, Codex, Gemini CLI, OpenCode, pi and DSH sessions show up here by themselves. To read another folder:',
          el('code', { class: 'empty-command' }, 'mindgate serve --sessions PATH')))));
      }
    };
    filter.addEventListener('input', render);
    render();
  }

  // ---- one task -------------------------------------------------------------------
  // A task opens on its overview (one row per turn, /task/overview); a turn's graph
  // (#/task/<id>/turn/<phase>, /task/turn), the session's timeline (#/task/<id>/timeline) and
  // the whole graph (#/task/<id>/graph, /task) load when opened.
  async showTask(r) {
    if (this.taskId !== r.id) {
      this.leaveTask();
      this.openShell(r.id);
      this.loadOverview(r.id);
    }
    await this.showView(r);
  }

  /** The task page's frame: header, view tabs, the view host and the side panel. */
  openShell(id) {
    this.taskId = id;
    /** When the task was opened and when its overview first showed (ms on the page's clock). */
    this.openedAt = performance.now();
    this.overviewShownAt = null;
    /** The page open's parts (ms): the overview's answer, its parse, which source drew it first, that first frame. */
    this.openFigures = {};
    this.overviewText = null;
    this.eventCache = new Map();
    this.selected = null;
    this.updates = 0;
    this.lastVersion = undefined;
    this.graph = null;
    this.overview = null;
    this.timeline = null;
    this.turns = new Map();
    delete this.root.dataset.updates;
    this.header = el('div', { class: 'tg-summary' }, 'Loading…');
    this.stats = el('div', { class: 'tg-stats small muted' }, '');
    this.liveBadge = el('span', { class: 'tg-live-state muted small', 'data-state': 'off' }, '');
    const tab = (view, label) => el('a', { class: 'btn tg-tab', 'data-view': view, href: `#/task/${encodeURIComponent(id)}${view === 'overview' ? '' : `/${view}`}` }, label);
    this.tabs = el('nav', { class: 'tg-tabs', 'aria-label': 'Task views' },
      el('span', { class: 'tov-legend muted' },
        el('span', { class: 'tg-key seg-work' }), 'agent work ',
        el('span', { class: 'tg-key seg-user_reply' }), 'your reply ',
        el('span', { class: 'tg-key seg-permission' }), 'permission prompt'),
      tab('overview', 'Overview'), tab('timeline', 'Timeline'), tab('graph', 'Whole graph'));
    this.toolbar = el('div', { class: 'tg-toolbar' });
    this.viewHost = el('div', { class: 'tg-canvas-host' });
    this.panel = el('aside', { class: 'tg-panel', 'aria-label': 'Node and trajectory events' },
      el('p', { class: 'muted pad' }, 'Open a turn, then click a node to see its trajectory events.'));
    this.root.replaceChildren(
      el('div', { class: 'tg-head' },
        el('a', { href: '#/tasks', class: 'btn' }, '← Tasks'),
        this.header,
        this.liveBadge,
        this.tabs),
      el('div', { class: 'tg-head tg-head-stats' }, this.stats),
      this.toolbar,
      el('div', { class: 'tg-body' }, this.viewHost, this.panel));
    this.overviewHost = el('div', { class: 'tov-host' });
    this.viewHost.append(this.overviewHost);
    this.overviewView = new TaskOverviewView(this.overviewHost, {
      onZoom: (turn) => {
        this.zoomClickAt = performance.now();
        this.turnDetail(id, turn);
        location.hash = `#/task/${encodeURIComponent(id)}/turn/${encodeURIComponent(turn)}`;
        // Routed now, not at the hashchange event a task (and often a frame) later.
        this.route();
      },
      onPrefetch: (turn) => this.turnDetail(id, turn),
    });
  }

  async loadOverview(id) {
    // While the server reads and builds the session the page is idle: its formats are made then.
    afterIdle(warmFormats);
    this.overviewReady = (async () => {
      try {
        const { body: ov, text, receivedAt, parseMs } = await getJsonText(`${API}/task/overview?id=${encodeURIComponent(id)}`);
        if (this.taskId !== id) return;
        this.openFigures.fetchMs = Math.round(receivedAt - this.openedAt);
        this.openFigures.parseMs = Math.round(parseMs * 10) / 10;
        // The live feed's first message may have drawn this very overview already.
        if (text === this.overviewText) return;
        this.setOverview(ov, text);
      } catch (err) {
        this.header.replaceChildren(el('strong', { class: 'tg-error' }, `Could not load task ${id}: ${err.message}`));
      }
    })();
    return this.overviewReady;
  }

  /**
   * The detail of turn `turn` (/task/turn), loaded once and kept until the turn changes: a
   * click's zoom starts it at once, a pointer pressed or resting on the row before that.
   */
  turnDetail(id, turn) {
    let p = this.turns.get(turn);
    if (!p) {
      p = getJson(`${API}/task/turn?id=${encodeURIComponent(id)}&turn=${encodeURIComponent(turn)}`);
      p.catch(() => { if (this.turns.get(turn) === p) this.turns.delete(turn); });
      this.turns.set(turn, p);
      // A few turns are kept (the last ones asked for).
      if (this.turns.size > TURNS_KEPT) this.turns.delete(this.turns.keys().next().value);
    }
    return p;
  }

  /** Draws a whole overview; `text` is its JSON as received (an identical one is not redrawn). */
  setOverview(ov, text = null, from = 'fetch') {
    const t0 = performance.now();
    if (this.overview) this.turns.clear();
    this.overview = ov;
    this.overviewText = text;
    // The header first: the rows fit the height it leaves.
    this.renderHeader();
    this.overviewView.set(ov);
    this.overviewRenderMs = Math.round((performance.now() - t0) * 10) / 10;
    // When the page first showed this task's overview (ms on the page's clock), and painted it.
    if (this.overviewShownAt == null) {
      this.overviewShownAt = performance.now();
      const f = this.openFigures;
      f.from = from;
      f.renderMs = this.overviewRenderMs;
      requestAnimationFrame(() => setTimeout(() => {
        f.paintedMs = Math.round(performance.now() - this.openedAt);
        // What the first live update will run is run once now, while the page waits (no first-use costs on the append path).
        afterIdle(() => { if (this.overviewView) { clockTime(); this.overviewView.warm(); } });
      }, 0));
    }
  }

  /** Header: the title (whole on hover), the status, and one line of the server's figures. */
  renderHeader() {
    const ov = this.overview;
    if (!ov) return;
    const h = ov.headline || {};
    const cp = ov.critical_path || {};
    const subs = ov.subagents?.sessions ? ` (${countOf(ov.subagents.sessions, 'subagent session')} included)` : '';
    const stats = `${ov.agent || ''} · ${fmtDuration(ov.duration_ms)} · ${(ov.totals?.tokens?.total ?? h.tokens ?? 0).toLocaleString()} tokens${subs} · ` +
      `${fmtCostShort(ov.totals?.cost)} · ${headlineText(h)} · ` +
      `critical path ${fmtMs(cp.duration_ms || 0)} of agent work in ${fmtMs(cp.total_ms || 0)}` +
      (h.waiting_ms ? ` · waited for you ${fmtMs(h.waiting_ms)}` : '');
    // A live update that changed none of it leaves the header's elements (and their layout) alone.
    const key = JSON.stringify([ov.title, ov.session_id, ov.status, stats]);
    if (key === this.headerKey && this.header.firstChild?.classList?.contains('tg-title')) return;
    this.headerKey = key;
    this.header.replaceChildren(...[
      el('h1', { class: 'tg-title', title: ov.title }, ov.title || ov.session_id),
      pill(ov.status),
      ov.status === 'SUCCESS' ? this.induceControls(ov.session_id) : null].filter(Boolean));
    this.stats.replaceChildren(el('span', { class: 'tg-stats-line', title: stats }, stats));
  }

  /** Shows one view of the open task (the overview is kept, the others are rebuilt). */
  async showView(r) {
    const view = r.view || 'overview';
    // A later navigation wins over this one's pending loads.
    const seq = (this.viewSeq = (this.viewSeq || 0) + 1);
    for (const a of this.tabs.querySelectorAll('.tg-tab')) {
      const on = a.dataset.view === view;
      a.classList.toggle('active', on);
      if (on) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
    }
    this.root.dataset.view = view;
    if (this.view) { this.view.destroy(); this.view = null; }
    if (this.timelineView) { this.timelineView.destroy(); this.timelineView = null; }
    // The last view's layer goes too (left in place, it covered the overview's rows from the pointer).
    for (const layer of this.viewHost.querySelectorAll(':scope > .tg-graph-host')) layer.remove();
    this.overviewView.setAway(view !== 'overview');
    this.toolbar.replaceChildren();
    this.toolbar.hidden = view === 'overview';
    const id = r.id;
    if (view === 'graph') return this.showWholeGraph(id);
    // Every other view follows the overview feed.
    if (this.feed !== 'overview') this.followOverview(id);
    await this.overviewReady;
    if (this.taskId !== id || seq !== this.viewSeq) return;
    if (view === 'overview') {
      this.graph = null;
      if (this.lastTurn) this.overviewView.focusTurn(this.lastTurn);
      return;
    }
    if (view === 'turn') return this.showTurn(id, r.turn, r.node);
    if (view === 'timeline') return this.showTimeline(id, r.node);
  }

  /** Zoomed into one turn: its steps and tools as a graph (the turn's detail endpoint). */
  async showTurn(id, turn, node) {
    this.lastTurn = turn;
    const back = el('a', { class: 'btn', href: `#/task/${encodeURIComponent(id)}` }, '← Overview');
    const info = el('span', { class: 'tg-turn-title' }, '');
    this.toolbar.replaceChildren(back, info,
      el('span', { class: 'tg-legend small muted' },
        el('span', { class: 'tg-key crit' }), 'critical path ',
        el('span', { class: 'tg-key fail' }), 'failed ',
        el('span', { class: 'tg-key retry' }, '↻'), 'retried'),
      el('button', { type: 'button', class: 'btn', onclick: () => this.view?.setAllSteps(true) }, 'Fold steps'),
      el('button', { type: 'button', class: 'btn', onclick: () => this.view?.setAllSteps(false) }, 'Unfold all'),
      el('button', { type: 'button', class: 'btn', onclick: () => this.view?.fit() }, 'Fit'),
      el('button', {
        type: 'button', class: 'btn', 'data-testid': 'show-in-timeline',
        onclick: () => { location.hash = `#/task/${encodeURIComponent(id)}/timeline?node=${encodeURIComponent(this.selected || turn)}`; },
      }, 'Show in timeline'));
    const host = el('div', { class: 'tg-graph-host' });
    this.viewHost.append(host);
    const mine = new TaskGraphView(host, { onSelect: (nid) => this.selectNode(nid), single: true });
    this.view = mine;
    const t0 = performance.now();
    let detail;
    let fetched = t0;
    try {
      detail = await this.turnDetail(id, turn);
      fetched = performance.now();
    } catch (err) {
      info.replaceChildren(el('strong', { class: 'tg-error' }, `Could not load ${turn}: ${err.message}`));
      return;
    }
    if (this.taskId !== id || this.view !== mine) return;
    const row = this.overview?.turns.find((t) => t.id === turn);
    info.textContent = row ? `Turn ${row.turn}: ${row.user_message || ''}` : turn;
    info.title = info.textContent;
    this.graph = { session_id: `${detail.session_id}/${detail.turn_id}`, nodes: detail.nodes, edges: detail.edges, critical_path: detail.critical_path, summary: {} };
    this.view.setGraph(this.graph);
    if (node && this.graph.nodes.some((n) => n.id === node)) {
      this.view.select(node);
      this.view.focusBox(node);
      this.selectNode(node);
    }
    // Zoom time: from the click (or this view's start) to the turn's graph painted (the task
    // after the next frame's rendering; the keyboard focus, which lays the page out, after it).
    const from = this.zoomClickAt ?? t0;
    this.zoomClickAt = null;
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    this.zoomMs = Math.round((performance.now() - from) * 10) / 10;
    this.zoomFetchMs = Math.round((fetched - t0) * 10) / 10;
    if (this.view !== mine) return;
    this.root.dataset.zoomed = turn;
    mine.canvas.focus();
  }

  /** The waterfall of the whole session, linked to the turns' graphs. */
  async showTimeline(id, node) {
    this.graph = null;
    this.toolbar.replaceChildren(
      el('a', { class: 'btn', href: `#/task/${encodeURIComponent(id)}` }, '← Overview'),
      el('span', { class: 'small muted' }, 'Steps and calls on the time axis (long replies drawn short, ≈). Amber: critical path; grey: waiting for you; red: failed. Click a bar to open it in its turn.'));
    const host = el('div', { class: 'tg-graph-host' });
    this.viewHost.append(host);
    const mine = new TaskTimelineView(host, {
      onOpen: (bar) => {
        if (!bar.turn_id) return;
        location.hash = `#/task/${encodeURIComponent(id)}/turn/${encodeURIComponent(bar.turn_id)}?node=${encodeURIComponent(bar.id)}`;
      },
    });
    this.timelineView = mine;
    if (!this.timeline) {
      try {
        this.timeline = await getJson(`${API}/task/timeline?id=${encodeURIComponent(id)}`);
      } catch (err) {
        host.replaceChildren(el('p', { class: 'tg-error pad' }, `Could not load the timeline: ${err.message}`));
        return;
      }
    }
    if (this.taskId !== id || this.timelineView !== mine) return;
    this.timelineView.set(this.timeline, this.overview?.turns || []);
    if (node) this.timelineView.reveal(node);
    this.timelineView.scroller.focus();
  }

  /** Today's whole graph of the session (every turn at once), followed live. */
  async showWholeGraph(id) {
    this.toolbar.replaceChildren(
      el('a', { class: 'btn', href: `#/task/${encodeURIComponent(id)}` }, '← Overview'),
      el('span', { class: 'tg-legend small muted' },
        el('span', { class: 'tg-key crit' }), 'critical path ',
        el('span', { class: 'tg-key fail' }), 'failed ',
        el('span', { class: 'tg-key retry' }, '↻'), 'retried'),
      el('button', { type: 'button', class: 'btn', onclick: () => this.view?.setAllSteps(true) }, 'Fold steps'),
      el('button', { type: 'button', class: 'btn', onclick: () => this.view?.setAllSteps(false) }, 'Unfold all'),
      el('button', { type: 'button', class: 'btn', onclick: () => this.view?.fit() }, 'Fit'));
    const host = el('div', { class: 'tg-graph-host' });
    this.viewHost.append(host);
    const mine = new TaskGraphView(host, { onSelect: (nid) => this.selectNode(nid) });
    this.view = mine;
    // The overview's feed and version say nothing about this graph: until its own feed
    // answers, the page follows no version (a growth meanwhile arrives in the fetch).
    this.closeFeed();
    this.lastVersion = undefined;
    let graph;
    try {
      graph = await getJson(`${API}/task?id=${encodeURIComponent(id)}`);
    } catch (err) {
      this.header.replaceChildren(el('strong', { class: 'tg-error' }, `Could not load task ${id}: ${err.message}`));
      return;
    }
    if (this.taskId !== id || this.view !== mine) return;
    this.setGraph(graph);
    this.follow(id);
  }

  setGraph(graph) {
    this.graph = graph;
    this.view?.setGraph(graph);
    if (this.selected && graph.nodes.some((n) => n.id === this.selected)) this.renderPanel(this.selected);
  }

  /**
   * "Induce procedure" on a succeeded task: POST /api/memory/procedures/induce for the memory
   * user (the inspector's, else typed here), then open the stored procedure in #/memory.
   */
  induceControls(taskId) {
    if (this.induce?.taskId === taskId) return this.induce.box;
    const user = el('input', { type: 'text', class: 'tg-induce-user', placeholder: 'memory user', 'aria-label': 'Memory user for the procedure', value: sessionStorage.getItem('mindgate.memory.user') || '' });
    const out = el('span', { class: 'small muted', role: 'status' }, '');
    const run = async () => {
      out.textContent = 'Inducing…';
      const userId = user.value.trim();
      try {
        const { status, body } = await postJson('/api/memory/procedures/induce', { taskId, ...(userId ? { userId } : {}) });
        if (status === 200 || status === 201) {
          if (userId) sessionStorage.setItem('mindgate.memory.user', userId);
          out.textContent = body.created ? 'Procedure stored (quarantined until validated).' : 'A procedure with the same steps exists.';
          if (body.link) location.hash = body.link;
        } else {
          out.textContent = `Could not induce: ${body?.error || status}`;
        }
      } catch (err) {
        out.textContent = `Could not induce: ${err.message}`;
      }
    };
    const box = el('span', { class: 'tg-induce' }, user,
      el('button', { type: 'button', class: 'btn', onclick: run }, 'Induce procedure'), out);
    this.induce = { taskId, box };
    return box;
  }

  closeFeed() {
    if (this.source) { this.source.close(); this.source = null; }
    this.feed = null;
  }

  /** The overview's live feed: only the turns that changed re-render. */
  followOverview(id) {
    this.closeFeed();
    if (typeof EventSource === 'undefined') return;
    const t = token();
    const auth = t ? `&token=${encodeURIComponent(t)}` : '';
    const src = new EventSource(`${API}/live?id=${encodeURIComponent(id)}&view=overview${auth}`);
    this.source = src;
    this.feed = 'overview';
    const state = (s, text) => { this.liveBadge.dataset.state = s; this.liveBadge.textContent = text; };
    src.onopen = () => state('open', '● following');
    src.onerror = () => state('retry', 'reconnecting…');
    src.addEventListener('overview', (e) => {
      if (this.source !== src) return;
      // The same overview the page fetched (a session at rest) is not drawn twice, nor parsed
      // (1.3 MB at 250 turns: parsing it held the page ~15 ms, in the way of the first update).
      if (e.data !== this.overviewText && (!this.overview || e.lastEventId !== this.lastVersion)) {
        let ov;
        try { ov = JSON.parse(e.data); } catch { return; }
        this.setOverview(ov, e.data, 'feed');
      }
      this.lastVersion = e.lastEventId;
    });
    src.addEventListener('overview_delta', (e) => {
      if (this.source !== src || !this.overview) return;
      const t0 = performance.now();
      let d;
      try { d = JSON.parse(e.data); } catch { return; }
      this.lastVersion = e.lastEventId;
      this.lastEvent = 'overview_delta';
      this.deltaBytes = e.data.length;
      // A changed turn's detail is loaded again when it opens.
      for (const c of d.turns || []) if (c.turn?.id) this.turns.delete(c.turn.id);
      this.rowsRendered = this.overviewView.applyDelta(d);
      this.overview = this.overviewView.ov;
      this.timeline = null;
      this.renderHeader();
      this.applyMs = Math.round((performance.now() - t0) * 10) / 10;
      this.updates++;
      this.root.dataset.updates = String(this.updates);
      this.appliedAt = Date.now();
      // When the browser has laid out and painted it: the frame after this one begins.
      this.paintedAt = null;
      requestAnimationFrame(() => setTimeout(() => { this.paintedAt = Date.now(); }, 0));
      state('open', `● following · updated ${clockTime()}`);
    });
  }

  follow(id) {
    this.closeFeed();
    if (typeof EventSource === 'undefined') return;
    this.feed = 'graph';
    this.lastVersion = undefined;
    const t = token();
    const auth = t ? `&token=${encodeURIComponent(t)}` : '';
    const src = new EventSource(`${API}/live?id=${encodeURIComponent(id)}${auth}`);
    this.source = src;
    const state = (s, text) => { this.liveBadge.dataset.state = s; this.liveBadge.textContent = text; };
    src.onopen = () => state('open', '● following');
    src.onerror = () => state('retry', 'reconnecting…');
    const updated = () => {
      this.updates++;
      this.root.dataset.updates = String(this.updates);
      this.root.dataset.version = this.lastVersion;
      this.appliedAt = Date.now();
      state('open', `● following · updated ${clockTime()}`);
    };
    src.addEventListener('graph', (e) => {
      if (this.source !== src) return;
      let g;
      try { g = JSON.parse(e.data); } catch { return; }
      if (g.error) return;
      const first = this.lastVersion === undefined;
      const isUpdate = !first && e.lastEventId !== this.lastVersion;
      this.lastVersion = e.lastEventId;
      this.lastEvent = 'graph';
      this.setGraph(g);
      if (isUpdate) updated();
      else this.root.dataset.version = this.lastVersion;
    });
    src.addEventListener('delta', (e) => {
      if (this.source !== src || !this.graph) return;
      const t0 = performance.now();
      let d;
      try { d = JSON.parse(e.data); } catch { return; }
      if (d.error) return;
      if (String(d.base) !== this.lastVersion) {
        // A gap (should not happen on one stream): start over from the whole graph.
        src.close();
        this.lastVersion = undefined;
        this.follow(id);
        return;
      }
      this.lastVersion = e.lastEventId;
      this.lastEvent = 'delta';
      this.deltaBytes = e.data.length;
      this.setGraph(applyDelta(this.graph, d));
      this.applyMs = Math.round((performance.now() - t0) * 10) / 10;
      updated();
    });
    src.addEventListener('events', (e) => {
      let m;
      try { m = JSON.parse(e.data); } catch { return; }
      if (m.reset) this.eventCache = new Map();
      for (const ev of m.events || []) {
        const list = this.eventCache.get(ev.seq) || [];
        list.push(ev);
        this.eventCache.set(ev.seq, list);
      }
      if (this.selected) this.renderPanel(this.selected);
    });
  }

  selectNode(nid) {
    this.selected = nid;
    this.renderPanel(nid);
  }

  async renderPanel(nid) {
    const node = this.graph?.nodes.find((n) => n.id === nid);
    if (!node) return;
    const seqs = (node.event_ids || []).slice(0, 60);
    const list = el('ol', { class: 'tg-events', 'aria-label': 'Trajectory events' });
    const head = el('h3', { class: 'insp-sub pad', 'data-testid': 'trajectory-head' }, 'Trajectory events');
    const meta = node.meta || {};
    const facts = [
      ['Status', pill(node.status)],
      ['Type', node.type],
      ['Duration', fmtMs(node.duration_ms)],
      ['Started', node.start_time ? fmtTime(node.start_time) : '–'],
      meta.model ? ['Model', `${meta.provider || ''} ${meta.model}`] : null,
      meta.tokens ? ['Tokens', `${meta.tokens.input ?? 0} in · ${meta.tokens.output ?? 0} out · ${meta.tokens.cache_read ?? 0} cached`] : null,
      meta.attempts?.length > 1 ? ['Attempts', String(meta.attempts.length)] : null,
      meta.file ? ['File', meta.file] : null,
      meta.command ? ['Command', meta.command] : null,
      meta.error ? ['Error', el('span', { class: 'tg-error' }, String(meta.error).slice(0, 400))] : null,
      this.view?.critical.has(nid) ? ['Critical path', this.view.hot.has(nid) ? 'yes (hot)' : 'yes'] : null,
    ].filter(Boolean);
    this.panel.replaceChildren(
      el('h2', { class: 'pad tg-node-name' }, node.name || node.id),
      el('dl', { class: 'tg-facts pad' }, ...facts.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])),
      head,
      list);
    const missing = seqs.filter((s) => !this.eventCache.has(s));
    await Promise.all(missing.map(async (seq) => {
      try {
        const r = await getJson(`${API}/event?id=${encodeURIComponent(this.taskId)}&seq=${seq}`);
        this.eventCache.set(seq, r.events || []);
      } catch { this.eventCache.set(seq, []); }
    }));
    if (this.selected !== nid) return;
    const rows = seqs.flatMap((seq) => this.eventCache.get(seq) || []);
    head.textContent = trajectoryHead(rows.length, seqs.length, (node.event_ids || []).length);
    list.replaceChildren(...rows.map((ev) => {
      const data = ev.data === undefined ? '' : JSON.stringify(ev.data);
      return el('li', { class: 'tg-event', 'data-seq': String(ev.seq) },
        el('div', { class: 'tg-event-head' },
          el('span', { class: 'mono small muted' }, `#${ev.seq}`),
          el('span', { class: 'tg-event-type mono' }, ev.type),
          el('span', { class: 'small muted' }, ev.time_ms ? fmtTime(ev.time_ms) : '')),
        data ? el('details', {}, el('summary', { class: 'mono small' }, data.length > 120 ? `${data.slice(0, 120)}…` : data),
          el('pre', { class: 'mono small tg-pre' }, JSON.stringify(ev.data, null, 2).slice(0, 20000))) : '');
    }));
  }
}

const root = document.getElementById('tasks-page');
const main = document.querySelector('main.layout');
if (root && main) {
  const page = new TasksPage(root, main);
  window.mindgateTasks = {
    page,
    boxes: () => (page.view ? page.view.boxes() : []),
    /** The graph's drawn edges and critical path, polylines in page coordinates. */
    edgeLines: () => (page.view ? page.view.edgeLines() : []),
    graph: () => page.graph || null,
    /** The overview shown (the JSON of /task-graph/api/task/overview, live deltas applied). */
    overview: () => page.overview || null,
    /** The critical path band's drawn runs (page coordinates): kind, first node, left, right. */
    pathBand: () => (page.overviewView ? page.overviewView.bandRuns() : []),
    /** The overview's drawn bars of the rows in view, each with its path runs (page coordinates). */
    turnBars: () => (page.overviewView ? page.overviewView.drawnBars() : []),
    /** The overview's path segments by turn as the page keeps them (each with the regroup that made it), and as a whole regroup gives them. */
    pathGroups: () => (page.overviewView ? page.overviewView.groups.describe() : {}),
    wholePathGroups: () => describeWhole(page.overview?.critical_path?.segments || []),
    /** Timeline rows in view (page coordinates). */
    timelineRows: () => (page.timelineView ? page.timelineView.rows() : []),
    /** Figures of the page's own work, in ms (reported by the browser benchmark). */
    timings: () => ({
      overviewRenderMs: page.overviewRenderMs ?? null, overviewOpenMs: page.overviewShownAt != null ? Math.round(page.overviewShownAt - page.openedAt) : null, zoomMs: page.zoomMs ?? null,
      zoomFetchMs: page.zoomFetchMs ?? null, applyMs: page.applyMs ?? null, rowsRendered: page.rowsRendered ?? null,
      regrouped: page.overviewView ? page.overviewView.groups.rebuilt : null, warmed: page.overviewView?.warmed ?? false,
      open: page.openFigures ?? null,
    }),
    /** Live-feed state: which feed (`graph` or `overview`), the version shown, when the last update was applied (ms epoch). */
    live: () => ({
      feed: page.feed ?? null, version: page.lastVersion ?? null, appliedAt: page.appliedAt ?? null, updates: page.updates ?? 0,
      lastEvent: page.lastEvent ?? null, deltaBytes: page.deltaBytes ?? null, applyMs: page.applyMs ?? null,
      paintedAt: page.paintedAt ?? null,
    }),
  };
}

// The heading of a node's trajectory list: the rows it lists (a session record can hold
// several events), and when the node has more records than the first ones read, how many.
function trajectoryHead(rows, recordsRead, records) {
  return `Trajectory events (${rows}${records > recordsRead ? `, from the first ${recordsRead} of ${records} records` : ''})`;
}
