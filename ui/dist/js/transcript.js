// The conversation view of a model call: the core's normalised transcript
// (`instances[i].transcript` of node detail, docs/transcripts.md) as message
// blocks. Nothing is computed here but layout: the messages, model, finish
// reason and usage are the server's; the cost is the run report's.

import { el } from './dom.js';
import { fmtCount, fmtCost } from './format.js';

/** Text longer than this (characters or lines) folds, with a button that shows all of it. */
export const FOLD_CHARS = 1200;
export const FOLD_LINES = 16;

const ROLE_LABEL = { system: 'System', user: 'User', assistant: 'Assistant', tool: 'Tool' };

/** Pretty JSON for arguments and responses; a string stays as it is unless it is a JSON object or list. */
function pretty(v) {
  if (typeof v === 'string') {
    const t = v.trimStart();
    if (!(t.startsWith('{') || t.startsWith('[')) || v.length > 200000) return v;
    try { return JSON.stringify(JSON.parse(v), null, 2); } catch { return v; }
  }
  try { return JSON.stringify(v, null, 2); } catch { return String(v); }
}

/** Where `text` folds: the index of the FOLD_LINES-th newline or FOLD_CHARS, whichever is first; -1 when it fits. */
function foldAt(text) {
  let at = text.length > FOLD_CHARS ? FOLD_CHARS : -1;
  let lines = 0;
  for (let i = text.indexOf('\n'); i !== -1 && (at === -1 || i < at); i = text.indexOf('\n', i + 1)) {
    if (++lines === FOLD_LINES) { at = i; break; }
  }
  return at;
}

/** A text block, whitespace kept; long text folds with "Show all", never silently cut. */
function textBlock(text, cls) {
  const pre = el('pre', { class: `tx-text ${cls || ''}` });
  const at = foldAt(text);
  if (at === -1) { pre.textContent = text; return pre; }
  pre.textContent = text.slice(0, at);
  const rest = text.length - at;
  const more = el('button', {
    type: 'button', class: 'small-btn tx-more', 'aria-expanded': 'false',
    onclick: () => {
      const open = more.getAttribute('aria-expanded') === 'true';
      pre.textContent = open ? text.slice(0, at) : text;
      more.setAttribute('aria-expanded', open ? 'false' : 'true');
      more.textContent = open ? `Show all (${fmtCount(rest)} more characters)` : 'Show less';
    },
  }, `Show all (${fmtCount(rest)} more characters)`);
  return el('div', { class: 'tx-fold' }, pre, more);
}

/**
 * A link to what ran a call: the tool instance that answers its call id, else the tool
 * node of its name, when the graph has one; plain text otherwise.
 */
function toolLink(view, name, id) {
  const target = view.toolTarget(name, id);
  if (!target) return el('span', { class: 'tx-tool-name mono' }, name);
  return el('button', {
    type: 'button', class: 'link-btn tx-tool-name mono',
    title: `Inspect ${target.instanceId ? `the tool call ${target.instanceId} of ` : 'the tool node '}${target.nodeId}`,
    onclick: () => view.onOpen(target),
  }, name);
}

function partBlock(view, p, names) {
  switch (p.type) {
    case 'text': return textBlock(p.content || '');
    case 'reasoning':
      return el('div', { class: 'tx-part tx-reasoning' }, el('div', { class: 'tx-label' }, 'Reasoning'), textBlock(p.content || '', 'muted'));
    case 'tool_call':
      return el('div', { class: 'tx-part tx-call' },
        el('div', { class: 'tx-label' }, 'Tool call ', toolLink(view, p.name, p.id), p.id ? el('span', { class: 'tx-id mono muted' }, p.id) : ''),
        textBlock(pretty(p.arguments), 'mono'));
    case 'tool_call_response': {
      const name = p.name || (p.id ? names.get(p.id) : null);
      return el('div', { class: 'tx-part tx-result' },
        el('div', { class: 'tx-label' }, 'Result', name ? ' of ' : '', name ? toolLink(view, name, p.id) : '', p.id ? el('span', { class: 'tx-id mono muted' }, p.id) : ''),
        textBlock(pretty(p.response), 'mono'));
    }
    case 'image':
      return el('div', { class: 'tx-part tx-placeholder' }, `[image${p.mimeType ? ` ${p.mimeType}` : ''}${p.uri ? ` ${p.uri}` : ''}]`);
    default:
      return el('div', { class: 'tx-part tx-placeholder' }, `[${p.kind || p.type || 'part'}]`);
  }
}

/** The header: model, finish reason, tokens, and the node's cost from the run report. */
function header(t, cost) {
  const bits = [];
  if (t.model) bits.push(el('span', { class: 'tx-model mono' }, t.model));
  if (t.finishReason) bits.push(el('span', { class: 'pill tx-finish' }, t.finishReason));
  const u = t.usage;
  if (u) bits.push(el('span', { class: 'small' }, `${fmtCount(u.inputTokens || 0)} in · ${fmtCount(u.outputTokens || 0)} out${u.reasoningTokens ? ` · ${fmtCount(u.reasoningTokens)} reasoning` : ''}${u.cacheReadTokens ? ` · ${fmtCount(u.cacheReadTokens)} cached` : ''}`));
  if (cost) bits.push(el('span', { class: 'small tx-cost', title: 'The node\'s cost, from the run report' }, fmtCost(cost)));
  return el('div', { class: 'tx-head' }, ...bits);
}

export class TranscriptView {
  /**
   * @param host element to render into
   * @param {{ toolTarget: (name: string, callId: string|undefined) => ({nodeId: string, instanceId?: string}|null),
   *           onOpen: (target: {nodeId: string, instanceId?: string}) => void }} links
   */
  constructor(host, links) {
    this.host = host;
    this.toolTarget = links.toolTarget;
    this.onOpen = links.onOpen;
    this.box = el('div', { class: 'transcript', role: 'list', 'aria-label': 'Conversation' });
    host.append(this.box);
    this.shown = null;
  }

  /** Renders `t` (a normalised transcript) with the node's `cost`; nothing when `t` is null. */
  set(t, cost) {
    if (t === this.shown && cost === this.cost) return;
    this.shown = t;
    this.cost = cost;
    if (!t) { this.box.replaceChildren(); return; }
    const names = new Map();
    for (const m of t.messages) for (const p of m.parts) if (p.type === 'tool_call' && p.id) names.set(p.id, p.name);
    const blocks = [header(t, cost)];
    t.messages.forEach((m, i) => {
      if (i === t.inputCount && i > 0) blocks.push(el('div', { class: 'tx-divider', role: 'separator' }, 'Answer'));
      const role = ROLE_LABEL[m.role] || m.role;
      blocks.push(el('div', { class: `tx-msg tx-${ROLE_LABEL[m.role] ? m.role : 'other'}`, role: 'listitem' },
        el('div', { class: 'tx-role' }, role, m.name ? el('span', { class: 'muted' }, ` · ${m.name}`) : ''),
        ...m.parts.map((p) => partBlock(this, p, names))));
    });
    this.box.replaceChildren(...blocks);
  }
}
