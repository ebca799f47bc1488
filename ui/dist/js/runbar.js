// The run bar: Run / Step mode, pause-on-error, breakpoint chips, graph tools.

import { el } from './dom.js';
import { fmtDuration, countOf, fmtCostShort, costDetail, isUnpriced, runDuration, runWork } from './format.js';
import { describeMatcher } from './store.js';
import { EMBEDDED } from './embedded.js';
import { AnnotationBox } from './annotations.js';
import { datasetDialog } from './datasets.js';

const KINDS = ['agent', 'llm', 'tool', 'chain', 'retriever', 'server', 'resource', 'prompt', 'custom'];

function isPauseOnError(m) { return m.point === 'error' && !m.kind && !m.name; }

export class RunBar {
  constructor(host, store, graph) {
    this.store = store;
    this.graph = graph;
    this.runBtn = el('button', { type: 'button', class: 'seg', 'aria-pressed': 'true', onclick: () => store.setMode('run') }, 'Run');
    this.stepBtn = el('button', { type: 'button', class: 'seg', 'aria-pressed': 'false', onclick: () => store.setMode('step') }, 'Step');
    this.errToggle = el('input', { type: 'checkbox', id: 'pause-on-error', onchange: (e) => this.togglePauseOnError(e.target.checked) });
    // Off (the default): an error gate holds while a page with the token (or an MCP
    // client with control) is open, and is continued 3 s after the last one leaves.
    this.holdToggle = el('input', { type: 'checkbox', id: 'hold-unwatched', onchange: (e) => store.setHoldUnwatched(e.target.checked) });
    this.kindSel = el('select', {
      'aria-label': 'Add a breakpoint before every node of a kind',
      onchange: (e) => { if (e.target.value) store.addBreakpoint({ kind: e.target.value, point: 'before' }); e.target.value = ''; },
    }, el('option', { value: '' }, '+ Break by kind…'), KINDS.map((k) => el('option', { value: k }, `before every ${k}`)));
    this.chips = el('div', { class: 'chips', role: 'list', 'aria-label': 'Breakpoints' });
    this.infoText = el('span', { class: 'run-info-text' });
    this.info = el('div', { class: 'run-info small', 'aria-live': 'off' }, this.infoText);
    // The run's annotations: thumbs up / down at once, the rest in a dialog (docs/evaluate.md).
    this.runAnnot = new AnnotationBox(store, { label: 'Annotations of this run', onOpenNode: (id) => { this.annotDialog.close(); store.selectNode(id, { reveal: true }); } });
    this.annotDialog = el('dialog', { class: 'annot-dialog', 'aria-label': 'Annotations of this run' },
      el('div', { class: 'annot-dialog-body' }, this.runAnnot.element,
        el('div', { class: 'dialog-actions' }, el('button', { type: 'button', class: 'btn', onclick: () => this.annotDialog.close() }, 'Close'))));
    document.body.append(this.annotDialog);
    this.annotSummary = el('span', { class: 'annot-summary small', 'data-testid': 'run-annotations' });
    const quick = (v, glyph, name) => el('button', { type: 'button', class: 'icon-btn annot-quick', 'aria-label': `${name} for this run`, title: `${name} for this run (${v === 'up' ? 'U' : 'B'})`, onclick: () => this.runAnnot.save(v) }, glyph);
    this.annotGroup = el('div', { class: 'annot-bar', role: 'group', 'aria-label': 'Annotate this run' },
      EMBEDDED ? '' : quick('up', '▲', 'Thumbs up'), EMBEDDED ? '' : quick('down', '▼', 'Thumbs down'),
      el('button', { type: 'button', class: 'small-btn annot-open', onclick: () => { this.runAnnot.reload(); this.annotDialog.showModal(); } }, this.annotSummary),
      // The run's agent input and final output as an example of a dataset (datasets.js).
      EMBEDDED ? '' : el('button', {
        type: 'button', class: 'small-btn ds-open', 'data-testid': 'run-add-to-dataset',
        title: "The run's agent input and final output become an example of a dataset",
        onclick: () => datasetDialog(store).open(this.runAnnot.target && { runId: this.runAnnot.target.runId }),
      }, '+ Dataset'));
    store.on('annotations', (t) => { if (t && !t.nodeId) this.renderAnnotSummary(); });
    store.on('run', () => this.syncAnnotTarget());
    store.on('model', () => this.syncAnnotTarget());
    document.getElementById('graph-region').append(this.info);
    // An exported page is read-only: it has no mode, pause-on-error or breakpoint controls.
    const controls = EMBEDDED ? [] : [
      el('div', { class: 'seg-group', role: 'group', 'aria-label': 'Execution mode' }, this.runBtn, this.stepBtn),
      el('label', { class: 'toggle', for: 'pause-on-error' }, this.errToggle, 'Pause on error'),
      el('label', { class: 'toggle small', for: 'hold-unwatched', title: 'Off: an error gate nobody watches (no page with the token, no MCP client) is continued after 3 s, so the app never hangs. On: it waits for you. Saved on the server.' }, this.holdToggle, 'Hold when nobody watches'),
      this.kindSel,
      this.chips,
    ];
    this.info.append(this.annotGroup);
    host.append(
      ...controls,
      el('div', { class: 'spacer' }),
      el('button', { type: 'button', class: 'icon-btn', 'aria-label': 'Fit graph to view', title: 'Fit (F)', onclick: () => graph.fit() }, '⤢'),
      el('button', { type: 'button', class: 'icon-btn', 'aria-label': 'Zoom in', title: 'Zoom in (+)', onclick: () => this.zoom(1.25) }, '+'),
      el('button', { type: 'button', class: 'icon-btn', 'aria-label': 'Zoom out', title: 'Zoom out (−)', onclick: () => this.zoom(0.8) }, '−'),
    );
    store.on('state', () => this.render());
    store.on('conn', () => this.render());
    store.on('run', () => this.renderInfo());
    store.on('model', () => this.renderInfo());
    store.on('runs', () => this.renderInfo());
    setInterval(() => { if (store.model && store.model.info.status === 'running') this.renderInfo(); }, 1000);
    this.render();
  }

