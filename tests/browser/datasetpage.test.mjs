// End-to-end: the datasets page (#/datasets) over examples taken from runs recorded by the
// real GraphMind client (graphmind-ai, tests/browser/agents/diff_agent.py): reached from the
// main navigation, it lists the datasets (name, latest version, examples), opens one to show
// its examples (input, expected, metadata, each source linked to its run and node in the
// viewer) beside its version log, exports the version shown, reads an older version as it
// was, and a source link opens the run's node in the viewer. Screenshots light and dark in test-artifacts/evaluate/.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startServer, launchBrowser, openPage, until, recordDiffRun, artifactIn } from './lib/harness.mjs';

let srv;
let browser;
const ids = {};

const shot = (name) => artifactIn('evaluate', name);

const record = (name, variant) => recordDiffRun(srv, name, variant);

/** A write to /api/datasets with the control token; the answer's JSON. */
async function write(method, rel, body) {
  const res = await fetch(`${srv.base}/api/datasets${rel}`, {
    method, headers: { Authorization: `Bearer ${srv.token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  assert.ok(res.ok, `${method} ${rel}: ${res.status} ${await res.clone().text()}`);
  return res.json();
}

async function read(rel) {
  const res = await fetch(`${srv.base}/api/datasets${rel}`);
  assert.ok(res.ok, `GET ${rel}: ${res.status}`);
  return res.json();
}

before(async () => {
  srv = await startServer();
  ids.a = await record('trip', 'a');
  ids.b = await record('trip', 'b');
  // trip-golden: v1 a node instance of run a, v2 run b whole, v3 one written by hand, v4 the
  // first edited, v5 the by-hand one removed.
  const one = await write('POST', '/trip-golden/examples', { from: { runId: ids.a, nodeId: 'tool:search' }, metadata: { why: 'right price' } });
  ids.first = one.examples[0].id;
  await write('POST', '/trip-golden/examples', { from: { runId: ids.b } });
  const hand = await write('POST', '/trip-golden/examples', { examples: [{ input: { q: 'refund?' }, expected: 'within 30 days' }] });
  await write('PATCH', `/trip-golden/examples/${ids.first}`, { expected: { hits: [{ price: 120, fixed: true }] } });
  await write('DELETE', `/trip-golden/examples/${hand.examples[0].id}`);
  await write('POST', '/smoke/examples', { examples: [{ input: 'ping' }] });
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
});

test('the datasets page lists, opens a dataset, reads an older version and links to the source', async () => {
  const { page, errors } = await openPage(browser, srv.url(`#/run/${encodeURIComponent(ids.a)}`));
  await page.locator('#nav-datasets').click();
  const list = page.locator('[data-testid="ds-list"]');
  await list.waitFor();
  assert.equal(await page.locator('main.layout').isHidden(), true, 'the run viewer is hidden');
  assert.match(await page.locator('#nav-datasets').getAttribute('class'), /active/);
  assert.equal(await page.evaluate(() => location.hash), '#/datasets');
  const rows = await list.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.cells].slice(0, 3).map((c) => c.textContent)));
  assert.deepEqual(rows, [['smoke', '1', '1'], ['trip-golden', '5', '2']], 'name, latest version, examples');
  await page.screenshot({ path: shot('datasets-list-light.png') });

  // One dataset: its examples as the server holds them, in order, each source linked.
  await list.getByRole('link', { name: 'trip-golden' }).click();
  const table = page.locator('[data-testid="ds-examples"]');
  await table.waitFor();
  assert.equal(await page.evaluate(() => location.hash), '#/datasets/trip-golden');
  assert.equal(await page.locator('[data-testid="ds-version"]').textContent(), 'version 5');
  const held = await read('/trip-golden');
  const shown = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.example));
  assert.deepEqual(shown, held.examples.map((x) => x.id));
  const first = table.locator(`tr[data-example="${ids.first}"]`);
  assert.deepEqual(JSON.parse(await first.locator('[data-testid="ds-input"]').textContent()), held.examples[0].input);
  assert.deepEqual(JSON.parse(await first.locator('[data-testid="ds-expected"]').textContent()), { hits: [{ price: 120, fixed: true }] });
  assert.deepEqual(JSON.parse(await first.locator('[data-testid="ds-metadata"]').textContent()), { why: 'right price' });
  assert.equal(await first.locator('[data-testid="ds-source-run"]').getAttribute('href'), `#/run/${encodeURIComponent(ids.a)}`);
  assert.equal(await first.locator('[data-testid="ds-source-node"]').getAttribute('href'), `#/run/${encodeURIComponent(ids.a)}/node/${encodeURIComponent('tool:search')}`);
  const whole = table.locator('tbody tr').nth(1);
  assert.equal(await whole.locator('[data-testid="ds-source-run"]').textContent(), ids.b);
  assert.match(await whole.textContent(), /the whole run/);
  // The version log, newest first: what each did.
  const log = await page.locator('[data-testid="ds-log"] li').evaluateAll((lis) => lis.map((li) => li.textContent));
  assert.equal(log.length, 5);
  assert.match(log[0], /^Version 5 removed 1 example → 2 examples/);
  assert.match(log[1], /^Version 4 updated 1 example → 3 examples/);
  assert.match(log[4], /^Version 1 added 1 example → 1 example(?!s)/);
  await page.screenshot({ path: shot('datasets-examples-light.png') });
  // Export JSONL: the version shown, as the export route writes it, saved under its name.
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('[data-testid="ds-export"]').click()]);
  assert.equal(download.suggestedFilename(), 'trip-golden-v5.jsonl');
  const saved = readFileSync(await download.path(), 'utf8');
  assert.equal(saved, await (await fetch(`${srv.base}/api/datasets/trip-golden/export?version=5`)).text());
  assert.match(saved.split('\n')[0], /"version":5/);

  // An older version, read as it was: the by-hand example still there, the first not yet edited.
  await page.locator('[data-testid="ds-log"] li[data-version="3"] a').click();
  await until(async () => (await page.evaluate(() => location.hash)) === '#/datasets/trip-golden/v/3', { what: 'the version route' });
  await until(async () => (await page.locator('[data-testid="ds-version"]').textContent()) === 'version 3 of 5', { what: 'version 3 shown' });
  assert.match(await page.locator('[data-testid="ds-older"]').textContent(), /older version.*version 3.*Open the newest \(version 5\)/);
  const v3 = await read('/trip-golden?version=3');
  assert.deepEqual(await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.example)), v3.examples.map((x) => x.id));
  assert.equal(v3.examples.length, 3);
  const firstThen = page.locator(`[data-testid="ds-examples"] tr[data-example="${ids.first}"] [data-testid="ds-expected"]`);
  assert.deepEqual(JSON.parse(await firstThen.textContent()), v3.examples[0].expected, 'the expected output before the edit');
  assert.equal(await page.locator('[data-testid="ds-log"] li.current').getAttribute('data-version'), '3');
  await page.screenshot({ path: shot('datasets-older-version-light.png') });

  // The source link opens the run's node in the viewer; back returns to the dataset.
  await page.locator(`[data-testid="ds-examples"] tr[data-example="${ids.first}"] [data-testid="ds-source-node"]`).click();
  await until(async () => (await page.locator('#inspector .insp-name').textContent().catch(() => '')) === 'search', { what: 'the source node inspected' });
  assert.equal(await page.locator('#datasets-page').isHidden(), true);
  assert.equal(await page.locator('main.layout').isVisible(), true);
  await page.goBack();
  await until(async () => (await page.locator('[data-testid="ds-version"]').textContent().catch(() => '')) === 'version 3 of 5', { what: 'back on the dataset' });
  assert.equal(await page.locator('main.layout').isHidden(), true);
  assert.deepEqual(errors, []);
});

test('an unknown dataset is named; the page reads well in the dark theme', async () => {
  const { page, errors } = await openPage(browser, srv.url('#/datasets/nope'), { colorScheme: 'dark' });
  const err = page.locator('[data-testid="ds-error"]');
  await err.waitFor();
  assert.match(await err.textContent(), /Cannot read dataset nope: no dataset nope/);
  // The refused reads (the version and its log) are the only failures.
  assert.ok(errors.some((e) => /http 404: GET .*\/api\/datasets\/nope/.test(e)), errors.join('\n'));
  assert.deepEqual(errors.filter((e) => !/404/.test(e)), []);
  await page.evaluate(() => { location.hash = '#/datasets'; });
  await page.locator('[data-testid="ds-list"]').waitFor();
  await page.screenshot({ path: shot('datasets-list-dark.png') });
  await page.locator('[data-testid="ds-list"]').getByRole('link', { name: 'trip-golden' }).click();
  await page.locator('[data-testid="ds-examples"]').waitFor();
  await page.screenshot({ path: shot('datasets-examples-dark.png') });
});
