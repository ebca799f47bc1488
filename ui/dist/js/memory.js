// The memory inspector (#/memory): browse an agent's memory by kind and scope with the
// counters of `MemoryMetadata`, search as you type with every option and each hit's signals
// drawn, review the quarantine queue (Validate / Reject, one by one or in batches, keys V / X)
// and the facts in conflict (side by side, one-click decisions: memoryconflicts.js), and open
// one record (memorydetail.js). One store (memorystore.js) talks to /api/memory.

import { emptyState } from './firststeps.js';
import { el, typingTarget, announce, toast } from './dom.js';
import { VirtualList } from './vlist.js';
import { fmtCount } from './format.js';
import { MemoryStore, TABS, SEARCH_DEFAULTS } from './memorystore.js';
import { DetailPane, statusPill, validityText, shortTime } from './memorydetail.js';
import { signalBars } from './memorysignals.js';
import { EntityGraph } from './memorygraph.js';
import { conflictPair, conflictOpen } from './memoryconflicts.js';

/**
 * `#/memory`, `#/memory/<tab>`, `#/memory/<kind>/<id>`, each optionally `?asOf=…&knownAt=…`
 * → {tab, id, asOf, knownAt}; anything else → null.
 */
export function parseMemoryRoute(hash) {
  const m = /^#\/memory(?:\/([^/?&]+)(?:\/([^?&]+))?)?\/?(?:\?(.*))?$/.exec(hash || '');
  if (!m) return null;
  const q = new URLSearchParams(m[3] || '');
  return {
    tab: m[1] ? decodeURIComponent(m[1]) : null, id: m[2] ? decodeURIComponent(m[2]) : null,
    asOf: q.get('asOf'), knownAt: q.get('knownAt'),
  };
}

/** The text a browse row shows for any record, block or entity. */
function rowText(r) {
  if (r.label !== undefined && r.value !== undefined) return `${r.label}: ${r.value}`;
  if (r.normalizedName !== undefined) return r.name;
  if (r.summary !== undefined) return r.summary;
  if (r.content !== undefined) return typeof r.content === 'string' ? r.content : JSON.stringify(r.content);
  return r.text ?? r.id;
}

function rowKind(r, tab) {
  if (tab === 'entity') return 'entity';
  if (tab === 'working') return 'working';
  return r.kind || tab;
}

export class MemoryPage {
  constructor(root, main, token) {
    this.root = root;
    this.main = main;
    this.store = new MemoryStore(token);
    this.active = false;
    this.activeIndex = -1;
    this.checked = new Set();
    this.build();
    this.wire();
    window.addEventListener('hashchange', () => this.route());
    this.route();
  }

