// End-to-end: the real `mindgate serve`, a real graphmind-ai 0.5.1 Python agent
// and the viewer in Debian's chromium. Breakpoints are set from the UI (node
// context menu), the Python tool is held, a value injected from the UI is what
// the Python call returns, and Abort ends the run aborted.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchBrowser, openPage, runAgent, until, artifact } from './lib/harness.mjs';

let srv;
let browser;
let page;
let errors;

before(async () => {
  srv = await startServer();
  browser = await launchBrowser();
  ({ page, errors } = await openPage(browser, srv.url()));
  await until(() => page.locator('#conn').textContent().then((t) => t.startsWith('Live')), { what: 'the feed to connect' });
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
});

const boxes = () => page.evaluate(() => window.mindgate.boxes());
const box = async (name) => (await boxes()).find((b) => b.name === name);
const results = (out) => out.split('\n').filter((l) => l.startsWith('RESULT ')).map((l) => JSON.parse(l.slice(7)));

async function openRun(name) {
  const row = page.locator('.run-button', { hasText: name });
  await row.first().waitFor({ timeout: 15000 });
  await row.first().click();
  // The click selects the run through the address (a hashchange, handled
  // later), so wait for that run's own graph, not the boxes of the one before.
  await until(() => page.evaluate((runName) => {
    const { store, graph } = window.mindgate;
    const run = store.runsOrdered.find((r) => r.id === store.runId);
    return run?.name === runName && graph.model === store.model && graph.opened && window.mindgate.boxes().length > 0;
  }, name), { what: `graph boxes of ${name}` });
}

