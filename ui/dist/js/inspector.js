// The inspector: every instance of the selected node with status, timings,
// usage, input, output, error and streamed text. The graph fields (status,
// timings, usage, short error, streamed text) come with the run graph; input,
// output, the full error and the gate holds are node detail, read from
// `GET /api/runs/:id/nodes/:nodeId` when the node is selected and again when a
// delta changes it. An `llm` instance's input and output read as a
// conversation (the core's transcript, transcript.js), with a "Raw JSON" toggle.

import { el } from './dom.js';
import { fmtDuration, fmtTime, fmtCount, fmtCost, KIND_GLYPH } from './format.js';
import { api } from './conn.js';
import { VirtualList } from './vlist.js';
import { JsonTree } from './jsontree.js';
import { retrieverSection } from './memorylinks.js';
import { applyNodeDetail } from './graphdelta.js';
import { EMBEDDED } from './embedded.js';
import { TranscriptView } from './transcript.js';
import { AnnotationBox } from './annotations.js';
import { datasetDialog } from './datasets.js';

/** Waits this long after one detail read before the next one of a node that keeps changing. */
const DETAIL_REFRESH_MS = 200;

/**
 * Node detail for the inspector: one read at a time; a read for a node no
 * longer selected is aborted; a node that changed while its read ran is read
 * again (at most every DETAIL_REFRESH_MS).
 */
class DetailLoader {
  constructor(store, onLoaded) {
    this.store = store;
    this.onLoaded = onLoaded;
    this.current = null; // { model, node, controller, again, timer }
  }

  /** The selected node (or none): reads its detail unless what is held is current. */
  want(model, node) {
    if (!node || !model || model.runId === this.store.local) { this.cancel(); return; }
    const c = this.current;
    if (c && c.model === model && c.node === node) {
      if (c.controller || c.timer) { c.again = c.again || node.detailRev !== node.rev; return; }
      if (node.detailRev === node.rev) return;
    } else {
      this.cancel();
      if (node.detailRev === node.rev) { this.current = { model, node }; return; }
      this.current = { model, node };
    }
    this.read(this.current);
  }

  cancel() {
    const c = this.current;
    if (c) {
      if (c.controller) c.controller.abort();
      clearTimeout(c.timer);
    }
    this.current = null;
  }

  read(c) {
    c.again = false;
    c.timer = null;
    c.controller = new AbortController();
    const rev = c.node.rev;
    const path = `/api/runs/${encodeURIComponent(c.model.runId)}/nodes/${encodeURIComponent(c.node.id)}`;
    api(this.store.token, path, { signal: c.controller.signal }).then((detail) => {
      if (this.current !== c) return;
      applyNodeDetail(c.model, detail);
      c.node.detailRev = rev;
      this.onLoaded();
    }).catch((err) => {
      if (this.current !== c || err.name === 'AbortError') return;
      c.node.detailRev = rev; // not read again until the node changes
    }).finally(() => {
      if (this.current !== c) return;
      c.controller = null;
      if (c.again || c.node.detailRev !== c.node.rev) c.timer = setTimeout(() => { if (this.current === c) this.read(c); }, DETAIL_REFRESH_MS);
    });
  }
}