  // ---- skeleton ---------------------------------------------------------------------
  build() {
    const s = this.store;
    this.userSelect = el('select', { class: 'mem-user', 'aria-label': 'Memory user', onchange: () => s.setUser(this.userSelect.value) });
    this.agentInput = el('input', { type: 'text', class: 'mem-scope', placeholder: 'agent', 'aria-label': 'Agent scope', onchange: () => s.setScope({ agentId: this.agentInput.value.trim() }) });
    this.sessionInput = el('input', { type: 'text', class: 'mem-scope', placeholder: 'session', 'aria-label': 'Session scope', onchange: () => s.setScope({ sessionId: this.sessionInput.value.trim() }) });
    this.embedder = el('span', { class: 'mem-embedder small muted', 'data-testid': 'embedder' }, '');
    this.liveBadge = el('span', { class: 'mem-live small muted', 'data-state': 'off' }, '');
    this.tabs = el('div', { class: 'mem-tabs', role: 'tablist', 'aria-label': 'Memory kinds' });
    this.tabButtons = new Map();
    for (const t of TABS) {
      const count = el('span', { class: 'count-badge' }, '');
      const b = el('button', {
        type: 'button', role: 'tab', class: 'mem-tab', id: `mem-tab-${t.id}`, 'data-tab': t.id, 'aria-selected': 'false',
        onclick: () => { location.hash = `#/memory/${t.id}`; },
      }, t.label, ' ', count);
      b.countEl = count;
      this.tabButtons.set(t.id, b);
      this.tabs.append(b);
    }
    this.searchInput = el('input', {
      type: 'search', class: 'search-input mem-search', placeholder: 'Search this memory (as you type)…', 'aria-label': 'Search memory',
      oninput: () => s.setQuery(this.searchInput.value),
    });
    this.filters = this.buildFilters();
    this.timeBar = this.buildTimeBar();
    this.listInfo = el('div', { class: 'mem-list-info small muted', role: 'status' }, '');
    this.listTools = this.buildListTools();
    this.batchBar = el('div', { class: 'mem-batch', hidden: true },
      el('span', { class: 'small mem-batch-count' }, ''),
      el('button', { type: 'button', class: 'btn primary', onclick: () => this.review('validate') }, 'Validate selected (V)'),
      el('button', { type: 'button', class: 'btn danger', onclick: () => this.review('reject') }, 'Reject selected (X)'),
      el('button', { type: 'button', class: 'btn', onclick: () => { this.checked.clear(); this.drawList(); } }, 'Clear'));
    this.graphHost = el('div', { class: 'mem-graph-wrap', hidden: true });
    this.graph = new EntityGraph(this.graphHost, this.store, {
      onOpen: (id) => this.open('entity', id),
      onMerge: (from, into, fromName, intoName) => this.mergeEntities(from, into, fromName, intoName),
    });
    const browseHost = el('div', { class: 'mem-list-host' });
    const hitsHost = el('div', { class: 'mem-list-host', hidden: true });
    const queueHost = el('div', { class: 'mem-list-host', hidden: true });
    this.hosts = { browse: browseHost, hits: hitsHost, queue: queueHost };
    this.browseList = new VirtualList(browseHost, 52, (r, i) => this.browseRow(r, i), { label: 'Memory records', focusable: true, role: 'listbox' });
    this.hitList = new VirtualList(hitsHost, 74, (h, i) => this.hitRow(h, i), { label: 'Search hits', focusable: true, role: 'listbox' });
    this.queueList = new VirtualList(queueHost, 92, (r, i) => this.queueRow(r, i), { label: 'Quarantine queue', focusable: true, role: 'listbox' });
    for (const l of [this.browseList, this.hitList, this.queueList]) {
      l.scroller.addEventListener('keydown', (e) => this.listKey(e));
      l.scroller.addEventListener('scroll', () => this.maybeLoadMore(l));
    }
    // No memory at all yet: what fills it (an agent over MCP or the SDK, or a fact by hand).
    this.memEmpty = emptyState('memory-empty',
      ['No memory yet: an agent remembers through MCP (add ', el('code', {}, 'mindgate mcp'), ' to its mcpServers) or the Rust SDK, or remember a fact yourself:'],
      el('code', { class: 'empty-command' }, 'mindgate memory remember --user you "Ada prefers window seats"'));
    this.memEmpty.hidden = true;
    this.detailHost = el('aside', { class: 'mem-detail', 'aria-label': 'Memory record' });
    this.detail = new DetailPane(this.detailHost, this.store, {
      onReview: (action, ids) => this.review(action, ids),
      conflict: (r) => this.inspectorConflict(r),
    });
    this.conflictsHost = el('section', { class: 'mem-conflicts', 'aria-label': 'Conflicts waiting for a decision', hidden: true });
    this.dialogs = this.buildDialogs();
    this.root.replaceChildren(
      el('div', { class: 'mem-head' },
        el('a', { href: '#/', class: 'btn' }, '← Runs'),
        el('h1', { class: 'tg-title' }, 'Memory'),
        el('label', { class: 'small muted' }, 'User ', this.userSelect),
        el('label', { class: 'small muted' }, 'Agent ', this.agentInput),
        el('label', { class: 'small muted' }, 'Session ', this.sessionInput),
        this.embedder, this.liveBadge),
      this.tabs,
      el('div', { class: 'mem-body' },
        el('section', { class: 'mem-main', 'aria-label': 'Memory list' },
          el('div', { class: 'mem-searchbar' }, this.searchInput, this.filters),
          this.timeBar, this.listTools, this.batchBar, this.listInfo, this.memEmpty, this.graphHost, this.conflictsHost, browseHost, hitsHost, queueHost),
        this.detailHost),
      ...Object.values(this.dialogs));
  }

