// The Tasks page's text search (#/tasks/search?q=…): every session's user messages, model
// replies, tool arguments and tool output, through GET /task-graph/api/search (the session
// index `mindgate tasks --search` and MCP `search_tasks` use). Each hit opens its node: the
// turn's graph with the node selected.

import { el } from './dom.js';
import { countOf } from './format.js';

const API = '/task-graph/api';
const KIND_LABEL = { user: 'you', assistant: 'model', tool_args: 'tool call', tool_output: 'tool output' };

/** Where a hit opens: its turn with the node selected (the whole graph when it is in no turn). */
export function hitHref(h) {
  const id = encodeURIComponent(h.session_id);
  const node = encodeURIComponent(h.node_id);
  return h.turn ? `#/task/${id}/turn/${encodeURIComponent(h.turn)}?node=${node}` : `#/task/${id}/graph?node=${node}`;
}

/** The snippet with its match in a <mark>. */
function snippet(h) {
  const chars = [...h.snippet];
  if (!h.mark) return el('span', { class: 'ts-snippet' }, h.snippet);
  const [a, b] = h.mark;
  return el('span', { class: 'ts-snippet' },
    chars.slice(0, a).join(''), el('mark', {}, chars.slice(a, b).join('')), chars.slice(b).join(''));
}

export class TaskSearchView {
  /** @param {HTMLElement} root @param {(url: string) => Promise<any>} getJson */
  constructor(root, getJson) {
    this.root = root;
    this.getJson = getJson;
  }

  async show(query) {
    const status = el('p', { class: 'muted small pad ts-status', role: 'status' }, query ? 'Searching…' : 'Type a word and press Enter.');
    const list = el('div', { class: 'ts-results' });
    this.root.replaceChildren(status, list);
    if (!query) return;
    let body;
    try {
      body = await this.getJson(`${API}/search?q=${encodeURIComponent(query)}&limit=200`);
    } catch (err) {
      status.textContent = `Search failed: ${err.message}`;
      return;
    }
    this.result = body;
    const hits = body.hits || [];
    const sessions = [];
    for (const h of hits) if (!sessions.includes(h.path)) sessions.push(h.path);
    status.textContent = hits.length
      ? `${countOf(hits.length, 'hit')} for “${query}” in ${countOf(sessions.length, 'session')}${hits.length >= 200 ? ' (the first 200)' : ''}`
      : `No session text contains “${query}”.`;
    list.replaceChildren(...sessions.map((p) => {
      const mine = hits.filter((h) => h.path === p);
      const first = mine[0];
      return el('section', { class: 'ts-session', 'data-id': first.session_id },
        el('h2', { class: 'ts-session-title' },
          el('a', { class: 'tg-link', href: `#/task/${encodeURIComponent(first.session_id)}`, title: first.title }, first.title || first.session_id),
          el('span', { class: 'muted small' }, ` ${first.agent} · ${countOf(mine.length, 'hit')}`)),
        el('ul', { class: 'ts-hits' }, ...mine.map((h) => el('li', { class: 'ts-hit', 'data-node': h.node_id },
          el('a', { class: 'ts-hit-link', href: hitHref(h), title: `${h.node_id}${h.turn ? ` in ${h.turn}` : ''}` },
            el('span', { class: `ts-kind ts-kind-${h.kind}` }, KIND_LABEL[h.kind] || h.kind),
            el('span', { class: 'ts-node mono small muted' }, h.node_id),
            snippet(h))))));
    }));
  }
}
