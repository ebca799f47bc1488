// End-to-end: "Add to dataset" in the viewer, on a run recorded by the real GraphMind client
// (graphmind-ai, tests/browser/agents/diff_agent.py): a person adds a node instance from the
// inspector to a new dataset, then the whole run from the run bar to the same dataset
// (picked from the list); the server holds both examples, taken from the stored run (the
// instance's input and output; the run's agent input and final output), each a new version.
// Screenshots light and dark in test-artifacts/evaluate/.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchBrowser, openPage, until, artifactIn, recordDiffRun } from './lib/harness.mjs';

let srv;
let browser;
let runId;

const shot = (name) => artifactIn('evaluate', name);

async function dataset(name) {
  const res = await fetch(`${srv.base}/api/datasets/${encodeURIComponent(name)}`);
  return res.ok ? res.json() : null;
}

before(async () => {
  srv = await startServer();
  runId = await recordDiffRun(srv, 'trip', 'a');
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
});

test('add a node instance and the run to a dataset', async () => {
  const { page, errors } = await openPage(browser, srv.url(`#/run/${encodeURIComponent(runId)}/node/${encodeURIComponent('tool:search')}`));
  const open = page.locator('[data-testid="inspector-add-to-dataset"]');
  await open.waitFor();
  await open.click();
  const dialog = page.locator('dialog.ds-dialog');
  await dialog.waitFor();
  assert.match(await dialog.locator('.ds-what').textContent(), /node tool:search/);
  // A bad name is refused in the page, nothing sent.
  await dialog.getByLabel('Dataset name').fill('no spaces please');
  await dialog.getByRole('button', { name: 'Add', exact: true }).click();
  await until(async () => /letters, digits/.test(await page.locator('[data-testid="dataset-msg"]').textContent()), { what: 'the name rule shown' });
  assert.equal(await dataset('no spaces please'), null);
  await dialog.getByLabel('Dataset name').fill('trip-golden');
  await page.screenshot({ path: shot('dataset-dialog-light.png') });
  await dialog.getByRole('button', { name: 'Add', exact: true }).click();
  await until(async () => /Added to trip-golden \(version 1, 1 examples\)/.test(await page.locator('[data-testid="dataset-msg"]').textContent()), { what: 'the add confirmed' });

  // The server has it, taken from the stored instance.
  const one = await dataset('trip-golden');
  assert.equal(one.dataset.version, 1);
  assert.equal(one.examples.length, 1);
  const ex = one.examples[0];
  assert.equal(ex.source.runId, runId);
  assert.equal(ex.source.nodeId, 'tool:search');
  assert.ok(ex.source.instanceId, 'the instance named');
  const detail = await (await fetch(`${srv.base}/api/runs/${encodeURIComponent(runId)}/nodes/${encodeURIComponent('tool:search')}`)).json();
  const inst = detail.instances.find((i) => i.instanceId === ex.source.instanceId);
  assert.deepEqual([ex.input, ex.expected], [inst.input, inst.output], "the instance's input and output");
  assert.equal(ex.addedBy.kind, 'person');
  await dialog.getByRole('button', { name: 'Close' }).click();

  // The run bar: the whole run, to the dataset the dialog offers.
  await page.locator('[data-testid="run-add-to-dataset"]').click();
  await dialog.waitFor();
  assert.match(await dialog.locator('.ds-what').textContent(), /agent input and final output/);
  await until(async () => (await dialog.getByLabel('Dataset name').inputValue()) === 'trip-golden', { what: 'the existing dataset offered' });
  await dialog.getByRole('button', { name: 'Add', exact: true }).click();
  await until(async () => /version 2, 2 examples/.test(await page.locator('[data-testid="dataset-msg"]').textContent()), { what: 'the run added' });
  const two = await dataset('trip-golden');
  assert.equal(two.examples.length, 2);
  assert.equal(two.examples[1].source.nodeId, undefined, 'the whole run');
  assert.ok(two.examples[1].input !== undefined && two.examples[1].input !== null);
  await page.screenshot({ path: shot('dataset-run-added-light.png') });
  assert.deepEqual(errors, []);
});

test('the dataset dialog reads well in the dark theme', async () => {
  const { page, errors } = await openPage(browser, srv.url(`#/run/${encodeURIComponent(runId)}/node/${encodeURIComponent('llm:answer')}`), { colorScheme: 'dark' });
  const open = page.locator('[data-testid="inspector-add-to-dataset"]');
  await open.waitFor();
  await page.screenshot({ path: shot('dataset-inspector-dark.png') });
  await open.click();
  await page.locator('dialog.ds-dialog').waitFor();
  await until(async () => (await page.getByLabel('Dataset name').inputValue()) === 'trip-golden', { what: 'the existing dataset offered' });
  await page.screenshot({ path: shot('dataset-dialog-dark.png') });
  assert.deepEqual(errors, []);
});
