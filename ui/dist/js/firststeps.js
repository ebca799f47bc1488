// First states: what an empty view says would fill it, and the button that fills it
// ("Run the demo" starts the scripted demo agent against this server, POST /api/demo).

import { el, toast } from './dom.js';
import { api } from './conn.js';

/** Starts the demo agent on the server; resolves true once it started (or already runs). */
export async function runDemo(token) {
  try {
    await api(token, '/api/demo', { method: 'POST' });
    toast('Demo started: its runs appear in the run list, and its error gate holds for you.', 'info');
    return true;
  } catch (err) {
    if (err.status === 409) { toast('The demo is already running: its runs are in the run list.', 'info'); return true; }
    toast(`Could not start the demo: ${err.message}`, 'error');
    return false;
  }
}

/** The "Run the demo" button (absent on a read-only or exported page, which cannot start it). */
export function demoButton(store, label = 'Run the demo') {
  const button = el('button', {
    type: 'button', class: 'btn primary demo-btn', 'data-testid': 'run-demo',
    onclick: async () => {
      button.disabled = true;
      try { await runDemo(store.token); } finally { button.disabled = false; }
    },
  }, label);
  const sync = () => { button.hidden = !!store.readOnly || !!store.exported; };
  store.on('conn', sync);
  sync();
  return button;
}

/** An empty state: one line of what would fill the view, then its actions. */
export function emptyState(testId, line, ...actions) {
  return el('div', { class: 'empty-state', 'data-testid': testId },
    el('p', { class: 'empty-line' }, ...[].concat(line)),
    actions.length ? el('div', { class: 'empty-actions' }, ...actions) : '');
}
