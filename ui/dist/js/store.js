// One store fed by the /ws/ui feed. Views subscribe to its topics:
//   conn     connection state changed
//   runs     run list changed
//   state    breakpoints / mode / pauses changed
//   apps     attached apps changed
//   run      the selected run changed (new model)
//   model    the selected run's graph changed (at most once per frame), or
//            was replaced by a fresh snapshot (reconnect, fell behind)
//   select   node or instance selection changed
//   result   a resume / control outcome arrived (never swallowed)
//   inspect  focus the inspector on a node

import { toast } from './dom.js';
import { Emitter } from './emitter.js';
import { Feed, api } from './conn.js';
import { RunGraph } from './rungraph.js';
import { applySnapshot, applyDelta } from './graphdelta.js';

let requestCounter = 0;

export class Store extends Emitter {
  constructor(token) {
    super();
    this.token = token;
    this.readOnly = !token;
    this.conn = { state: 'connecting', reason: '', retryInMs: 0, version: '' };
    this.runs = new Map();
    this.runsOrdered = [];
    this.olderExhausted = false;
    this.breakpoints = [];
    this.mode = 'run';
    this.holdUnwatched = false; // keep error gates held with nobody watching (docs/http-api.md#unwatched-gates)
    this.pauses = [];
    this.apps = [];
    this.runId = null;
    this.model = null;      // the selected run's graph (rungraph.js), from the server projection
    this.incoming = null;   // a fresh snapshot still arriving in parts (reconnect, fell behind)
    this.loading = false;   // the selected run's first snapshot has not fully arrived
    this.nodeId = null;
    this.instanceId = null;
    this.pending = new Map(); // requestId -> resolve
    this.results = [];
    this.graph = null; // set by main
    this.modelQueued = false;
    this.runsQueued = false;
    this.feed = new Feed(token, (m) => this.handle(m), (s, d) => this.onConn(s, d));
  }

  start() { this.feed.connect(); }

  onConn(state, detail = {}) {
    this.conn = { ...this.conn, state, reason: detail.reason || '', retryInMs: detail.retryInMs || 0 };
    if (state === 'closed') {
      // Pause state is stale while disconnected; the server re-sends it.
      for (const [, r] of this.pending) r({ result: 'error', message: 'disconnected before the server answered' });
      this.pending.clear();
      // A snapshot cut off mid-parts is dropped: the resubscribe sends a whole one.
      this.incoming = null;
      if (this.loading && this.model && this.runId !== this.local) this.restartLoad();
    }
    this.emit('conn', this.conn);
  }

  // ---- feed messages -----------------------------------------------------

  handle(msg) {
    if (this.loading) {
      const t = performance.now();
      this.dispatch(msg);
      this.loadBusyMs += performance.now() - t;
    } else {
      this.dispatch(msg);
    }
  }

