// The memory inspector's one store: which user and scope are shown, the browse list of the
// current kind (paged from /api/memory/records), search as you type with every option, the
// quarantine queue and its review, the open record, and the live feed of ledger changes
// (/api/memory/feed). Views subscribe to its topics; every rule (what search returns, what a
// version's validity is, who may validate) is the server's — the store only asks.

import { api } from './conn.js';
import { Emitter } from './emitter.js';

const API = '/api/memory';
const USER_KEY = 'mindgate.memory.user';
/** Rows fetched per page of a browse list. */
export const PAGE = 200;

/** The browse tabs: id (the route word), label, how the list is read, the metadata counter. */
export const TABS = [
  { id: 'semantic', label: 'Facts', list: 'records', count: (s) => s.metadata.factCount },
  { id: 'episodic', label: 'Episodes', list: 'records', count: (s) => s.metadata.episodeCount },
  { id: 'procedural', label: 'Procedures', list: 'records', count: (s) => s.metadata.activeRuleCount },
  { id: 'insight', label: 'Insights', list: 'records', count: () => null },
  { id: 'session', label: 'Session messages', list: 'records', count: (s) => s.metadata.messageCount },
  { id: 'working', label: 'Blocks', list: 'blocks', count: (s) => s.metadata.workingBlockCount },
  { id: 'entity', label: 'Entities', list: 'entities', count: () => null },
  { id: 'quarantine', label: 'Quarantine', list: 'quarantine', count: (s) => s.quarantined },
];

/** The search options the filters edit (every `GET /api/memory/search` parameter but the scope). */
export const SEARCH_DEFAULTS = {
  topK: '', tags: '', dateFrom: '', dateTo: '', includeArchived: false, includeQuarantined: true,
  kinds: '', mode: '', candidatePool: '', vectorWeight: '', decay: false, expandEntities: false,
};

function qs(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '' || v === false) continue;
    u.set(k, String(v));
  }
  const s = u.toString();
  return s ? `?${s}` : '';
}

export class MemoryStore extends Emitter {
  constructor(token) {
    super();
    this.token = token;
    this.readOnly = !token;
    this.users = [];
    this.user = sessionStorage.getItem(USER_KEY) || '';
    this.scope = { agentId: '', sessionId: '' };
    this.status = null; // StatusView of the user
    this.tab = 'semantic';
    this.listState = { status: '', includeDeleted: false, includeSuperseded: false };
    this.list = { items: [], fetched: 0, done: false, loading: false, error: null, gen: 0 };
    this.search = { query: '', options: { ...SEARCH_DEFAULTS }, hits: null, error: null, tookMs: null, drawnFor: null };
    this.searchSeq = 0;
    this.inflight = null;
    this.pendingSearch = false;
    this.time = { asOf: '', knownAt: '' };
    this.selected = null; // {kind, id}
    this.detail = null; // {record, link, history?, entity?, facts?}
    this.conflicts = { items: [], others: new Map(), error: null }; // open conflicts of the user

    this.feedState = 'off';
    this.lastSeq = 0;
    this.changes = 0;
  }

  call(path, opts) { return api(this.token, `${API}${path}`, opts); }

  // ---- user and counters ----------------------------------------------------------
  async loadUsers() {
    try {
      this.users = (await this.call('/users')).users || [];
    } catch (err) {
      this.users = [];
      this.emit('error', `Could not list memory users: ${err.message}`);
    }
    if (!this.user || !this.users.includes(this.user)) this.user = this.users[0] || this.user || '';
    this.emit('users', this.users);
    return this.users;
  }

  setUser(user) {
    this.user = user;
    sessionStorage.setItem(USER_KEY, user);
    this.selected = null;
    this.detail = null;
    this.emit('detail', null);
    this.refreshAll();
  }

  setScope(scope) {
    this.scope = { ...this.scope, ...scope };
    this.reloadList();
    this.runSearch();
  }