export class Inspector {
  constructor(host, store) {
    this.store = store;
    this.host = host;
    this.head = el('div', { class: 'insp-head' });
    this.empty = el('p', { class: 'muted pad' }, 'Click a box in the graph (or a bar in the timeline) to inspect it.');
    this.instHead = el('h3', { class: 'insp-sub' }, 'Instances');
    const instHost = el('div', { class: 'insp-insts' });
    this.instList = new VirtualList(instHost, 28, (inst) => this.instRow(inst), { label: 'Instances', role: 'listbox', focusable: true });
    this.instHost = instHost;
    this.facts = el('dl', { class: 'facts' });
    this.tokensBox = el('section', { class: 'insp-block', hidden: true },
      el('h3', { class: 'insp-sub' }, 'Streamed text'), this.tokensPre = el('pre', { class: 'tokens', 'aria-live': 'off' }));
    this.errorBox = el('section', { class: 'insp-block err-block', hidden: true });
    this.costBox = el('section', { class: 'insp-block insp-cost', hidden: true, 'aria-label': 'Cost' });
    const inHost = el('section', { class: 'insp-block' }, el('h3', { class: 'insp-sub' }, 'Input'));
    const outHost = el('section', { class: 'insp-block' }, el('h3', { class: 'insp-sub' }, 'Output'));
    this.inHost = inHost;
    this.outHost = outHost;
    this.input = new JsonTree(inHost, 'Input');
    this.output = new JsonTree(outHost, 'Output');
    // A model call reads as a conversation; "Raw JSON" shows the input and output trees instead.
    this.rawToggle = el('button', {
      type: 'button', class: 'small-btn tx-raw', 'aria-pressed': 'false',
      onclick: () => { this.raw = !this.raw; this.renderInstance(this.current); },
    }, 'Raw JSON');
    this.raw = false;
    this.convoBox = el('section', { class: 'insp-block insp-convo', hidden: true, 'aria-label': 'Conversation' },
      el('div', { class: 'tx-bar' }, el('h3', { class: 'insp-sub' }, 'Conversation'), this.rawToggle));
    this.convo = new TranscriptView(this.convoBox, {
      toolTarget: (name, callId) => this.toolTarget(name, callId),
      onOpen: (target) => this.store.selectNode(target.nodeId, { reveal: true, instanceId: target.instanceId || null }),
    });
    this.annot = new AnnotationBox(store, { label: 'Annotations of this node', onOpenNode: (id) => store.selectNode(id, { reveal: true }) });
    // "Add to dataset": this instance's input and output as an example (datasets.js).
    this.dsBtn = el('button', {
      type: 'button', class: 'small-btn ds-open', 'data-testid': 'inspector-add-to-dataset', hidden: EMBEDDED,
      title: "This instance's input and output become an example of a dataset",
      onclick: () => datasetDialog(store).open(this.annot.target && { ...this.annot.target }),
    }, 'Add to dataset…');
    this.annot.element.append(el('div', { class: 'ds-bar' }, this.dsBtn));
    this.body = el('div', { class: 'insp-body', hidden: true },
      this.instHead, instHost, el('div', { class: 'insp-detail' }, this.facts, this.annot.element, this.costBox, this.errorBox, this.convoBox, this.tokensBox, this.memoryBox = el('div'), inHost, outHost));
    host.append(el('div', { class: 'panel-head' }, el('h2', { id: 'inspector-title' }, 'Inspector')), this.head, this.empty, this.body);
    this.node = null;
    this.rev = -1;
    this.detail = new DetailLoader(store, () => this.render(true));
    store.on('select', () => this.render(true));
    store.on('run', () => this.render(true));
    store.on('model', () => this.render(false));
    store.on('inspect', (id) => {
      this.store.selectNode(id);
      const first = this.host.querySelector('.insp-head button, .insp-insts [role=option]');
      if (first) first.focus();
    });
  }

  render(force) {
    const m = this.store.model;
    const node = m && this.store.nodeId ? m.nodes.get(this.store.nodeId) : null;
    this.detail.want(m, node);
    if (!node) {
      this.node = null;
      this.head.replaceChildren();
      this.empty.hidden = false;
      this.body.hidden = true;
      return;
    }
    if (!force && node === this.node && node.rev === this.rev) return;
    const nodeChanged = node !== this.node;
    this.node = node;
    this.rev = node.rev;
    this.empty.hidden = true;
    this.body.hidden = false;
    this.renderHead(node);
    this.renderCost(node);
    const insts = node.insts;
    this.instHead.textContent = `Instances (${insts.length})`;
    this.instHost.style.height = `${Math.max(1, Math.min(insts.length, 6)) * 28 + 2}px`;
    this.instList.setItems(insts);
    let inst = this.store.instanceId ? m.instances.get(this.store.instanceId) : null;
    if (!inst || inst.node !== node) inst = insts[insts.length - 1] || null;
    if (nodeChanged && inst) this.instList.scrollToIndex(insts.indexOf(inst));
    if (m.runId !== this.store.local) this.annot.setTarget(m.runId, node.id, inst && inst.id);
    this.dsBtn.hidden = EMBEDDED || this.store.readOnly || m.runId === this.store.local;
    this.renderInstance(inst);
  }