test('graph boxes appear for a live run, one per logical node', async () => {
  const agent = runAgent(srv.port, { AGENT_RUN_NAME: 'trip-1' });
  await agent.waitFor('RUN-END');
  assert.match(agent.output(), /RUN-END ok/);
  await openRun('trip-1');
  const names = await until(async () => {
    const b = await boxes();
    const n = b.map((x) => x.name).sort();
    return n.length >= 6 ? n : null;
  }, { what: 'six boxes' });
  assert.deepEqual(names, ['book', 'draft-reply', 'plan', 'refund', 'search_flights', 'trip-1']);
  assert.equal((await box('refund')).status, 'hinted', 'a graph.hint node that never ran is grey');
  const agentBox = await box('trip-1');
  assert.equal(agentBox.kind, 'agent');
  assert.equal(agentBox.status, 'ok');
  // The run list shows it finished.
  await until(() => page.locator('.run-button', { hasText: 'trip-1' }).locator('.pill').textContent().then((t) => t === 'ok'), { what: 'run status ok in the list' });
  // Clicking a box opens the inspector with the tool's real input and output.
  const sf = await box('search_flights');
  await page.mouse.click(sf.x + sf.w / 2, sf.y + sf.h / 2);
  await page.locator('.insp-name', { hasText: 'search_flights' }).waitFor();
  await page.locator('#inspector .jt-str', { hasText: '"MG101"' }).first().waitFor();
  assert.match(page.url(), /#\/run\/[^/]+\/node\/tool%3Asearch_flights$/);
  // Streamed tokens are shown for the llm-kind span.
  const dr = await box('draft-reply');
  await page.mouse.click(dr.x + dr.w / 2, dr.y + dr.h / 2);
  await page.locator('#inspector .tokens', { hasText: 'Looking for the cheapest flight' }).waitFor();
  await page.screenshot({ path: artifact('01-run-graph-light.png') });
});

test('a breakpoint set from the node menu pauses the tool; Inject returns the JSON value to Python', async () => {
  const sf = await box('search_flights');
  await page.mouse.click(sf.x + sf.w / 2, sf.y + sf.h / 2, { button: 'right' });
  await page.getByRole('menuitem', { name: 'Break before search_flights' }).click();
  await page.locator('.chip', { hasText: 'before tool:search_flights' }).waitFor();

  const agent = runAgent(srv.port, { AGENT_RUN_NAME: 'trip-2' });
  await agent.waitFor('ATTACHED');
  const pause = page.getByRole('group', { name: /Held: tool:search_flights before/ });
  await pause.waitFor({ timeout: 15000 });
  // Held before its body: the Python call has not returned.
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(results(agent.output()).length, 0, 'search_flights must not return while held');

  await openRun('trip-2');
  await until(async () => (await box('search_flights'))?.status === 'paused', { what: 'search_flights box paused' });
  await page.screenshot({ path: artifact('02-paused-at-breakpoint.png') });

  // Invalid JSON is refused with a message and nothing is sent.
  await pause.getByRole('button', { name: 'Inject', exact: true }).click();
  const editor = page.getByRole('textbox', { name: 'Value to inject (JSON)' });
  await editor.fill('{"flights": [oops');
  await page.getByRole('button', { name: 'Inject value' }).click();
  await page.locator('#inject-error', { hasText: 'Invalid JSON' }).waitFor();
  await page.screenshot({ path: artifact('03-inject-invalid-json.png') });
  assert.equal(results(agent.output()).length, 0, 'nothing may be sent for invalid JSON');
  assert.ok(await pause.isVisible(), 'the gate is still held');

  const injected = [{ flight: 'UI-777', from: 'SFO', to: 'JFK', price: 1, injected: true }];
  await editor.fill(JSON.stringify(injected));
  await page.getByRole('button', { name: 'Inject value' }).click();
  await agent.waitFor('RUN-END');
  const got = results(agent.output());
  assert.deepEqual(got[0], { tool: 'search_flights', value: injected }, 'the Python tool call returned the injected value');
  assert.deepEqual(got[1].value, { booked: 'UI-777', confirmation: 'CONF-42' });
  assert.match(agent.output(), /RUN-END ok/);
  // The result is shown, the gate is gone, and the run finished ok.
  await page.locator('.result-log .result.ok', { hasText: 'Injected a value into tool:search_flights' }).waitFor();
  await until(async () => (await page.locator('.pause-item').count()) === 0, { what: 'no held gates' });
  await until(() => page.locator('.run-button', { hasText: 'trip-2' }).locator('.pill').textContent().then((t) => t === 'ok'), { what: 'trip-2 ok' });
  // Boxes kept arriving live while the run was open: book ran after the inject.
  await until(async () => (await box('book'))?.status === 'ok', { what: 'book box appears live' });
  // The inspector shows the injected output on the tool's instance.
  const b = await box('search_flights');
  await page.mouse.click(b.x + b.w / 2, b.y + b.h / 2);
  await page.locator('#inspector .pill', { hasText: 'ok (injected)' }).waitFor();
  await page.locator('#inspector .jt-str', { hasText: '"UI-777"' }).first().waitFor();
});

test('Abort ends the run aborted; a stale second resume is reported, not swallowed', async () => {
  const agent = runAgent(srv.port, { AGENT_RUN_NAME: 'trip-3' });
  await agent.waitFor('ATTACHED');
  const pause = page.getByRole('group', { name: /Held: tool:search_flights before/ });
  await pause.waitFor({ timeout: 15000 });
  // Keep a handle on the pause so we can try to resume it a second time.
  const stale = await page.evaluate(() => window.mindgate.store.pauses[0]);
  await pause.getByRole('button', { name: 'Abort', exact: true }).click();
  await agent.waitFor('RUN-END');
  assert.match(agent.output(), /RUN-END aborted/);
  assert.equal(results(agent.output()).length, 0);
  await until(() => page.locator('.run-button', { hasText: 'trip-3' }).locator('.pill').textContent().then((t) => t === 'aborted'), { what: 'trip-3 aborted in the run list' });
  const second = await page.evaluate((p) => window.mindgate.store.resume(p, 'continue'), stale);
  assert.ok(['no-such-pause', 'taken'].includes(second.result), `second resume: ${JSON.stringify(second)}`);
  await page.locator('.result-log .result.ok', { hasText: 'Aborted the run at tool:search_flights' }).waitFor();
  await page.locator('.result-log .result.warn', { hasText: second.result === 'taken' ? 'somebody else already released this gate' : 'the gate is no longer held' }).waitFor();
  await openRun('trip-3');
  await page.screenshot({ path: artifact('04-aborted-run.png') });
});

test('keyboard: C continues the held gate; breakpoint chip removes with one click', async () => {
  const agent = runAgent(srv.port, { AGENT_RUN_NAME: 'trip-4' });
  await agent.waitFor('ATTACHED');
  await page.getByRole('group', { name: /Held: tool:search_flights before/ }).waitFor({ timeout: 15000 });
  await page.locator('body').click({ position: { x: 5, y: 200 } });
  await page.keyboard.press('c');
  await agent.waitFor('RUN-END');
  assert.equal(results(agent.output())[0].value[0].flight, 'MG101', 'continue runs the real tool body');
  await page.getByRole('button', { name: 'Remove breakpoint before tool:search_flights' }).click();
  await until(async () => (await page.locator('.chip').count()) === 0, { what: 'chip removed' });
  const agent2 = runAgent(srv.port, { AGENT_RUN_NAME: 'trip-5' });
  await agent2.waitFor('RUN-END');
  assert.match(agent2.output(), /RUN-END ok/);
});

test('deep link, search and dark theme', async () => {
  const runId = await page.evaluate(() => window.mindgate.store.runsOrdered.find((r) => r.name === 'trip-2').id);
  const { page: p2, errors: e2 } = await openPage(browser, srv.url(`#/run/${encodeURIComponent(runId)}/node/${encodeURIComponent('tool:book')}`), { colorScheme: 'dark' });
  await p2.locator('.insp-name', { hasText: 'book' }).waitFor();
  await until(() => p2.evaluate(() => window.mindgate.graph.selected?.id === 'tool:book'), { what: 'the deep-linked node selected in the graph' });
  assert.equal(await p2.evaluate(() => document.documentElement.dataset.theme), 'dark');
  assert.doesNotMatch(p2.url(), /token=/, 'the token is removed from the address bar');
  await p2.keyboard.press('/');
  await p2.keyboard.type('draft');
  await p2.getByRole('option', { name: /draft-reply/ }).waitFor();
  await p2.keyboard.press('Enter');
  await p2.locator('.insp-name', { hasText: 'draft-reply' }).waitFor();
  await p2.screenshot({ path: artifact('05-dark-theme-deep-link.png') });
  // Every button has an accessible name.
  const unnamed = await p2.evaluate(() => [...document.querySelectorAll('button')]
    .filter((b) => b.offsetParent !== null && !(b.getAttribute('aria-label') || b.textContent.trim()))
    .map((b) => b.outerHTML.slice(0, 80)));
  assert.deepEqual(unnamed, []);
  assert.deepEqual(e2, []);
  await p2.context().close();
});

test('run list filters, keyboard navigation in the graph, theme toggle', async () => {
  await page.getByRole('searchbox', { name: 'Filter runs by name, app or id' }).fill('trip-3');
  await until(async () => (await page.locator('.run-button').count()) === 1, { what: 'one run after the text filter' });
  await page.getByRole('searchbox', { name: 'Filter runs by name, app or id' }).fill('');
  await page.getByRole('combobox', { name: 'Filter runs by status' }).selectOption('aborted');
  await until(async () => {
    const names = await page.locator('.run-button .run-name').allTextContents();
    return names.length === 1 && names[0] === 'trip-3';
  }, { what: 'only the aborted run' });
  await page.getByRole('combobox', { name: 'Filter runs by status' }).selectOption('all');

  await openRun('trip-2');
  const canvas = page.getByRole('application', { name: /Run graph/ });
  await canvas.focus();
  await page.keyboard.press('ArrowLeft'); // nothing selected → the root
  await page.locator('.insp-name', { hasText: 'trip-2' }).waitFor();
  await page.keyboard.press('ArrowRight'); // first child
  await page.locator('.insp-name', { hasText: 'refund' }).waitFor();
  await page.keyboard.press('ArrowDown');
  await page.locator('.insp-name', { hasText: 'plan' }).waitFor();
  await page.keyboard.press('Shift+F10');
  await page.getByRole('menuitem', { name: 'Break after plan' }).waitFor();
  await page.keyboard.press('Escape');
  assert.equal(await page.locator('.ctx-menu').isVisible(), false);

  const before = await page.evaluate(() => document.documentElement.dataset.theme);
  await page.getByRole('button', { name: /Switch to (dark|light) theme/ }).click();
  const afterTheme = await page.evaluate(() => document.documentElement.dataset.theme);
  assert.notEqual(afterTheme, before);
  await page.screenshot({ path: artifact('08-theme-toggled.png') });
  await page.getByRole('button', { name: /Switch to (dark|light) theme/ }).click();
});

test('pause on error (armed by default): the inspector shows the error, Retry re-runs the tool', async () => {
  const agent = runAgent(srv.port, { AGENT_RUN_NAME: 'trip-err', AGENT_FAIL: '1' });
  await agent.waitFor('ATTACHED');
  const pause = page.getByRole('group', { name: /Held: tool:check_visa error/ });
  await pause.waitFor({ timeout: 15000 });
  await openRun('trip-err');
  const b = await until(async () => { const x = await box('check_visa'); return x && x.status === 'paused' ? x : null; }, { what: 'check_visa held' });
  await page.mouse.click(b.x + b.w / 2, b.y + b.h / 2);
  await page.locator('#inspector .err-title', { hasText: 'ConnectionError: visa service unreachable for US' }).waitFor();
  await page.locator('#inspector .stack').waitFor();
  await page.screenshot({ path: artifact('07-error-gate-inspector.png') });
  await pause.getByRole('button', { name: 'Retry', exact: true }).click();
  await agent.waitFor('RUN-END');
  assert.match(agent.output(), /RUN-END ok/);
  const visa = results(agent.output()).find((r) => r.tool === 'check_visa');
  assert.equal(visa.value, 'visa ok after 2 attempts');
  await until(async () => (await box('check_visa'))?.status === 'ok', { what: 'check_visa ok after retry' });
  // The inspector still shows check_visa: the deltas that finished it refreshed its detail.
  await page.locator('#inspector .jt-str', { hasText: '"visa ok after 2 attempts"' }).first().waitFor();
});

test('Step mode holds the first gate; back to Run and Continue finishes the run', async () => {
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  await until(() => page.getByRole('button', { name: 'Step', exact: true }).getAttribute('aria-pressed').then((v) => v === 'true'), { what: 'Step pressed' });
  const agent = runAgent(srv.port, { AGENT_RUN_NAME: 'trip-6' });
  await agent.waitFor('ATTACHED');
  const pause = page.getByRole('group', { name: /Held: chain:plan before/ });
  await pause.waitFor({ timeout: 15000 });
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await until(() => page.getByRole('button', { name: 'Run', exact: true }).getAttribute('aria-pressed').then((v) => v === 'true'), { what: 'Run pressed' });
  await pause.getByRole('button', { name: 'Continue', exact: true }).click();
  await agent.waitFor('RUN-END');
  assert.match(agent.output(), /RUN-END ok/);
});

test('cost: the run list shows each run\'s cost, the inspector a node\'s cost and token split; an unknown model is unpriced', async () => {
  // gpt-4o: $2.50 in, $10 out, $1.25 cache read per million tokens →
  // 100k × 2.5 + 20k × 10 + 40k × 1.25 = $0.50 (built-in table, docs/cost.md).
  for (const [name, unpriced] of [['cost-priced', '0'], ['cost-mixed', '1']]) {
    const agent = runAgent(srv.port, { AGENT_RUN_NAME: name, AGENT_UNPRICED: unpriced }, 'cost_agent.py');
    await agent.waitFor('RUN-END');
  }
  const costBadge = (name) => page.locator('.run-button', { hasText: name }).locator('[data-testid="run-cost"]');
  await until(() => costBadge('cost-priced').textContent().then((t) => t === '$0.5000').catch(() => false), { what: 'the priced run\'s cost in the run list' });
  // Unpriced is one short badge in the row; the model and the priced part are its hover text.
  await until(() => costBadge('cost-mixed').textContent().then((t) => t === 'unpriced').catch(() => false), { what: 'the mixed run\'s unpriced badge in the run list' });
  assert.match(await costBadge('cost-mixed').getAttribute('title'), /^unpriced: model llama3:70b \(\$0\.5000 priced\)/);

  await openRun('cost-mixed');
  const answer = await until(() => box('answer'), { what: 'the answer box' });
  await page.mouse.click(answer.x + answer.w / 2, answer.y + answer.h / 2);
  const cost = page.locator('#inspector .insp-cost');
  await until(() => cost.textContent().then((t) => t.includes('Node cost$0.5000')), { what: 'the node cost in the inspector' });
  const text = await cost.textContent();
  assert.match(text, /Tokens100k in · 20k out · 40k cache read · 0 cache write/);
  assert.match(text, /Modelgpt-4o-2024-08-06/);
  assert.match(text, /Run costunpriced: model llama3:70b \(\$0\.5000 priced\)/);
  const local = await until(() => box('local'), { what: 'the local box' });
  await page.mouse.click(local.x + local.w / 2, local.y + local.h / 2);
  await until(() => cost.textContent().then((t) => t.includes('Node costunpriced: model llama3:70b')), { what: 'the unpriced node in the inspector' });
});

/** The open run's graph as the page holds it, in the shape of `GET /api/runs/:id/graph`'s nodes. */
const pageGraph = () => page.evaluate(() => window.mindgate.store.model.order.map((n) => ({
  nodeId: n.id, kind: n.kind, name: n.name, parentId: n.parentId, status: n.status,
  instances: n.insts.map((i) => ({ instanceId: i.id, status: i.status, tokens: i.tokens.text || '' })),
})));

test('the socket drops: a fresh snapshot replaces the graph, folds and selection stay, and it equals /graph', async () => {
  await openRun('trip-2');
  const root = await box('trip-2');
  await page.mouse.click(root.x + root.w / 2, root.y + root.h / 2);
  await page.locator('.insp-name', { hasText: 'trip-2' }).waitFor();
  const before = await page.evaluate(() => {
    const { store, graph } = window.mindgate;
    graph.toggleFold(store.model.nodes.get(store.nodeId));
    window.oldGraph = store.model;
    return { nodeId: store.nodeId, snapshots: store.snapshotsApplied || 0, folded: store.model.nodes.get(store.nodeId).folded };
  });
  assert.equal(before.folded, true, 'the root is folded before the drop');
  await page.evaluate(() => window.mindgate.store.feed.ws.close());
  await until(() => page.evaluate((n) => (window.mindgate.store.snapshotsApplied || 0) > n, before.snapshots), { what: 'a fresh snapshot after the reconnect' });
  const after = await page.evaluate(() => {
    const { store, graph } = window.mindgate;
    const node = store.model.nodes.get(store.nodeId);
    return { fresh: store.model !== window.oldGraph, nodeId: store.nodeId, selected: graph.selected?.id, drawn: graph.model === store.model, folded: node?.folded };
  });
  assert.deepEqual(after, { fresh: true, nodeId: before.nodeId, selected: before.nodeId, drawn: true, folded: true });
  await page.locator('.insp-name', { hasText: 'trip-2' }).waitFor();
  const runId = await page.evaluate(() => window.mindgate.store.runId);
  const want = await (await fetch(`${srv.base}/api/runs/${encodeURIComponent(runId)}/graph`)).json();
  assert.deepEqual(await pageGraph(), want.nodes.map((n) => ({
    nodeId: n.nodeId, kind: n.kind, name: n.name, parentId: n.parentId, status: n.status,
    instances: n.instances.map((i) => ({ instanceId: i.instanceId, status: i.status, tokens: i.tokens })),
  })));
  await page.evaluate(() => { const { store, graph } = window.mindgate; graph.toggleFold(store.model.nodes.get(store.nodeId)); });
});

test('no console errors on the main page', () => {
  assert.deepEqual(errors, []);
});

test('a stopped server is shown as disconnected and the page reconnects by itself', async () => {
  const port = srv.port;
  await srv.stop();
  await page.locator('#banner', { hasText: 'Disconnected' }).waitFor({ timeout: 10000 });
  assert.equal(await page.locator('#conn').textContent(), 'Disconnected');
  await page.screenshot({ path: artifact('06-disconnected.png') });
  srv = await startServer({ port });
  await until(() => page.locator('#conn').textContent().then((t) => t.startsWith('Live')), { timeout: 20000, what: 'reconnect' });
  // The restarted server has a fresh database: the open run is gone (404) until reselected.
  const ignorable = (e) => /WebSocket connection to .* failed|Failed to load resource|^http 404: GET /.test(e);
  assert.deepEqual(errors.filter((e) => !ignorable(e)), []);
});