  async loadStatus() {
    if (!this.user) { this.status = null; this.emit('status', null); return; }
    try {
      this.status = await this.call(`/metadata${qs({ userId: this.user })}`);
      this.emit('status', this.status);
    } catch (err) {
      this.emit('error', `Could not read the memory counters: ${err.message}`);
    }
  }

  refreshAll() {
    this.loadStatus();
    this.reloadList();
    if (this.tab === 'quarantine') this.loadConflicts();
    this.runSearch();
  }

  // ---- browse lists -------------------------------------------------------------------
  setTab(tab) {
    if (!TABS.some((t) => t.id === tab)) tab = 'semantic';
    if (this.tab === tab && this.list.items.length) return;
    this.tab = tab;
    this.emit('tab', tab);
    this.reloadList();
    if (tab === 'quarantine') this.loadConflicts();
  }

  setListState(patch) {
    this.listState = { ...this.listState, ...patch };
    this.reloadList();
  }

  reloadList() {
    this.list = { items: [], fetched: 0, done: false, loading: false, error: null, gen: this.list.gen + 1 };
    this.emit('list', this.list);
    this.loadMore();
  }

  /** Re-reads the rows already loaded (live changes) and swaps them in at once, keeping the scroll. */
  async refreshList() {
    const old = this.list;
    if (old.loading || !this.user) { this.reloadList(); return; }
    const fresh = { items: [], fetched: 0, done: false, loading: false, error: null, gen: old.gen + 1 };
    this.list = fresh;
    const want = Math.max(old.fetched, 1);
    while (!fresh.done && fresh.fetched < want) {
      const before = fresh.fetched;
      await this.loadMore({ quiet: true });
      if (fresh.fetched === before && !fresh.done) break;
      if (this.list !== fresh) return;
    }
    this.emit('list', fresh);
  }

  /** Loads the next page of the current tab (records are paged; the others come whole). */
  async loadMore({ quiet = false } = {}) {
    const list = this.list;
    if (list.loading || list.done || !this.user) return;
    list.loading = true;
    const tab = TABS.find((t) => t.id === this.tab);
    try {
      let rows;
      let done = true;
      if (tab.list === 'records') {
        rows = (await this.call(`/records${qs({
          userId: this.user, agentId: this.scope.agentId, sessionId: this.scope.sessionId, kind: tab.id, status: this.listState.status,
          includeDeleted: this.listState.includeDeleted, includeSuperseded: this.listState.includeSuperseded,
          limit: PAGE, offset: list.fetched,
        })}`)).records || [];
        done = rows.length < PAGE;
      } else if (tab.list === 'blocks') {
        rows = (await this.call(`/blocks${qs({ userId: this.user })}`)).blocks || [];
      } else if (tab.list === 'entities') {
        rows = (await this.call(`/entities${qs({ userId: this.user })}`)).entities || [];
      } else {
        rows = (await this.call(`/quarantine${qs({ userId: this.user, limit: 1000 })}`)).records || [];
      }
      if (list !== this.list) return; // the tab or user changed meanwhile
      list.fetched += rows.length;
      if (tab.list !== 'records') rows = rows.filter((r) => this.inScope(r));
      list.items = list.items.concat(rows);
      list.done = done;
    } catch (err) {
      if (list !== this.list) return;
      list.error = err.message;
      list.done = true;
    } finally {
      list.loading = false;
    }
    if (!quiet) this.emit('list', list);
  }

  /**
   * The scope narrows the lists the server does not filter by scope (blocks, the quarantine
   * queue) to one agent or session; entities belong to the user only.
   */
  inScope(r) {
    if (r.normalizedName !== undefined) return true;
    if (this.scope.agentId && r.agentId !== this.scope.agentId) return false;
    if (this.scope.sessionId && r.sessionId !== this.scope.sessionId) return false;
    return true;
  }

  // ---- search as you type ------------------------------------------------------------
  setQuery(query) {
    this.search.query = query;
    this.search.typedAt = performance.now();
    this.runSearch();
  }

  setOptions(patch) {
    this.search.options = { ...this.search.options, ...patch };
    this.runSearch();
  }