  buildFilters() {
    const s = this.store;
    const o = SEARCH_DEFAULTS;
    const field = (key, label, attrs = {}) => el('label', { class: 'mem-filter' }, label,
      el('input', { type: 'text', name: key, value: o[key], 'aria-label': label, ...attrs, onchange: (e) => s.setOptions({ [key]: e.target.value.trim() }) }));
    const check = (key, label) => el('label', { class: 'mem-filter check' },
      el('input', { type: 'checkbox', name: key, checked: o[key], onchange: (e) => s.setOptions({ [key]: e.target.checked }) }), label);
    const mode = el('select', { name: 'mode', 'aria-label': 'Mode', onchange: (e) => s.setOptions({ mode: e.target.value }) },
      ...['', 'hybrid', 'lexical', 'vector'].map((m) => el('option', { value: m }, m || 'default (hybrid)')));
    return el('details', { class: 'mem-filters' },
      el('summary', {}, 'Filters'),
      el('div', { class: 'mem-filter-grid' },
        el('label', { class: 'mem-filter' }, 'Mode', mode),
        field('kinds', 'Kinds', { placeholder: 'semantic,episodic,procedural,insight,session' }),
        field('tags', 'Tags', { placeholder: 'a,b' }),
        field('topK', 'Top K', { inputmode: 'numeric', placeholder: '10' }),
        field('candidatePool', 'Candidate pool', { inputmode: 'numeric', placeholder: '20' }),
        field('vectorWeight', 'Vector weight', { inputmode: 'decimal', placeholder: 'default' }),
        field('dateFrom', 'Stored from', { placeholder: 'ISO-8601' }),
        field('dateTo', 'Stored to', { placeholder: 'ISO-8601' }),
        check('includeQuarantined', 'Include quarantined'),
        check('includeArchived', 'Include archived'),
        check('decay', 'Decay'),
        check('expandEntities', 'Expand entities')));
  }

  /** As-of (valid time) and known-at (transaction time) sliders; both re-run the search. */
  buildTimeBar() {
    const s = this.store;
    const make = (key, label, hint) => {
      const slider = el('input', { type: 'range', class: 'mem-slider', min: '0', max: '1000', step: '1', value: '1000', 'aria-label': `${label} slider`, name: `${key}-slider` });
      const text = el('input', { type: 'text', class: 'mem-time-text mono small', placeholder: 'now', 'aria-label': `${label} (ISO-8601)`, name: key });
      const reset = el('button', { type: 'button', class: 'small-btn', onclick: () => { text.value = ''; slider.value = slider.max; s.setTime({ [key]: '' }); } }, 'now');
      slider.addEventListener('input', () => {
        const v = Number(slider.value);
        if (v >= Number(slider.max)) { text.value = ''; s.setTime({ [key]: '' }); return; }
        const iso = new Date(this.timeMin + (Date.now() - this.timeMin) * (v / 1000)).toISOString();
        text.value = iso;
        s.setTime({ [key]: iso });
      });
      text.addEventListener('change', () => {
        const t = text.value.trim();
        if (t && Number.isNaN(Date.parse(t))) { toast(`${label}: not a time (ISO-8601, e.g. 2025-01-31T12:00:00Z)`, 'error'); return; }
        s.setTime({ [key]: t ? new Date(t).toISOString() : '' });
        this.syncSlider(key);
      });
      this.timeInputs[key] = { slider, text };
      return el('div', { class: 'mem-time', title: hint }, el('span', { class: 'small mem-time-label' }, label), slider, text, reset);
    };
    this.timeInputs = {};
    this.timeMin = Date.now() - 365 * 24 * 3600 * 1000;
    return el('div', { class: 'mem-timebar', role: 'group', 'aria-label': 'Time travel' },
      make('asOf', 'As of', 'Valid time: facts true at this instant'),
      make('knownAt', 'Known at', 'Transaction time: what the store held and trusted at this instant'));
  }

  /** Puts a time slider where its text field's instant is (the right end = now). */
  syncSlider(key) {
    const { slider, text } = this.timeInputs[key];
    const t = Date.parse(text.value.trim());
    if (Number.isNaN(t)) { slider.value = slider.max; return; }
    if (t < this.timeMin) this.timeMin = t;
    slider.value = String(Math.round(Math.max(0, Math.min(1, (t - this.timeMin) / Math.max(1, Date.now() - this.timeMin))) * 999));
  }

  buildListTools() {
    const s = this.store;
    const status = el('select', { 'aria-label': 'Status', onchange: (e) => s.setListState({ status: e.target.value }) },
      el('option', { value: '' }, 'any status'), el('option', { value: 'active' }, 'active'), el('option', { value: 'quarantined' }, 'quarantined'));
    return el('div', { class: 'mem-list-tools small' },
      status,
      el('label', {}, el('input', { type: 'checkbox', onchange: (e) => s.setListState({ includeSuperseded: e.target.checked }) }), ' superseded'),
      el('label', {}, el('input', { type: 'checkbox', onchange: (e) => s.setListState({ includeDeleted: e.target.checked }) }), ' tombstoned'));
  }

