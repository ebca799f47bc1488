// Held gates as a person sees them, on a server without --hold-unwatched: the open page
// keeps an error gate held (it is somebody who can act); held time is amber on every
// instance that was held (timeline and inspector), work and held time shown apart; the
// toast says what happened; an abort pressed here is recorded as the person's abort; and
// when the page closes mid-hold the gate is continued as unwatched after the grace.
// Screenshots (1440×900, light and dark) of a held and a resumed run.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchBrowser, openPage, runAgent, until, artifact } from './lib/harness.mjs';

const GRACE_MS = 3000;

let srv;
let browser;
let page;
let context;
let errors;

before(async () => {
  srv = await startServer({ holdUnwatched: false });
  browser = await launchBrowser();
  ({ page, context, errors } = await openPage(browser, srv.url()));
  await until(() => page.locator('#conn').textContent().then((t) => t.startsWith('Live')), { what: 'the feed to connect' });
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
});

async function api(path) {
  const res = await fetch(`${srv.base}${path}`, { headers: { Authorization: `Bearer ${srv.token}` } });
  assert.equal(res.status, 200, path);
  return res.json();
}

async function heldRuns() {
  return (await api('/api/pauses')).pauses;
}

async function runNamed(name) {
  return until(async () => (await api(`/api/runs?q=${name}`)).runs[0], { what: `run ${name}` });
}

const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
// Two animation frames: the canvases (graph, timeline) redraw on the next one.
const painted = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

async function shoot(name) {
  for (const scheme of ['light', 'dark']) {
    if ((await theme()) !== scheme) await page.locator('#theme-toggle').click();
    await painted();
    await page.screenshot({ path: artifact(`gates-${name}-${scheme}.png`) });
  }
  await page.locator('#theme-toggle').click();
  assert.equal(await theme(), 'light');
}

/** The graph model's instances of `nodeId` in the selected run. */
function instancesOf(nodeId) {
  return page.evaluate((id) => {
    const m = window.mindgate.store.model;
    const node = m && m.nodes.get(id);
    return node ? node.insts.map((i) => ({ status: i.status, heldMs: i.heldMs, workMs: i.workMs, spans: i.spans })) : [];
  }, nodeId);
}

test('an open page holds the error gate; held time is amber and apart from work time; Retry says Retried', async () => {
  const agent = runAgent(srv.port, { AGENT_FAIL: '1', AGENT_RUN_NAME: 'held-1' });
  const pause = page.getByRole('group', { name: /Held: tool:check_visa error/ });
  await pause.waitFor({ timeout: 20000 });
  const held = await heldRuns();
  assert.equal(held.length, 1);
  // Watched: still held well past the grace.
  const since = Date.now();
  await until(async () => {
    assert.equal((await heldRuns()).length, 1, 'the watched gate was released');
    return Date.now() - since > GRACE_MS + 1000;
  }, { what: 'the grace to pass', timeout: 15000 });
  await page.locator('.run-button', { hasText: 'held-1' }).click();
  await until(() => page.evaluate(() => !!(window.mindgate.store.model && window.mindgate.store.model.nodes.get('tool:check_visa'))), { what: 'the held run drawn' });
  await page.evaluate(() => window.mindgate.store.selectNode('tool:check_visa', { reveal: true }));
  await until(async () => (await instancesOf('tool:check_visa')).some((i) => i.spans.length === 1 && i.spans[0].until === null), { what: 'the open hold in the graph' });
  await page.locator('#inspector .held', { hasText: 'held now' }).waitFor();
  await shoot('held');

  await pause.getByRole('button', { name: 'Retry', exact: true }).click();
  await page.locator('.result-log .result.ok', { hasText: 'Retried tool:check_visa' }).waitFor();
  await agent.waitFor('RUN-END');
  // graphmind-ai retries in the same instance: it errored, held, was resumed and finished ok.
  const [inst] = await until(async () => {
    const insts = await instancesOf('tool:check_visa');
    return insts.length === 1 && insts[0].status === 'ok' && insts[0].workMs !== null ? insts : null;
  }, { what: 'the resumed check_visa instance settled' });
  // Its hold closed, held time and work time apart.
  assert.equal(inst.spans.length, 1);
  assert.ok(inst.spans[0].until >= inst.spans[0].since);
  assert.ok(inst.heldMs >= GRACE_MS, `held ${inst.heldMs} ms`);
  assert.ok(inst.workMs >= 0 && inst.workMs < inst.heldMs, `work ${inst.workMs} ms`);
  const times = await page.evaluate(() => window.mindgate.store.model.times);
  assert.equal(times.heldMs, inst.spans[0].until - inst.spans[0].since, 'the run counts the hold once');
  assert.ok(times.workMs !== null);
  await page.locator('#graph-region .run-times .held', { hasText: 'held' }).waitFor();
  await page.locator('#inspector .inst-row .held').first().waitFor();
  // The node's box says it too (drawn on the canvas: read what the view wrote).
  const sub = await page.evaluate(() => window.mindgate.graph.summary(window.mindgate.store.model.nodes.get('tool:check_visa')));
  assert.match(sub, /^\S+ (ms|s) work · \S+ s held · 1 error$/);
  await shoot('resumed');
  assert.deepEqual(errors, []);
});