  setTime(patch) {
    this.time = { ...this.time, ...patch };
    this.emit('time', this.time);
    this.runSearch();
  }

  searchParams() {
    const o = this.search.options;
    return {
      query: this.search.query.trim(), userId: this.user, agentId: this.scope.agentId, sessionId: this.scope.sessionId,
      topK: o.topK, tags: o.tags, dateFrom: o.dateFrom, dateTo: o.dateTo, includeArchived: o.includeArchived,
      includeQuarantined: o.includeQuarantined, asOf: this.time.asOf, knownAt: this.time.knownAt, kinds: o.kinds,
      mode: o.mode, candidatePool: o.candidatePool, vectorWeight: o.vectorWeight, decay: o.decay,
      expandEntities: o.expandEntities,
    };
  }

  /**
   * One search in flight at a time: keystrokes that arrive meanwhile coalesce into one
   * follow-up search of the latest text, so the list never shows an older query's hits.
   */
  async runSearch() {
    if (this.inflight) { this.pendingSearch = true; return; }
    const params = this.searchParams();
    if (!params.query || !this.user) {
      this.search.hits = null;
      this.search.error = null;
      this.search.drawnFor = null;
      this.emit('search', this.search);
      return;
    }
    const key = JSON.stringify(params);
    const typedAt = this.search.typedAt;
    const t0 = performance.now();
    let hits = [];
    let error = null;
    this.inflight = this.call(`/search${qs(params)}`);
    try {
      hits = (await this.inflight).hits || [];
    } catch (err) {
      error = err.message;
    } finally {
      this.inflight = null;
    }
    if (this.pendingSearch) {
      this.pendingSearch = false;
      if (JSON.stringify(this.searchParams()) !== key) { this.runSearch(); return; }
    }
    Object.assign(this.search, { hits, error, tookMs: performance.now() - t0, drawnFor: params.query, typedAtOfDrawn: typedAt });
    this.emit('search', this.search);
  }

  // ---- one record ---------------------------------------------------------------------
  async select(kind, id) {
    this.selected = id ? { kind, id } : null;
    if (!id) { this.detail = null; this.emit('detail', null); return; }
    await this.loadDetail();
  }

  async loadDetail() {
    const sel = this.selected;
    if (!sel) return;
    try {
      let detail;
      if (sel.kind === 'entity') {
        detail = await this.call(`/entities/${encodeURIComponent(sel.id)}`);
        detail.kind = 'entity';
      } else if (sel.kind === 'working') {
        const blocks = (await this.call(`/blocks${qs({ userId: this.user })}`)).blocks || [];
        const block = blocks.find((b) => b.id === sel.id || b.label === sel.id);
        if (!block) throw new Error(`no block ${sel.id}`);
        detail = { kind: 'working', record: block };
      } else {
        detail = await this.call(`/records/${encodeURIComponent(sel.id)}`);
        detail.kind = detail.record.kind;
        detail.history = await this.call(`/records/${encodeURIComponent(sel.id)}/history`);
      }
      if (this.selected !== sel) return;
      this.detail = detail;
      // A link may open another user's record (the Tasks page's induced procedure): follow it.
      const owner = detail.record?.userId || detail.entity?.userId;
      if (owner && owner !== this.user) {
        this.user = owner;
        sessionStorage.setItem(USER_KEY, owner);
        this.loadUsers().then(() => { this.loadStatus(); this.reloadList(); });
      }
    } catch (err) {
      if (this.selected !== sel) return;
      this.detail = { kind: sel.kind, error: err.message, id: sel.id };
    }
    this.emit('detail', this.detail);
  }