  buildDialogs() {
    const reason = el('textarea', { class: 'mem-reason', rows: 3, required: true, 'aria-label': 'Reason for rejecting' });
    const rejectText = el('p', { class: 'small' }, '');
    const reject = el('dialog', { class: 'help mem-dialog', 'aria-label': 'Reject', id: 'mem-reject' },
      el('form', { method: 'dialog' },
        el('h2', {}, 'Reject'), rejectText, reason,
        el('div', { class: 'dialog-actions' },
          el('button', { class: 'btn', value: 'cancel', formnovalidate: true }, 'Cancel'),
          el('button', { class: 'btn danger', value: 'ok' }, 'Reject'))));
    reject.reasonEl = reason;
    reject.textEl = rejectText;
    const forceText = el('p', { class: 'small' }, '');
    const force = el('dialog', { class: 'help mem-dialog', 'aria-label': 'Validate flagged text', id: 'mem-force' },
      el('form', { method: 'dialog' },
        el('h2', {}, 'Validate flagged text?'), forceText,
        el('p', { class: 'small muted' }, 'The validation is recorded as forced, by you.'),
        el('div', { class: 'dialog-actions' },
          el('button', { class: 'btn', value: 'cancel' }, 'Cancel'),
          el('button', { class: 'btn danger', value: 'ok' }, 'Validate anyway'))));
    force.textEl = forceText;
    const mergeText = el('p', { class: 'small' }, '');
    const merge = el('dialog', { class: 'help mem-dialog', 'aria-label': 'Merge entities', id: 'mem-merge' },
      el('form', { method: 'dialog' },
        el('h2', {}, 'Merge entities?'), mergeText,
        el('p', { class: 'small muted' }, 'Unmerge restores it exactly as before (the entity pane).'),
        el('div', { class: 'dialog-actions' },
          el('button', { class: 'btn', value: 'cancel' }, 'Cancel'),
          el('button', { class: 'btn primary', value: 'ok' }, 'Merge'))));
    merge.textEl = mergeText;
    return { reject, force, merge };
  }

  /** Merges entity `from` into `into` once a person confirms (the graph's drag and drop). */
  async mergeEntities(from, into, fromName, intoName) {
    if (this.store.readOnly) { toast('Read-only: open the URL printed by `mindgate serve` to merge', 'error'); return; }
    const d = this.dialogs.merge;
    d.textEl.textContent = `Merge “${fromName}” into “${intoName}”? Facts about either then resolve to one entity.`;
    if (!(await this.ask(d))) return;
    try {
      await this.store.call(`/entities/${encodeURIComponent(from)}/merge`, { method: 'POST', body: { into } });
      toast(`Merged ${fromName} into ${intoName}`);
      this.store.reloadList();
      if (this.store.selected) this.store.loadDetail();
    } catch (err) {
      toast(`Merge failed: ${err.message}`, 'error');
    }
  }

  ask(dialog) {
    return new Promise((resolve) => {
      dialog.returnValue = '';
      dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
      dialog.showModal();
    });
  }

  // ---- store wiring ------------------------------------------------------------------
  wire() {
    const s = this.store;
    s.on('users', (users) => {
      const names = users.length ? users : (s.user ? [s.user] : []);
      this.userSelect.replaceChildren(...names.map((u) => el('option', { value: u, selected: u === s.user }, u)));
      if (!names.length) this.userSelect.append(el('option', { value: '' }, '(no memory yet)'));
      this.memEmpty.hidden = names.length > 0;
    });
    // The list's line names the tab's active count, so a status that lands after the list redraws it too.
    s.on('status', (st) => { this.drawStatus(st); this.drawList(); });
    s.on('list', () => this.drawList());
    s.on('search', () => this.drawList());
    s.on('tab', () => this.drawTabs());
    s.on('error', (msg) => toast(msg, 'error'));
    s.on('feed', (state) => {
      this.liveBadge.dataset.state = state;
      this.liveBadge.textContent = state === 'open' ? '● live' : state === 'retry' ? 'reconnecting…' : '';
    });
    s.on('changes', ({ count }) => { this.root.dataset.changes = String(count); });
    s.on('detail', () => { this.drawList(); });
    s.on('conflicts', () => { this.drawList(); });
  }