  renderHead(node) {
    const paused = this.store.pauses.some((p) => p.runId === this.store.runId && p.nodeId === node.id);
    const status = paused ? 'paused' : node.status;
    const bp = (point) => el('button', {
      type: 'button', class: 'small-btn',
      onclick: () => this.store.addBreakpoint({ kind: node.kind, name: node.name, point }),
    }, point === 'error' ? 'Break on error' : `Break ${point}`);
    const m = this.store.model;
    const finished = m && m.info && m.info.status && m.info.status !== 'running';
    const replay = finished && !this.store.readOnly ? el('button', {
      type: 'button', class: 'small-btn', title: 'Arm the next run of this app to replay up to this step (docs/replay.md)',
      onclick: () => this.replayTo(node),
    }, 'Replay to here') : '';
    this.head.replaceChildren(
      el('div', { class: 'insp-title' },
        el('span', { class: 'kind-glyph', title: node.kind }, KIND_GLYPH[node.kind] || '?'),
        el('span', { class: 'insp-name' }, node.name),
        node.label ? el('span', { class: 'mono small insp-label', title: 'The model it called' }, node.label) : '',
        el('span', { class: `pill st-${status}` }, status)),
      el('div', { class: 'mono small muted' }, node.id, node.parentId ? ` ← ${node.parentId}` : ''),
      // An exported page is read-only: no breakpoint or replay buttons.
      EMBEDDED ? '' : el('div', { class: 'insp-actions', role: 'group', 'aria-label': `Breakpoints for ${node.name}` }, bp('before'), bp('after'), bp('error'), replay),
    );
  }

  /** `POST /api/runs/:id/replay` for the selected node and instance; the result goes to the log. */
  async replayTo(node) {
    const runId = this.store.runId;
    const inst = this.store.instanceId && this.store.model ? this.store.model.instances.get(this.store.instanceId) : null;
    const body = { nodeId: node.id };
    if (inst && inst.node === node) body.instance = inst.id;
    try {
      const r = await api(this.store.token, `/api/runs/${encodeURIComponent(runId)}/replay`, { method: 'POST', body });
      this.store.note('ok', `Replay armed: the next run of ${r.app} replays ${r.injectedSteps} step(s), then holds at ${node.name}`);
    } catch (err) {
      this.store.note('error', `Replay to ${node.name} failed: ${err.message}`);
    }
  }

  /** The node's cost and token split, read from the run report (the server prices usage). */
  renderCost(node) {
    const runId = this.store.runId;
    const finished = node.insts.filter((i) => i.end !== null).length;
    const key = `${runId}|${node.id}|${finished}`;
    if (key === this.costKey) return;
    this.costKey = key;
    this.costBox.hidden = true;
    this.nodeCost = null;
    // A page-local run (perf harness, replays) has no report on the server.
    if (!runId || !finished || runId === this.store.local) return;
    api(this.store.token, `/api/runs/${encodeURIComponent(runId)}/report`).then((report) => {
      if (this.costKey !== key || !report || !report.tokens) return;
      this.showCost(report.tokens.byNode.find((n) => n.nodeId === node.id), report.tokens.cost);
    }).catch(() => { /* no cost shown */ });
  }