  // ---- conflicts ----------------------------------------------------------------------
  /**
   * The user's facts whose conflicts wait for a decision (GET /conflicts), with the facts
   * each contradicts read once (`others`: id → record).
   */
  async loadConflicts() {
    if (!this.user) { this.conflicts = { items: [], others: new Map(), error: null }; this.emit('conflicts', this.conflicts); return; }
    const user = this.user;
    try {
      const items = ((await this.call(`/conflicts${qs({ userId: user, limit: 200 })}`)).records || []).filter((r) => this.inScope(r));
      const others = new Map();
      const ids = [...new Set(items.flatMap((r) => r.conflictsWith || []))];
      await Promise.all(ids.map(async (id) => {
        try { others.set(id, (await this.call(`/records/${encodeURIComponent(id)}`)).record); } catch { /* shown as loading */ }
      }));
      if (user !== this.user) return;
      this.conflicts = { items, others, error: null };
    } catch (err) {
      this.conflicts = { items: [], others: new Map(), error: err.message };
    }
    this.emit('conflicts', this.conflicts);
  }

  /** The records `r.conflictsWith` names (from the conflict list, else read now). */
  async conflictOthers(r) {
    return Promise.all((r.conflictsWith || []).map(async (id) => this.conflicts.others.get(id)
      || (await this.call(`/records/${encodeURIComponent(id)}`).catch(() => null))?.record || null));
  }

  /** A person's decision on fact `id`'s conflicts: `supersede_old`, `keep_both` or `reject`. */
  async decide(id, decision) {
    const out = await this.call(`/records/${encodeURIComponent(id)}/conflict`, { method: 'POST', body: { decision } });
    this.afterChange(id);
    return out;
  }

  // ---- review -------------------------------------------------------------------------
  /** Validates one record; a flagged text is refused with `err.reason === 'flagged'` unless `force`. */
  async validate(id, { force = false } = {}) {
    const rec = await this.call(`/records/${encodeURIComponent(id)}/validate`, { method: 'POST', body: force ? { force: true } : {} });
    this.afterChange(id);
    return rec;
  }

  async reject(id, reason) {
    const res = await this.call(`/records/${encodeURIComponent(id)}/reject`, { method: 'POST', body: { reason } });
    this.afterChange(id);
    return res;
  }

  afterChange(id) {
    this.loadStatus();
    if (this.tab === 'quarantine') { this.reloadList(); this.loadConflicts(); }
    if (this.selected && this.selected.id === id) this.loadDetail();
    this.runSearch();
  }

  // ---- live ---------------------------------------------------------------------------
  /** Follows /api/memory/feed; every ledger row refreshes what it touches (batched per frame). */
  follow() {
    if (typeof EventSource === 'undefined' || this.source) return;
    const auth = this.token ? `?token=${encodeURIComponent(this.token)}` : '';
    const src = new EventSource(`${API}/feed${auth}`);
    this.source = src;
    src.onopen = () => { this.feedState = 'open'; this.emit('feed', this.feedState); };
    src.onerror = () => { this.feedState = 'retry'; this.emit('feed', this.feedState); };
    src.addEventListener('change', (e) => {
      let entry;
      try { entry = JSON.parse(e.data); } catch { return; }
      this.lastSeq = Math.max(this.lastSeq, Number(entry.seq) || 0);
      this.changes++;
      this.touched = this.touched || new Set();
      this.touched.add(entry.subjectId);
      if (!this.changeTimer) this.changeTimer = setTimeout(() => this.applyChanges(), 100);
    });
  }

  unfollow() {
    if (this.source) { this.source.close(); this.source = null; }
    this.feedState = 'off';
  }

  applyChanges() {
    this.changeTimer = null;
    const touched = this.touched || new Set();
    this.touched = new Set();
    this.loadUsers().then(() => this.loadStatus());
    this.refreshList();
    if (this.tab === 'quarantine') this.loadConflicts();
    this.runSearch();
    if (this.selected && (touched.has(this.selected.id) || this.detailTouches(touched))) this.loadDetail();
    this.emit('changes', { count: this.changes, lastSeq: this.lastSeq });
  }

  detailTouches(touched) {
    const chain = this.detail?.history?.chain || [];
    const conflicting = this.detail?.record?.conflictsWith || [];
    return chain.some((r) => touched.has(r.id)) || conflicting.some((id) => touched.has(id));
  }
}