  // ---- routing -----------------------------------------------------------------------
  async route() {
    const r = parseMemoryRoute(location.hash);
    document.getElementById('nav-memory')?.classList.toggle('active', !!r);
    if (!r) {
      if (this.active) { this.active = false; this.store.unfollow(); }
      this.root.hidden = true;
      return;
    }
    this.main.hidden = true;
    this.root.hidden = false;
    if (!this.active) {
      this.active = true;
      await this.store.loadUsers();
      this.store.loadStatus();
      this.store.follow();
    }
    // A link may name instants (the run inspector's "memory as known at this moment").
    for (const key of ['asOf', 'knownAt']) {
      if (!r[key] || Number.isNaN(Date.parse(r[key]))) continue;
      const iso = new Date(r[key]).toISOString();
      this.timeInputs[key].text.value = iso;
      this.syncSlider(key);
      this.store.setTime({ [key]: iso });
    }
    const tab = r.tab && TABS.some((t) => t.id === r.tab) ? r.tab : (r.tab || 'semantic');
    const listTab = TABS.some((t) => t.id === tab) ? tab : 'semantic';
    this.store.setTab(listTab);
    this.drawTabs();
    if (r.id) this.store.select(tab, r.id);
    else if (this.store.selected) this.store.select(null, null);
    this.drawList();
  }

  drawTabs() {
    for (const [id, b] of this.tabButtons) {
      const on = id === this.store.tab;
      b.setAttribute('aria-selected', on ? 'true' : 'false');
      b.classList.toggle('active', on);
    }
    if (this.drawnTab !== this.store.tab) {
      this.drawnTab = this.store.tab;
      this.checked.clear();
      this.activeIndex = -1;
    }
  }

  drawStatus(st) {
    if (!st) { this.embedder.textContent = ''; return; }
    for (const t of TABS) {
      const n = t.count(st);
      const b = this.tabButtons.get(t.id);
      b.countEl.textContent = n === null || n === undefined ? '' : fmtCount(n);
      b.countEl.classList.toggle('hot', t.id === 'quarantine' && n > 0);
      b.dataset.count = n === null || n === undefined ? '' : String(n);
    }
    const stored = st.storedEmbedder && st.storedEmbedder !== st.embedder ? ` (vectors: ${st.storedEmbedder})` : '';
    this.embedder.textContent = `embedder: ${st.embedder || 'none — lexical only'}${stored}`;
  }

  // ---- lists ---------------------------------------------------------------------------
  mode() {
    if (this.store.search.query.trim()) return 'hits';
    return this.store.tab === 'quarantine' ? 'queue' : 'browse';
  }

  drawList() {
    const s = this.store;
    const mode = this.mode();
    for (const [k, h] of Object.entries(this.hosts)) h.hidden = k !== mode;
    const graphOn = mode === 'browse' && s.tab === 'entity';
    this.graphHost.hidden = !graphOn;
    if (graphOn && this.graphFor !== s.list && s.list.done) { this.graphFor = s.list; this.graph.setEntities(s.list.items); }
    if (graphOn) this.graph.draw();
    this.listTools.hidden = mode !== 'browse' || !['records'].includes(TABS.find((t) => t.id === s.tab)?.list);
    this.batchBar.hidden = !(mode === 'queue' && this.checked.size > 0);
    this.drawConflicts();
    this.batchBar.querySelector('.mem-batch-count').textContent = `${this.checked.size} selected`;
    if (mode === 'hits') {
      const hits = s.search.hits;
      this.hitList.setItems(hits || [], { keepRows: false });
      this.listInfo.textContent = s.search.error ? `Search failed: ${s.search.error}`
        : hits === null ? 'Searching…' : `${hits.length} hit${hits.length === 1 ? '' : 's'} for “${s.search.drawnFor}” · ${Math.round(s.search.tookMs || 0)} ms`;
      this.root.dataset.searchDrawn = s.search.drawnFor || '';
    } else {
      const list = s.list;
      const target = mode === 'queue' ? this.queueList : this.browseList;
      target.setItems(list.items, { keepRows: false });
      const tab = TABS.find((t) => t.id === s.tab);
      this.listInfo.textContent = list.error ? `Could not load: ${list.error}`
        : `${listCount(list.items.length, list.done, tab, mode, s.listState.status)}${activeNote(tab, mode, s)}${list.loading ? ' · loading…' : ''}`;
      if (!list.items.length && list.done && !list.error) this.listInfo.textContent = mode === 'queue' ? 'Nothing waits for review.' : `No ${tab.label.toLowerCase()} for this user.`;
      if (!s.user) this.listInfo.textContent = ''; // no memory at all: the empty state says it
      this.root.dataset.listCount = String(list.items.length);
    }
  }