  dispatch(msg) {
    switch (msg.type) {
      case 'welcome':
        this.conn.version = msg.version || '';
        this.readOnly = !!msg.readOnly;
        this.exported = !!msg.exported;
        this.emit('conn', this.conn);
        this.feed.send({ type: 'subscribe', runId: '*' });
        if (this.runId && this.runId !== this.local) this.subscribeRun(this.runId);
        break;
      case 'state':
        if (Array.isArray(msg.breakpoints)) this.breakpoints = msg.breakpoints;
        if (msg.mode) this.mode = msg.mode;
        if (Array.isArray(msg.pauses)) this.pauses = msg.pauses;
        if (Array.isArray(msg.apps)) this.apps = msg.apps;
        this.holdUnwatched = !!msg.holdUnwatched;
        this.syncPaused();
        this.emit('state', this);
        break;
      case 'holdUnwatched':
        this.holdUnwatched = !!msg.hold;
        this.emit('state', this);
        break;
      // Deltas after the first `state` (docs/ui-feed.md); each is idempotent.
      case 'debug':
        if (Array.isArray(msg.breakpoints)) this.breakpoints = msg.breakpoints;
        if (msg.mode) this.mode = msg.mode;
        this.emit('state', this);
        break;
      case 'pause.held':
        if (msg.pause && msg.pause.pauseId) {
          const p = msg.pause;
          this.pauses = this.pauses.filter((q) => !(q.runId === p.runId && q.pauseId === p.pauseId));
          this.pauses.push(p);
          this.pauses.sort((x, y) => (x.since || 0) - (y.since || 0));
          this.syncPaused();
          this.emit('state', this);
          // A gate that holds while no run is open opens its run: the person sees what waits.
          if (p.runId) this.followIfIdle(p.runId, p.nodeId);
        }
        break;
      case 'pause.released': {
        const before = this.pauses.length;
        this.pauses = this.pauses.filter((q) => !(q.runId === msg.runId && q.pauseId === msg.pauseId));
        if (this.pauses.length !== before) {
          this.syncPaused();
          this.emit('state', this);
        }
        break;
      }
      case 'app.attached':
        if (msg.app && msg.app.connId != null) {
          this.apps = this.apps.filter((a) => a.connId !== msg.app.connId);
          this.apps.push(msg.app);
          this.apps.sort((x, y) => x.connId - y.connId);
          this.emit('apps', this);
        }
        break;
      case 'app.detached': {
        const before = this.apps.length;
        this.apps = this.apps.filter((a) => a.connId !== msg.connId);
        if (this.apps.length !== before) this.emit('apps', this);
        break;
      }
      case 'app.run': {
        const app = this.apps.find((a) => a.connId === msg.connId);
        if (app && msg.runId && !(app.runIds || []).includes(msg.runId)) {
          app.runIds = [...(app.runIds || []), msg.runId].slice(-100);
          this.emit('apps', this);
        }
        break;
      }
      case 'runs':
        this.runs = new Map();
        for (const r of msg.runs || []) this.runs.set(r.id, r);
        this.olderExhausted = (msg.runs || []).length < 200;
        this.syncRunInfo();
        this.queueRuns();
        break;
      case 'run.update':
        if (msg.run && msg.run.id) {
          const known = this.runs.has(msg.run.id);
          this.runs.set(msg.run.id, { ...this.runs.get(msg.run.id), ...msg.run });
          if (msg.run.id === this.runId) this.syncRunInfo();
          this.queueRuns();
          // Nothing open yet: follow the first live run that starts.
          if (!known && msg.run.status === 'running') this.followIfIdle(msg.run.id);
        }
        break;
      case 'run.deleted':
        this.runs.delete(msg.runId);
        this.queueRuns();
        if (msg.runId === this.runId) this.selectRun(null);
        break;
      case 'graph.snapshot':
        if (msg.runId === this.runId && this.model) this.snapshotPart(msg);
        break;
      case 'graph.delta':
        if (msg.runId === this.runId && this.model && applyDelta(this.incoming || this.model, msg) && !this.incoming && !this.loading) this.queueModel();
        break;
      case 'resume.refused':
        if (msg.runId === this.runId) {
          const text = `The app refused resume of ${msg.pauseId}: ${msg.code}${msg.message ? ` (${msg.message})` : ''}`;
          this.note('error', text);
          toast(text, 'error');
        }
        break;
      case 'resume.result': {
        const r = this.pending.get(msg.requestId);
        this.pending.delete(msg.requestId);
        if (r) r({ result: msg.result, message: msg.message });
        break;
      }
      case 'error': {
        const r = msg.requestId && this.pending.get(msg.requestId);
        if (r) { this.pending.delete(msg.requestId); r({ result: 'error', message: msg.message, code: msg.code }); }
        else {
          this.note('error', msg.message || 'server error');
          toast(msg.message || 'server error', 'error');
          // The selected run's graph was refused (the server's bound on followed runs).
          if (this.loading && msg.code === 'unavailable' && this.graph) this.graph.setProgress(msg.message || 'The server cannot follow this run now.');
        }
        break;
      }
      default:
    }
  }

