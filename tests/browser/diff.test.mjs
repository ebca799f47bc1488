// End-to-end: the diff view (#/diff/<a>/<b>) of two runs recorded by the real GraphMind client
// (graphmind-ai 0.5.1, tests/browser/agents/diff_agent.py) that part at their search tool: the
// side-by-side table, the first divergence highlighted, the JSON diff of the selected node,
// picking runs, a clear error for an unknown run, and both runs' annotations (verdict, score,
// labels, comment, who) side by side.

import { test, before, after } from 'node:test';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import assert from 'node:assert/strict';
import { startServer, launchBrowser, openPage, until, artifact, recordDiffRun } from './lib/harness.mjs';

let srv;
let browser;
let page;
let errors;
const ids = {};

const record = (name, variant) => recordDiffRun(srv, name, variant);

before(async () => {
  srv = await startServer();
  // The same run name twice: graphmind-ai names the run's root agent after it (`agent:<name>`).
  ids.a = await record('trip', 'a');
  ids.b = await record('trip', 'b');
  browser = await launchBrowser();
  ({ page, errors } = await openPage(browser, srv.url()));
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
});

test('two runs side by side, the first divergence highlighted, the node JSON diff shown', async () => {
  await page.evaluate(([a, b]) => { location.hash = `#/diff/${encodeURIComponent(a)}/${encodeURIComponent(b)}`; }, [ids.a, ids.b]);
  await page.locator('[data-testid="diff-table"]').waitFor();
  assert.equal(await page.locator('main.layout').isHidden(), true, 'the run viewer is hidden');
  const rows = await page.locator('.diff-row').evaluateAll((trs) => trs.map((tr) => tr.dataset.node));
  assert.deepEqual(rows, ['agent:trip', 'tool:search', 'llm:answer']);
  assert.match(await page.locator('[data-testid="diff-first"]').textContent(), /First divergence: tool:search \(output, instance 1/);
  const first = page.locator('.diff-row.first');
  assert.equal(await first.count(), 1);
  assert.equal(await first.getAttribute('data-node'), 'tool:search');
  assert.equal(await first.getAttribute('aria-selected'), 'true', 'the divergence is selected');
  // Its JSON diff: the changed price and the added hit.
  const changes = await page.locator('[data-testid="diff-changes"] tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  assert.ok(changes.some((c) => c[1] === 'output' && c[2] === 'changed' && c[3] === '/hits/0/price' && c[4] === '120' && c[5] === '99'), JSON.stringify(changes));
  assert.ok(changes.some((c) => c[2] === 'added' && c[3] === '/hits/1'), JSON.stringify(changes));
  // The llm is the same in both: tokens and cost side by side, no difference.
  const llm = page.locator('.diff-row[data-node="llm:answer"]');
  const cells = await llm.locator('td').allTextContents();
  assert.equal(cells[4], '1.2k', `A tokens: ${cells}`);
  assert.equal(cells[9], '1.2k', `B tokens: ${cells}`);
  assert.match(cells[5], /^\$0\.000[0-9]+$/, `A cost: ${cells}`);
  assert.equal(cells[11], '', 'no difference');
  await llm.click();
  assert.match(await page.locator('[data-testid="diff-detail"]').textContent(), /No difference in this node/);
  await page.screenshot({ path: artifact('diff-view.png') });
  assert.deepEqual(errors, []);
});

test('the pickers open a diff, an unknown run is named', async () => {
  await page.locator('#nav-diff').click();
  await until(() => page.evaluate(() => window.mindgateDiff.page.pickB.runs.length >= 2), { what: 'the run pickers' });
  // The pickers are searchable: an id finds its run, Enter picks it.
  for (const label of ['Run A', 'Run B']) {
    const input = page.locator(`input[aria-label="${label}"]`);
    await input.fill(ids.b);
    await until(async () => (await page.locator('.run-picker-list:not([hidden]) .run-picker-option').evaluateAll((o) => o.map((x) => x.dataset.run))).join() === ids.b, { what: `${label} finding the run` });
    await input.press('Enter');
  }
  await page.locator('[data-testid="diff-compare"]').click();
  await until(async () => /No divergence/.test(await page.locator('[data-testid="diff-first"]').textContent().catch(() => '')), { what: 'a run against itself' });
  await page.evaluate(() => { location.hash = '#/diff/nope/also-nope'; });
  await page.locator('[data-testid="diff-error"]').waitFor();
  assert.match(await page.locator('[data-testid="diff-error"]').textContent(), /Cannot compare: no run nope/);
  // Back to the runs; D on an open run (not a replay) opens the diff with it as A.
  await page.locator('.diff-head a', { hasText: 'Runs' }).click();
  await until(async () => !(await page.locator('main.layout').isHidden()), { what: 'the run viewer back' });
  await page.evaluate((a) => { location.hash = `#/run/${encodeURIComponent(a)}`; }, ids.a);
  await page.locator('#graph').click();
  await page.keyboard.press('d');
  await until(async () => new URL(page.url()).hash === `#/diff/${encodeURIComponent(ids.a)}`, { what: 'D to open the diff view' });
  await until(() => page.evaluate((a) => window.mindgateDiff.page.pickA.value === a, ids.a), { what: 'A preselected' });
  assert.deepEqual(errors.filter((e) => !/404/.test(e)), []);
});

/** Posts an annotation with `token` (the control token: a person's; the agent token: an agent's). */
async function annotate(token, body) {
  const res = await fetch(`${srv.base}/api/annotations`, {
    method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  assert.equal(res.status, 201, await res.clone().text());
  return res.json();
}

test("the compare view shows both runs' annotations: verdict, score, labels, comment, who", async () => {
  const agentToken = JSON.parse(readFileSync(path.join(srv.home, 'run', `agent-${srv.port}.json`), 'utf8')).token;
  await annotate(srv.token, { runId: ids.a, verdict: 'up', score: 0.9, labels: ['golden'], comment: 'The right price.' });
  await annotate(srv.token, { runId: ids.b, nodeId: 'tool:search', verdict: 'down', labels: ['wrong-price'], comment: 'Price changed under us.' });
  await annotate(agentToken, { runId: ids.b, score: 0.3, scoreName: 'judge', labels: ['regression'], comment: 'judge model: worse' });
  const errorsBefore = errors.length;
  await page.evaluate(([a, b]) => { location.hash = `#/diff/${encodeURIComponent(a)}/${encodeURIComponent(b)}`; }, [ids.a, ids.b]);
  const sideA = page.locator('[data-testid="diff-annotations-a"]');
  const sideB = page.locator('[data-testid="diff-annotations-b"]');
  await until(async () => (await sideA.locator('.annot-row').count()) === 1 && (await sideB.locator('.annot-row').count()) === 2, { what: 'both runs\' annotations listed' });
  assert.match(await sideA.textContent(), /Annotations of A \(1\)/);
  assert.match(await sideA.locator('.annot-row').textContent(), /person.*▲.*score 0\.9.*golden.*The right price\./s);
  const rowsB = await sideB.locator('.annot-row').allTextContents();
  assert.ok(rowsB.some((t) => /person.*tool:search.*▼.*wrong-price.*Price changed under us\./s.test(t)), rowsB.join(' | '));
  assert.ok(rowsB.some((t) => /agent.*judge 0\.3.*regression.*judge model: worse/s.test(t)), rowsB.join(' | '));
  assert.equal(await sideB.locator('.annot-who.agent').count(), 1, "the agent's annotation is marked");
  // A node annotation links to the node in its run.
  assert.equal(await sideB.locator('a.annot-node').getAttribute('href'), `#/run/${encodeURIComponent(ids.b)}/node/${encodeURIComponent('tool:search')}`);
  await page.screenshot({ path: artifact('diff-annotations-light.png') });
  assert.deepEqual(errors.slice(errorsBefore), []);

  const dark = await openPage(browser, srv.url(`#/diff/${encodeURIComponent(ids.a)}/${encodeURIComponent(ids.b)}`), { colorScheme: 'dark' });
  await until(async () => (await dark.page.locator('[data-testid="diff-annotations-b"] .annot-row').count()) === 2, { what: 'the dark page listing them' });
  await dark.page.screenshot({ path: artifact('diff-annotations-dark.png') });
  assert.deepEqual(dark.errors, []);
  await dark.context.close();
});