  /** The quarantine tab's conflicts: each open one side by side with its three decisions. */
  drawConflicts() {
    const c = this.store.conflicts;
    const on = this.mode() === 'queue' && (c.items.length > 0 || !!c.error);
    this.conflictsHost.hidden = !on;
    this.root.dataset.conflictCount = String(c.items.length);
    if (!on) {
      // The last card decided (or the tab left): clear the pairs, so no decided card stays
      // behind the hidden section to come back with it; the queue's line says what is left.
      if (this.conflictsDrawn) { this.conflictsHost.replaceChildren(); this.conflictsDrawn = null; }
      return;
    }
    if (this.conflictsDrawn === c) return;
    this.conflictsDrawn = c;
    const n = c.items.length;
    this.conflictsHost.replaceChildren(
      el('h2', { class: 'insp-sub mem-conflicts-title' }, c.error ? `Could not load the conflicts: ${c.error}`
        : `${n} conflict${n === 1 ? '' : 's'} waiting for a decision`),
      ...c.items.map((r) => conflictPair(r, (r.conflictsWith || []).map((id) => c.others.get(id) || null), {
        readOnly: this.store.readOnly, onDecide: (d) => this.decide(r, d),
      })));
  }

  /** One click: the decision goes to the server; the lists and counters follow. */
  async decide(r, decision) {
    if (this.store.readOnly) { toast('Read-only: open the URL printed by `mindgate serve` to decide', 'error'); return; }
    try {
      await this.store.decide(r.id, decision);
      const words = { supersede_old: 'Superseded the old fact', keep_both: 'Kept both facts', reject: 'Rejected the new fact' };
      toast(words[decision] || 'Decided');
      announce(words[decision] || 'Decided');
    } catch (err) {
      toast(`Decision failed: ${err.message}`, 'error');
    }
  }

  /** The inspector's conflict section of fact `r` (null without one). */
  inspectorConflict(r) {
    if (r.kind !== 'semantic' || !r.conflictsWith?.length) return null;
    const host = el('div', { class: 'pad mem-conflict-host' });
    const draw = (others) => host.replaceChildren(conflictPair(r, others, {
      readOnly: this.store.readOnly, onDecide: (d) => this.decide(r, d),
    }));
    draw(null);
    this.store.conflictOthers(r).then(draw);
    return host;
  }

  maybeLoadMore(list) {
    if (list !== this.browseList) return;
    const sc = list.scroller;
    if (sc.scrollTop + sc.clientHeight * 2 >= sc.scrollHeight) this.store.loadMore();
  }

  isSelected(id) { return this.store.selected?.id === id; }

  open(kind, id) { location.hash = `#/memory/${encodeURIComponent(kind)}/${encodeURIComponent(id)}`; }

  browseRow(r, i) {
    const kind = rowKind(r, this.store.tab);
    const { id } = r;
    return el('div', {
      class: `mem-row${this.isSelected(id) ? ' selected' : ''}${i === this.activeIndex ? ' active' : ''}`, role: 'option',
      'aria-selected': this.isSelected(id) ? 'true' : 'false', 'data-id': id, onclick: () => this.open(kind, id),
    },
    el('div', { class: 'mem-row-line' },
      r.status ? statusPill(r) : null,
      r.provenance ? el('span', { class: 'sr-kind' }, r.provenance) : null,
      r.mergedInto ? el('span', { class: 'sr-kind' }, 'merged') : null,
      el('span', { class: 'mem-row-text' }, rowText(r))),
    el('div', { class: 'mem-row-meta small muted' }, [
      validityText(r), r.agentId ? `agent ${r.agentId}` : '', r.sessionId ? `session ${r.sessionId}` : '',
      r.mergedInto ? `merged into ${r.mergedInto}` : '', `stored ${shortTime(r.createdAt)}`,
    ].filter(Boolean).join(' · ')));
  }

  hitRow(h, i) {
    const max = this.store.search.hits || [];
    return el('div', {
      class: `mem-row mem-hit${this.isSelected(h.id) ? ' selected' : ''}${i === this.activeIndex ? ' active' : ''}`, role: 'option',
      'aria-selected': this.isSelected(h.id) ? 'true' : 'false', 'data-id': h.id, onclick: () => { location.hash = h.link; },
    },
    el('div', { class: 'mem-row-line' },
      el('span', { class: 'sr-kind' }, h.kind), statusPill(h.record || h),
      h.provenance ? el('span', { class: 'sr-kind mem-prov' }, h.provenance) : null,
      el('span', { class: 'mem-row-text' }, h.text),
      el('span', { class: 'mem-score mono small', title: 'final score' }, h.score.toFixed(3))),
    el('div', { class: 'mem-row-meta small muted' }, validityText(h.record) || 'no validity window', ` · stored ${shortTime(h.record?.createdAt)}`),
    signalBars(h.signals, max));
  }