  /** The run bar's annotations follow the open run. */
  syncAnnotTarget() {
    const m = this.store.model;
    const runId = m && m.runId !== this.store.local ? m.runId : null;
    this.annotGroup.hidden = !runId;
    if (runId && (!this.runAnnot.target || this.runAnnot.target.runId !== runId)) this.runAnnot.setTarget(runId, null, null);
  }

  /** ▲ n · ▼ n · notes, and a check's verdict. */
  renderAnnotSummary() {
    const items = this.runAnnot.items || [];
    const up = items.filter((a) => a.verdict === 'up').length;
    const down = items.filter((a) => a.verdict === 'down').length;
    const check = [...items].reverse().find((a) => a.kind === 'check' && a.check);
    const parts = [];
    if (up) parts.push(`▲ ${up}`);
    if (down) parts.push(`▼ ${down}`);
    const notes = items.length - up - down - (check ? 1 : 0);
    if (notes > 0) parts.push(`${notes} note${notes === 1 ? '' : 's'}`);
    this.annotSummary.replaceChildren(
      parts.length ? parts.join(' · ') : 'Annotate…',
      check ? el('span', { class: `pill ${check.check.passed ? 'st-ok' : 'st-error'}`, 'data-testid': 'run-check' }, check.check.passed ? 'check passed' : 'check failed') : '');
  }

  /** U / B: thumbs up / down for the selected node, else for the run. */
  annotateKey(verdict) {
    if (EMBEDDED || this.store.readOnly || !this.runAnnot.target) return false;
    const insp = window.mindgate && window.mindgate.inspector;
    if (this.store.nodeId && insp) insp.annot.save(verdict); else this.runAnnot.save(verdict);
    return true;
  }

  zoom(f) {
    const [w, h] = this.graph.viewSize();
    this.graph.zoomAt(f, w / 2, h / 2);
  }

  togglePauseOnError(on) {
    if (on) this.store.addBreakpoint({ point: 'error' });
    else for (const m of this.store.breakpoints.filter(isPauseOnError)) this.store.removeBreakpoint(m);
  }

