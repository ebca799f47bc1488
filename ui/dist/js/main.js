// Boots the viewer: token, store, views, theme, connection banner, shortcuts.

import { el, typingTarget, announce } from './dom.js';
import { takeToken } from './conn.js';
import { Store } from './store.js';
import { GraphView } from './graphview.js';
import { RunList } from './runlist.js';
import { Inspector } from './inspector.js';
import { PausePanel } from './pausepanel.js';
import { RunBar } from './runbar.js';
import { Timeline } from './timeline.js';
import { Router } from './router.js';
import { Search } from './search.js';
import { ThreadPage } from './threadpage.js';
import { openSynthetic, prepareSynthetic, measureIncremental, whenDrawn } from './perf.js';

const $ = (id) => document.getElementById(id);

// ---- theme ------------------------------------------------------------------
const THEME_KEY = 'mindgate.theme';
function applyTheme(theme) {
  document.documentElement.dataset.theme = theme;
  const btn = $('theme-toggle');
  if (btn) {
    btn.setAttribute('aria-label', theme === 'dark' ? 'Switch to light theme' : 'Switch to dark theme');
    btn.textContent = theme === 'dark' ? '☀' : '☾';
  }
  window.dispatchEvent(new Event('mindgate:theme'));
}
const savedTheme = localStorage.getItem(THEME_KEY);
applyTheme(savedTheme || (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'));

// ---- wiring -----------------------------------------------------------------
const token = takeToken();
const store = new Store(token);
const graph = new GraphView($('graph'), store);
store.graph = graph;
const router = new Router(store);
new RunList($('runs'), store, router);
// An exported page has no held-gates panel (`mindgate export --html` leaves it out).
if ($('pauses')) new PausePanel($('pauses'), store);
const inspector = new Inspector($('inspector'), store);
const runBar = new RunBar($('runbar'), store, graph);
new Timeline($('timeline'), store);
new Search($('search'), store, router);
if ($('thread-page') && !store.exported) new ThreadPage($('thread-page'), document.querySelector('main.layout'), store);

$('help-btn').addEventListener('click', () => $('help').showModal());
$('theme-toggle').addEventListener('click', () => {
  const next = document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark';
  localStorage.setItem(THEME_KEY, next);
  applyTheme(next);
  announce(`${next} theme`);
});
window.addEventListener('mindgate:theme', () => graph.readTheme());

// ---- connection status -------------------------------------------------------
const connPill = $('conn');
const banner = $('banner');
store.on('conn', (c) => {
  connPill.dataset.state = c.state;
  connPill.textContent = c.state === 'open' ? (store.exported ? 'Exported file' : store.readOnly ? 'Live · read-only' : 'Live') : c.state === 'connecting' ? 'Connecting…' : 'Disconnected';
  connPill.title = c.version ? `mindgate ${c.version}` : '';
  if (c.state === 'closed') {
    banner.hidden = false;
    banner.replaceChildren(
      el('strong', {}, 'Disconnected from mindgate serve. '),
      `Reconnecting in ${Math.ceil(c.retryInMs / 1000)} s${c.reason ? ` (${c.reason})` : ''}. The page catches up by itself. `,
      el('button', { type: 'button', class: 'btn', onclick: () => store.feed.kick() }, 'Reconnect now'));
  } else if (c.state === 'open' && store.exported) {
    banner.hidden = false;
    banner.replaceChildren(el('strong', {}, 'Exported run. '), 'This file holds one run recorded by Mindgate (`mindgate export --html`); it needs no server and changes nothing.');
  } else if (c.state === 'open' && store.readOnly) {
    banner.hidden = false;
    banner.replaceChildren(el('strong', {}, 'Read-only. '), 'Open the URL printed by `mindgate serve` (it carries the control token) to pause, resume and set breakpoints.');
  } else {
    banner.hidden = true;
  }
});

// ---- global shortcuts ----------------------------------------------------------
document.addEventListener('keydown', (e) => {
  if (typingTarget(e) || e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === 'g') { e.preventDefault(); graph.canvas.focus(); }
  else if (e.key === '?') { e.preventDefault(); $('help').showModal(); }
  else if (e.key === 'Escape') { if (store.nodeId) store.selectNode(null); }
  else if (e.key === 'u' || e.key === 'U') { if (runBar.annotateKey('up')) e.preventDefault(); }
  else if (e.key === 'b' || e.key === 'B') { if (runBar.annotateKey('down')) e.preventDefault(); }
  else if (e.key === 'l' || e.key === 'L') {
    const box = store.nodeId ? inspector.annot : null;
    if (box && box.writable) { e.preventDefault(); box.labels.focus(); }
  }
});

// ---- go -----------------------------------------------------------------------
store.start();
router.apply();

// Tooling and test hooks (read-only views of the page state plus synthetic runs).
window.mindgate = {
  store,
  graph,
  inspector,
  boxes: () => graph.boxes(),
  prepareSynthetic: (nodes, events) => prepareSynthetic(nodes, events),
  openSynthetic: (nodes, events) => openSynthetic(store, nodes, events),
  measureIncremental: (n) => measureIncremental(store, n),
  whenDrawn: (nodeId) => whenDrawn(store, nodeId),
};