  queueRow(r, i) {
    const box = el('input', {
      type: 'checkbox', 'aria-label': `Select ${rowText(r).slice(0, 40)}`, checked: this.checked.has(r.id),
      onclick: (e) => e.stopPropagation(),
      onchange: (e) => { if (e.target.checked) this.checked.add(r.id); else this.checked.delete(r.id); this.drawList(); },
    });
    const evidence = r.cites?.length ? `cites ${r.cites.length} record${r.cites.length === 1 ? '' : 's'}`
      : r.context ? `context: ${r.context}` : [r.subject, r.predicate, r.object].filter(Boolean).join(' · ');
    return el('div', {
      class: `mem-row mem-queue${this.isSelected(r.id) ? ' selected' : ''}${i === this.activeIndex ? ' active' : ''}`, role: 'option',
      'aria-selected': this.isSelected(r.id) ? 'true' : 'false', 'data-id': r.id,
      onclick: () => { this.activeIndex = i; this.open('quarantine', r.id); },
    },
    el('div', { class: 'mem-row-line' }, box,
      el('span', { class: 'sr-kind' }, r.kind), el('span', { class: 'sr-kind mem-prov' }, r.provenance || 'user'),
      el('span', { class: 'mem-row-text' }, rowText(r))),
    el('div', { class: 'mem-row-meta small' },
      el('span', { class: 'mem-why' }, r.quarantineReason || 'quarantined'),
      conflictOpen(r) ? el('span', { class: 'mem-conflict-badge', title: `Contradicts ${r.conflictsWith.join(', ')}: decide above or in the inspector` }, ` · conflicts with ${r.conflictsWith.length}`) : null,
      evidence ? el('span', { class: 'muted' }, ` · ${evidence}`) : null),
    el('div', { class: 'mem-row-actions' },
      el('button', { type: 'button', class: 'small-btn', onclick: (e) => { e.stopPropagation(); this.review('validate', [r.id]); } }, 'Validate'),
      el('button', { type: 'button', class: 'small-btn danger', onclick: (e) => { e.stopPropagation(); this.review('reject', [r.id]); } }, 'Reject'),
      el('span', { class: 'small muted' }, `${r.agentId ? `agent ${r.agentId} · ` : ''}stored ${shortTime(r.createdAt)}`)));
  }

  currentItems() {
    const mode = this.mode();
    return mode === 'hits' ? (this.store.search.hits || []) : this.store.list.items;
  }

  currentList() {
    const mode = this.mode();
    return mode === 'hits' ? this.hitList : mode === 'queue' ? this.queueList : this.browseList;
  }