  showCost(t, runCost) {
    this.nodeCost = t ? t.cost : null;
    if (this.current && this.current.transcript && !this.raw) this.convo.set(this.current.transcript, this.nodeCost);
    if (!t) { this.costBox.hidden = true; return; }
    const fact = (k, v, cls) => [el('dt', {}, k), el('dd', cls ? { class: cls } : {}, v)];
    const unpriced = t.cost.usd === null;
    this.costBox.replaceChildren(
      el('h3', { class: 'insp-sub' }, 'Cost'),
      el('dl', { class: 'facts' },
        ...fact('Node cost', fmtCost(t.cost), unpriced ? 'unpriced' : 'node-cost'),
        ...fact('Tokens', `${fmtCount(t.inputTokens)} in · ${fmtCount(t.outputTokens)} out · ${fmtCount(t.cacheReadTokens)} cache read · ${fmtCount(t.cacheWriteTokens)} cache write`),
        ...(t.models.length ? fact(t.models.length === 1 ? 'Model' : 'Models', t.models.join(', ')) : []),
        ...(t.inclusive ? fact('Inclusive', 'includes its children\'s usage: not added to the run\'s cost') : []),
        ...(runCost ? fact('Run cost', fmtCost(runCost), runCost.usd === null ? 'unpriced' : 'run-cost') : [])));
    this.costBox.hidden = false;
  }

  instRow(inst) {
    const i = inst.node.insts.indexOf(inst);
    const selected = this.current === inst;
    const dur = inst.durationMs ?? (inst.end === null ? Date.now() - inst.start : null);
    return el('div', {
      role: 'option', class: `inst-row${selected ? ' selected' : ''}`, tabindex: '-1', 'aria-selected': selected ? 'true' : 'false',
      onclick: () => this.store.selectInstance(inst.id),
      onkeydown: (e) => {
        const list = inst.node.insts;
        if (e.key === 'ArrowDown' && list[i + 1]) { e.preventDefault(); this.store.selectInstance(list[i + 1].id); }
        if (e.key === 'ArrowUp' && list[i - 1]) { e.preventDefault(); this.store.selectInstance(list[i - 1].id); }
      },
    },
      el('span', { class: 'mono small' }, `#${i + 1}`),
      el('span', { class: `status-dot st-${inst.status}` }),
      el('span', { class: 'small' }, inst.status),
      el('span', { class: 'small muted' }, inst.workMs !== null ? `work ${fmtDuration(inst.workMs)}` : fmtDuration(dur)),
      inst.heldMs ? el('span', { class: 'small held' }, `held ${fmtDuration(inst.heldMs)}`) : '',
      inst.injected ? el('span', { class: 'small pill st-paused' }, 'injected') : '');
  }