  /**
   * One part of a `graph.snapshot`: the first snapshot of the selected run
   * fills its (empty) graph; a later one (the feed reconnected or fell
   * behind) fills a fresh graph that replaces it once complete.
   */
  snapshotPart(msg) {
    if (!this.incoming) this.incoming = this.loading ? this.model : new RunGraph(this.runId);
    const into = this.incoming;
    if (!applySnapshot(into, msg)) {
      if (this.loading && this.graph) this.graph.setProgress(`Loading run… ${into.nodes.size.toLocaleString()} nodes`);
      return;
    }
    this.incoming = null;
    if (into === this.model) this.finishLoad();
    else this.replaceGraph(into);
  }

  /** The selected run's first snapshot is in: lay it out and draw it. */
  finishLoad() {
    const m = this.model;
    this.loading = false;
    if (this.graph) {
      this.graph.open();
      if (!m.order.length) this.graph.setProgress('No events stored for this run (yet). New events appear here live.');
    }
    // Exposed for the performance tests: subscribe → graph complete and drawn.
    const figures = { runId: this.runId, partial: false, events: m.eventCount, nodes: m.nodes.size, ms: performance.now() - this.subscribedAt, at: performance.now(), pageBusyMs: this.loadBusyMs };
    this.lastOpen = figures;
    this.replayDone = figures;
    this.syncPaused();
    this.emit('model', m);
    // A deep link named a node: select it now that it can be drawn (unfolding its ancestors).
    if (this.nodeId && m.nodes.has(this.nodeId)) this.selectNode(this.nodeId, { reveal: true, instanceId: this.instanceId });
  }

  /** A fresh snapshot replaces the graph: folds, selection and the view stay. */
  replaceGraph(fresh) {
    const old = this.model;
    for (const n of fresh.order) {
      const before = old.nodes.get(n.id);
      if (before) n.folded = before.folded;
    }
    fresh.info = old.info;
    this.model = fresh;
    if (this.graph) {
      const view = { scale: this.graph.scale, tx: this.graph.tx, ty: this.graph.ty };
      this.graph.setModel(fresh);
      this.graph.open({ keepFolds: true, view });
      this.graph.selected = (this.nodeId && fresh.nodes.get(this.nodeId)) || null;
    }
    this.snapshotsApplied = (this.snapshotsApplied || 0) + 1;
    this.syncPaused();
    this.emit('model', fresh);
    this.emit('select', { reveal: false });
  }

  /** Starts the selected run's first load again (the socket closed mid-snapshot). */
  restartLoad() {
    const info = this.model.info;
    this.model = new RunGraph(this.runId);
    this.model.info = info;
    if (this.graph) { this.graph.setModel(this.model); this.graph.setProgress('Waiting for the server…'); }
    this.emit('run', this.model);
  }

  subscribeRun(runId) {
    this.subscribedAt = performance.now();
    this.loadBusyMs = 0;
    return this.feed.send({ type: 'subscribe', runId, projection: true });
  }

  /** The selected run's name, status and times, from the run list (or read once when it is not listed). */
  syncRunInfo() {
    const m = this.model;
    if (!m) return;
    const r = this.runs.get(m.runId);
    if (r) {
      m.info = { app: r.app || '', name: r.name || '', status: r.status || 'running', startedAt: r.startedAt ?? null, finishedAt: r.finishedAt ?? null };
      m.summary = r;
      this.queueModel();
      return;
    }
    if (m.infoAsked || m.runId === this.local) return;
    m.infoAsked = true;
    api(this.token, `/api/runs/${encodeURIComponent(m.runId)}`).then((run) => {
      if (run && run.id === m.runId && !this.runs.has(run.id)) {
        m.info = { app: run.app || '', name: run.name || '', status: run.status || 'running', startedAt: run.startedAt ?? null, finishedAt: run.finishedAt ?? null };
        m.summary = run;
        if (m === this.model) this.queueModel();
      }
    }).catch(() => { /* the run bar shows the id */ });
  }

  queueRuns() {
    if (this.runsQueued) return;
    this.runsQueued = true;
    requestAnimationFrame(() => {
      this.runsQueued = false;
      this.runsOrdered = [...this.runs.values()].sort((a, b) => (b.startedAt || 0) - (a.startedAt || 0));
      this.emit('runs', this.runsOrdered);
    });
  }