  render() {
    const s = this.store;
    const ro = s.readOnly;
    this.runBtn.setAttribute('aria-pressed', String(s.mode === 'run'));
    this.stepBtn.setAttribute('aria-pressed', String(s.mode === 'step'));
    for (const b of [this.runBtn, this.stepBtn, this.errToggle, this.holdToggle, this.kindSel]) b.disabled = ro;
    this.errToggle.checked = s.breakpoints.some(isPauseOnError);
    this.holdToggle.checked = !!s.holdUnwatched;
    this.chips.replaceChildren(...s.breakpoints.filter((m) => !isPauseOnError(m)).map((m) => {
      const text = describeMatcher(m);
      return el('span', { class: `chip pt-${m.point || 'before'}`, role: 'listitem' },
        el('span', {}, text),
        el('button', { type: 'button', class: 'chip-x', disabled: ro, 'aria-label': `Remove breakpoint ${text}`, onclick: () => s.removeBreakpoint(m) }, '✕'));
    }));
  }

  renderInfo() {
    const m = this.store.model;
    if (!m) { this.infoText.replaceChildren(); return; }
    // Every figure is the run summary's (the run list's, docs/glossary.md); instances are
    // the graph's (the server projection). Name, status and times: store.syncRunInfo.
    const { status } = m.info;
    const r = this.store.runs.get(m.runId) || m.summary || null;
    const c = (r && r.counts) || { events: m.eventCount, nodes: m.nodes.size, errors: 0 };
    const u = (r && r.usage) || m.usage();
    const tokens = (u.inputTokens || 0) + (u.outputTokens || 0);
    const dur = runDuration(r ? { ...r, status } : { ...m.info, status });
    const cost = r && r.cost;
    this.infoText.replaceChildren(
      el('strong', {}, m.info.name || m.runId), ' ',
      el('span', { class: `pill st-${status}` }, status), ' ',
      this.store.loading ? el('span', { class: 'pill st-running' }, 'loading the graph…') : '', ' ',
      el('span', { class: 'muted', 'data-testid': 'run-figures' },
        el('span', { 'data-figure': 'duration' }, fmtDuration(dur)), ' ',
        runTimes(m, r && { ...r, status }, this.store.pauses.filter((p) => p.runId === m.runId)), ' · ',
        el('span', { 'data-figure': 'nodes', 'data-value': c.nodes }, countOf(c.nodes, 'node')), ' · ',
        el('span', { 'data-figure': 'instances', 'data-value': m.instList.length }, countOf(m.instList.length, 'instance')), ' · ',
        el('span', { 'data-figure': 'events', 'data-value': c.events }, countOf(c.events, 'event')),
        c.errors ? [' · ', el('span', { 'data-figure': 'errors', 'data-value': c.errors, class: 'err-count' }, countOf(c.errors, 'error'))] : '',
        tokens ? [' · ', el('span', { 'data-figure': 'tokens', 'data-value': tokens }, countOf(tokens, 'token'))] : '',
        cost && (cost.usd || isUnpriced(cost)) ? [' · ', el('span', { 'data-figure': 'cost', class: isUnpriced(cost) ? 'unpriced badge' : '', title: costDetail(cost) }, fmtCostShort(cost))] : ''));
  }
}

/**
 * Work time and held time of the run, apart (both visible; held in amber). Work time is
 * the run summary's (`workMs`; ticking while it runs, standing still while a gate holds
 * it), held time the graph's released holds plus `now` for a hold in progress.
 */
function runTimes(m, summary, held) {
  const { heldMs } = m.times;
  const heldNow = held.length > 0;
  const holdSince = heldNow ? Math.min(...held.map((p) => p.since || Date.now())) : null;
  const workMs = (summary ? runWork(summary, holdSince) : null) ?? m.times.workMs;
  return el('span', { class: 'run-times small' },
    el('span', { class: 'muted' }, '(work ',
      el('span', { 'data-figure': 'work', 'data-value': workMs ?? '' }, workMs === null ? '…' : fmtDuration(workMs))),
    el('span', { class: heldMs || heldNow ? 'held' : 'muted', 'data-figure': 'held', 'data-value': heldMs },
      ` · held ${heldNow && !heldMs ? 'now' : fmtDuration(heldMs)}${heldNow && heldMs ? ' + now' : ''}`),
    el('span', { class: 'muted' }, ')'));
}