  listKey(e) {
    const items = this.currentItems();
    if (!items.length) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const d = e.key === 'ArrowDown' ? 1 : -1;
      this.activeIndex = Math.max(0, Math.min(items.length - 1, this.activeIndex + d));
      this.currentList().scrollToIndex(this.activeIndex);
      this.currentList().refresh();
      announce(rowText(items[this.activeIndex].record || items[this.activeIndex]));
    } else if (e.key === 'Enter' && this.activeIndex >= 0) {
      const it = items[this.activeIndex];
      if (it.link) location.hash = it.link; else this.open(rowKind(it, this.store.tab), it.id);
    } else if (e.key === ' ' && this.mode() === 'queue' && this.activeIndex >= 0) {
      e.preventDefault();
      const id = items[this.activeIndex].id;
      if (this.checked.has(id)) this.checked.delete(id); else this.checked.add(id);
      this.drawList();
    }
  }

  /** The records a V / X acts on: the ticked rows, else the focused row, else the open record. */
  reviewTargets() {
    if (this.checked.size) return [...this.checked];
    const items = this.mode() === 'queue' ? this.store.list.items : [];
    if (this.activeIndex >= 0 && items[this.activeIndex]) return [items[this.activeIndex].id];
    const d = this.store.detail?.record;
    if (d && d.status === 'quarantined' && d.state !== 'tombstoned') return [d.id];
    return [];
  }

  /** The quarantine reason the server gave a record shown on the page, if any. */
  quarantineReason(id) {
    const r = this.store.list.items.find((x) => x.id === id) || (this.store.detail?.record?.id === id ? this.store.detail.record : null);
    return r?.quarantineReason || '';
  }

  /** Validate or reject `ids` (default: the review targets), asking what a person must confirm. */
  async review(action, ids = this.reviewTargets()) {
    if (!ids.length) { toast('Select a quarantined record first', 'error'); return; }
    if (this.store.readOnly) { toast('Read-only: open the URL printed by `mindgate serve` to review memory', 'error'); return; }
    const s = this.store;
    let done = 0;
    if (action === 'reject') {
      const d = this.dialogs.reject;
      d.textEl.textContent = ids.length === 1 ? 'Why is this memory wrong? The reason is recorded in its history.' : `Reject ${ids.length} records. The reason is recorded in each history.`;
      d.reasonEl.value = '';
      if (!(await this.ask(d))) return;
      const reason = d.reasonEl.value.trim();
      if (!reason) { toast('A reason is required to reject', 'error'); return; }
      for (const id of ids) {
        try { await s.reject(id, reason); done++; } catch (err) { toast(`Reject failed: ${err.message}`, 'error'); }
      }
      announce(`${done} rejected`);
    } else {
      for (const id of ids) {
        try {
          // Text the injection heuristics flagged is validated only once a person confirms.
          const why = this.quarantineReason(id);
          if (why && why.startsWith('flagged')) {
            const d = this.dialogs.force;
            d.textEl.textContent = `The injection heuristics flagged this text (${why}).`;
            if (!(await this.ask(d))) continue;
            await s.validate(id, { force: true });
          } else {
            await s.validate(id);
          }
          done++;
        } catch (err) {
          if (err.reason !== 'flagged') { toast(`Validate failed: ${err.message}`, 'error'); continue; }
          const d = this.dialogs.force;
          d.textEl.textContent = err.message;
          if (!(await this.ask(d))) continue;
          try { await s.validate(id, { force: true }); done++; } catch (err2) { toast(`Validate failed: ${err2.message}`, 'error'); }
        }
      }
      announce(`${done} validated`);
    }
    for (const id of ids) this.checked.delete(id);
    if (done) toast(`${done} ${action === 'reject' ? 'rejected' : 'validated'}`);
    this.activeIndex = Math.min(this.activeIndex, this.store.list.items.length - 2);
    this.drawList();
  }

  /** Page keys: `/` search, V validate, X reject (quarantine). */
  key(e) {
    const box = e.target?.type === 'checkbox';
    if (!this.active || (typingTarget(e) && !box) || e.ctrlKey || e.metaKey || e.altKey) return false;
    if (document.querySelector('dialog[open]')) return false;
    if (e.key === '/') { e.preventDefault(); this.searchInput.focus(); return true; }
    if (e.key === 'v' || e.key === 'V') { e.preventDefault(); this.review('validate'); return true; }
    if (e.key === 'x' || e.key === 'X') { e.preventDefault(); this.review('reject'); return true; }
    return false;
  }
}

const root = document.getElementById('memory-page');
const main = document.querySelector('main.layout');
if (root && main) {
  const token = sessionStorage.getItem('mindgate.token') || '';
  const page = new MemoryPage(root, main, token);
  document.addEventListener('keydown', (e) => { if (page.key(e)) e.stopPropagation(); }, true);
  /** Test and tooling hooks (read-only views of the page state). */
  window.mindgateMemory = {
    page,
    store: page.store,
    entityBoxes: () => page.graph.boxes(),
    searchDrawn: () => ({ query: page.store.search.drawnFor, hits: (page.store.search.hits || []).map((h) => h.id) }),
  };
}

// The list's count as English ("1 fact", "7 facts of any status", "1 quarantined fact
// waiting for review"), with the tab's own counter when the list shows more than it counts.
const NOUNS = {
  semantic: ['fact', 'facts'], episodic: ['episode', 'episodes'], procedural: ['procedure', 'procedures'],
  insight: ['insight', 'insights'], session: ['session message', 'session messages'], working: ['block', 'blocks'],
  entity: ['entity', 'entities'], quarantine: ['quarantined record', 'quarantined records'],
};
function listCount(n, done, tab, mode, status) {
  const [one, many] = NOUNS[tab.id] || [tab.label.toLowerCase(), tab.label.toLowerCase()];
  const head = `${n.toLocaleString()}${done ? '' : '+'} ${n === 1 && done ? one : many}`;
  if (mode === 'queue') return `${head} waiting for review`;
  if (tab.list === 'records') return `${head}${status ? ` (${status})` : ' of any status'}`;
  return head;
}
function activeNote(tab, mode, s) {
  if (mode !== 'browse' || tab.list !== 'records' || s.listState.status || !s.status) return '';
  const n = tab.count(s.status);
  if (n === null || n === undefined) return '';
  return ` · ${n.toLocaleString()} active (the tab's count)`;
}