  queueModel() {
    if (this.graph) {
      if (!this.graph.progress.hidden && this.graph.opened) this.graph.setProgress('');
      this.graph.invalidate();
    }
    if (this.modelQueued) return;
    this.modelQueued = true;
    requestAnimationFrame(() => { this.modelQueued = false; this.emit('model', this.model); });
  }

  syncPaused() {
    if (!this.graph) return;
    const ids = new Set(this.pauses.filter((p) => p.runId === this.runId).map((p) => p.nodeId));
    this.graph.setPaused(ids);
  }

  // ---- selection ---------------------------------------------------------

  /**
   * Opens `runId` (at `nodeId`) when the runs view shows no run: a run that starts, or a
   * gate that holds, while nothing is selected. Never moves a person off another run or page.
   */
  followIfIdle(runId, nodeId = null) {
    if (this.runId || this.exported) return;
    const hash = location.hash || '';
    if (hash && hash !== '#' && hash !== '#/') return;
    location.hash = `#/run/${encodeURIComponent(runId)}${nodeId ? `/node/${encodeURIComponent(nodeId)}` : ''}`;
  }

  selectRun(runId, nodeId = null) {
    if (runId === this.runId) {
      if (nodeId !== this.nodeId) this.selectNode(nodeId, { reveal: true });
      return;
    }
    if (this.runId && this.runId !== this.local) this.feed.send({ type: 'unsubscribe', runId: this.runId });
    this.runId = runId;
    this.model = runId ? new RunGraph(runId) : null;
    this.incoming = null;
    this.nodeId = nodeId;
    this.instanceId = null;
    this.loading = !!runId;
    this.subscribedAt = performance.now();
    this.loadBusyMs = 0;
    if (this.graph) this.graph.setModel(this.model);
    this.syncRunInfo();
    if (runId && runId !== this.local) {
      if (!this.subscribeRun(runId)) this.graph && this.graph.setProgress('Waiting for the server…');
      else this.graph && this.graph.setProgress('Loading run…');
    }
    this.syncPaused();
    this.emit('run', this.model);
    this.emit('select', { reveal: true });
  }

  selectNode(nodeId, { reveal = false, instanceId = null } = {}) {
    this.nodeId = nodeId;
    this.instanceId = instanceId;
    if (this.graph && this.model) {
      const n = nodeId ? this.model.nodes.get(nodeId) : null;
      this.graph.selected = n || null;
      if (n && reveal && this.graph.opened) this.graph.reveal(n);
      this.graph.invalidate();
    }
    this.emit('select', { reveal });
  }

  selectInstance(instanceId) {
    this.instanceId = instanceId;
    this.emit('select', { reveal: false });
  }

  // ---- controls ----------------------------------------------------------

  control(type, payload, runId = '*') {
    const requestId = `ui-${Date.now().toString(36)}-${++requestCounter}`;
    const envelope = { gm: 1, seq: 0, ts: Date.now(), runId, type, payload: { ...payload } };
    if (type === 'exec.resume') envelope.payload.requestId = requestId;
    return new Promise((resolve) => {
      if (!this.feed.send({ type: 'control', requestId, envelope })) {
        resolve({ result: 'error', message: 'not connected to the server' });
        return;
      }
      if (type === 'exec.resume') {
        this.pending.set(requestId, resolve);
        setTimeout(() => {
          if (this.pending.delete(requestId)) resolve({ result: 'error', message: 'no answer from the server within 10 s' });
        }, 10000);
      } else {
        // Breakpoint and mode changes answer with a `debug` delta (or an `error`).
        this.pending.set(requestId, resolve);
        setTimeout(() => { if (this.pending.delete(requestId)) resolve({ result: 'ok' }); }, 1500);
      }
    });
  }

  /** Keeps error gates held with nobody watching (saved on the server), or not. */
  setHoldUnwatched(hold) {
    if (!this.feed.send({ type: 'hold.unwatched', hold })) toast('not connected to the server', 'error');
  }