  renderInstance(inst) {
    const prev = this.current;
    this.current = inst;
    if (prev !== inst) {
      this.instList.refresh();
      const row = this.instHost.querySelector('.inst-row.selected');
      if (row && this.instHost.contains(document.activeElement)) row.focus();
    }
    if (!inst) {
      this.facts.replaceChildren();
      this.showConversation(null);
      this.input.setValue(undefined);
      this.output.setValue(undefined);
      this.errorBox.hidden = true;
      this.tokensBox.hidden = true;
      this.memoryBox.replaceChildren();
      return;
    }
    const fact = (k, v) => [el('dt', {}, k), el('dd', {}, v)];
    const u = inst.usage;
    const dur = inst.durationMs ?? (inst.end === null ? Date.now() - inst.start : null);
    this.facts.replaceChildren(
      ...fact('Instance', el('span', { class: 'mono small' }, inst.id)),
      ...fact('Status', el('span', { class: `pill st-${inst.status}` }, inst.status + (inst.injected ? ' (injected)' : '') + (inst.status === 'ok' && inst.error ? ' (recovered from error)' : ''))),
      ...fact('Started', fmtTime(inst.start)),
      ...fact('Duration', `${fmtDuration(dur)}${inst.end === null && inst.workMs === null ? ' so far' : ''}`),
      ...fact('Work', inst.workMs !== null ? fmtDuration(inst.workMs) : '–'),
      ...fact('Held', el('span', { class: inst.heldMs || inst.spans.length ? 'held' : '' }, inst.heldMs ? fmtDuration(inst.heldMs) : inst.spans.some((h) => h.until === null) ? 'held now' : '–')),
      ...(inst.redaction ? fact('Redacted', `${inst.redaction.count} value(s)${inst.redaction.keys && inst.redaction.keys.length ? `: ${inst.redaction.keys.join(', ')}` : ''}`) : []),
      ...(inst.holds.length ? fact('Gates', inst.holds.map((h) => `${h.point}${h.reason ? ` (${h.reason})` : ''} → ${h.action || 'held'}${h.principal && h.principal.kind ? ` by ${h.principal.kind}` : ''}`).join(', ')) : []),
      ...(u ? fact('Usage', `${fmtCount(u.inputTokens || 0)} in · ${fmtCount(u.outputTokens || 0)} out${u.reasoningTokens ? ` · ${fmtCount(u.reasoningTokens)} reasoning` : ''}${u.cacheReadTokens ? ` · ${fmtCount(u.cacheReadTokens)} cached` : ''}`) : []),
    );
    const error = inst.errorDetail || inst.error;
    if (error) {
      this.errorBox.hidden = false;
      this.errorBox.replaceChildren(
        el('h3', { class: 'insp-sub' }, 'Error'),
        el('div', { class: 'err-title' }, `${error.name || 'Error'}: ${error.message || ''}`),
        typeof error.stack === 'string' && error.stack ? el('pre', { class: 'stack' }, error.stack) : '');
    } else {
      this.errorBox.hidden = true;
    }
    const text = Object.entries(inst.tokens).map(([ch, v]) => (ch === 'text' ? v : `[${ch}] ${v}`)).join('\n');
    this.tokensBox.hidden = !text;
    if (this.tokensPre.textContent !== text) {
      const atEnd = this.tokensPre.scrollTop + this.tokensPre.clientHeight >= this.tokensPre.scrollHeight - 4;
      this.tokensPre.textContent = text;
      if (atEnd) this.tokensPre.scrollTop = this.tokensPre.scrollHeight;
    }
    // A retriever's hits link into the memory inspector (memorylinks.js).
    const memory = inst.node.kind === 'retriever' ? retrieverSection(inst) : null;
    this.memoryBox.replaceChildren(...(memory ? [memory] : []));
    this.showConversation(inst);
    this.input.setValue(inst.input);
    this.output.setValue(inst.output);
  }

  /**
   * A model call's transcript instead of its input and output trees (the input tree stays
   * when the transcript holds none of it); "Raw JSON" shows the trees. The streamed text
   * box stays: it is the live view of a call still answering.
   */
  showConversation(inst) {
    const t = inst ? inst.transcript : null;
    this.convoBox.hidden = !t;
    this.rawToggle.setAttribute('aria-pressed', this.raw ? 'true' : 'false');
    this.convo.set(t && !this.raw ? t : null, this.nodeCost);
    const conversation = !!t && !this.raw;
    this.inHost.hidden = conversation && t.inputCount > 0;
    this.outHost.hidden = conversation;
  }

  /**
   * What ran a tool call: the instance whose `toolCallId` (the core's) is the call's id,
   * else the node `tool:<name>` or a tool node of that name.
   */
  toolTarget(name, callId) {
    const m = this.store.model;
    if (!m) return null;
    if (callId) {
      const inst = m.instList.find((i) => i.toolCallId === callId);
      if (inst) return { nodeId: inst.node.id, instanceId: inst.id };
    }
    if (!name) return null;
    const byId = m.nodes.get(`tool:${name}`);
    if (byId) return { nodeId: byId.id };
    for (const n of m.nodes.values()) if (n.kind === 'tool' && n.name === name) return { nodeId: n.id };
    return null;
  }
}