test('an abort pressed in the viewer is recorded as the person\'s abort', async () => {
  const agent = runAgent(srv.port, { AGENT_FAIL: '1', AGENT_RUN_NAME: 'abort-1' });
  const pause = page.getByRole('group', { name: /Held: tool:check_visa error/ });
  await pause.waitFor({ timeout: 20000 });
  await pause.getByRole('button', { name: 'Abort', exact: true }).click();
  await page.locator('.result-log .result.ok', { hasText: 'Aborted the run at tool:check_visa' }).waitFor();
  await agent.waitFor('RUN-END');
  const run = await runNamed('abort-1');
  const detail = await until(async () => {
    const d = await api(`/api/runs/${run.id}/nodes/tool:check_visa`);
    return d.instances[0].pauses[0]?.resumedAt ? d : null;
  }, { what: 'the abort recorded' });
  const record = detail.instances[0].pauses[0];
  assert.equal(record.action, 'abort');
  assert.deepEqual(record.principal, { kind: 'viewer' });
});

test('the page closes mid-hold: the gate is continued as unwatched after the grace', async () => {
  const agent = runAgent(srv.port, { AGENT_FAIL: '1', AGENT_RUN_NAME: 'left-1' });
  await page.getByRole('group', { name: /Held: tool:check_visa error/ }).waitFor({ timeout: 20000 });
  const closed = Date.now();
  await context.close();
  await agent.waitFor('RUN-END', 20000);
  assert.ok(Date.now() - closed >= GRACE_MS - 100, 'released before the grace');
  const run = await runNamed('left-1');
  const detail = await until(async () => {
    const d = await api(`/api/runs/${run.id}/nodes/tool:check_visa`);
    return d.instances[0].pauses[0]?.resumedAt ? d : null;
  }, { what: 'the release recorded' });
  assert.deepEqual(detail.instances[0].pauses[0].principal, { kind: 'unwatched' });
  assert.match(srv.logs(), /continued the error gate of run \S+ at node tool:check_visa/);
});

test('the "Hold when nobody watches" toggle is saved on the server', async () => {
  ({ page, context, errors } = await openPage(browser, srv.url()));
  await until(() => page.locator('#conn').textContent().then((t) => t.startsWith('Live')), { what: 'the feed to connect' });
  const toggle = page.getByRole('checkbox', { name: 'Hold when nobody watches' });
  assert.equal(await toggle.isChecked(), false);
  await toggle.check();
  await until(async () => (await api('/api/debug')).holdUnwatched === true, { what: 'the setting on the server' });
  await page.reload();
  await until(() => page.getByRole('checkbox', { name: 'Hold when nobody watches' }).isChecked(), { what: 'the toggle on after a reload' });
  await page.getByRole('checkbox', { name: 'Hold when nobody watches' }).uncheck();
  await until(async () => (await api('/api/debug')).holdUnwatched === false, { what: 'the setting off again' });
  assert.deepEqual(errors, []);
});