  async resume(pause, action, output, input) {
    const payload = { pauseId: pause.pauseId, action };
    if (action === 'inject') payload.output = output;
    if (input !== undefined) payload.input = input;
    let out;
    if (this.feed.open) {
      out = await this.control('exec.resume', payload, pause.runId);
    } else {
      try {
        const body = { action };
        if (action === 'inject') body.output = output;
        if (input !== undefined) body.input = input;
        out = await api(this.token, `/api/runs/${encodeURIComponent(pause.runId)}/pauses/${encodeURIComponent(pause.pauseId)}/resume`, { method: 'POST', body });
      } catch (err) {
        out = { result: 'error', message: err.message };
      }
    }
    const kind = out.result === 'resumed' ? 'ok' : (out.result === 'taken' || out.result === 'no-such-pause') ? 'warn' : 'error';
    const text = resumeOutcome(action, pause.nodeId, out);
    this.note(kind, text);
    toast(text, kind);
    return out;
  }

  note(kind, text) {
    this.results.unshift({ kind, text, at: Date.now() });
    if (this.results.length > 30) this.results.length = 30;
    this.emit('result', this.results);
  }

  async addBreakpoint(matcher) {
    const out = await this.control('breakpoint.set', { matcher });
    this.reportControl(out, `Breakpoint ${describeMatcher(matcher)}`);
  }

  async removeBreakpoint(matcher) {
    const out = await this.control('breakpoint.clear', { matcher });
    this.reportControl(out, `Removed breakpoint ${describeMatcher(matcher)}`);
  }

  async setMode(mode) {
    const out = await this.control('mode.set', { mode });
    this.reportControl(out, `Mode ${mode}`);
  }

  reportControl(out, what) {
    if (out.result === 'error') {
      const text = `${what} failed: ${out.message}`;
      this.note('error', text);
      toast(text, 'error');
    } else {
      this.note('ok', what);
    }
  }

  async loadOlderRuns() {
    const last = this.runsOrdered[this.runsOrdered.length - 1];
    const q = new URLSearchParams({ limit: '200' });
    if (last && last.startedAt) q.set('before', String(last.startedAt));
    try {
      const data = await api(this.token, `/api/runs?${q}`);
      const list = (data && data.runs) || [];
      for (const r of list) if (!this.runs.has(r.id)) this.runs.set(r.id, r);
      if (list.length < 200 || data.nextBefore === null) this.olderExhausted = true;
      this.queueRuns();
    } catch (err) {
      toast(`Could not load older runs: ${err.message}`, 'error');
    }
  }

  async deleteRun(runId) {
    try {
      await api(this.token, `/api/runs/${encodeURIComponent(runId)}`, { method: 'DELETE' });
      this.runs.delete(runId);
      this.queueRuns();
      if (runId === this.runId) this.selectRun(null);
    } catch (err) {
      toast(`Could not delete the run: ${err.message}`, 'error');
    }
  }
}

function cap(s) { return s.charAt(0).toUpperCase() + s.slice(1); }

/** What the person's resume did, in words: "Aborted tool:x", "Retried tool:x", … */
const DONE = { continue: 'Continued', retry: 'Retried', inject: 'Injected a value into', abort: 'Aborted the run at' };
export function resumeOutcome(action, nodeId, out) {
  const detail = out.message ? ` (${out.message})` : '';
  switch (out.result) {
    case 'resumed': return `${DONE[action] || cap(action)} ${nodeId}`;
    case 'taken': return `${cap(action)} ${nodeId}: somebody else already released this gate${detail}`;
    case 'no-such-pause': return `${cap(action)} ${nodeId}: the gate is no longer held${detail}`;
    case 'refused': return `${cap(action)} ${nodeId} was refused${detail}`;
    default: return `${cap(action)} ${nodeId} failed${detail}`;
  }
}

export function describeMatcher(m) {
  const point = m.point || 'before';
  const what = m.name ? `${m.kind ? m.kind + ':' : ''}${m.name}` : m.kind ? `every ${m.kind}` : 'every node';
  return point === 'error' ? `on error in ${what}` : `${point} ${what}`;
}
