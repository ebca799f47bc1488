// End-to-end: annotations in the viewer, on two runs recorded by the real GraphMind client
// (graphmind-ai, tests/browser/agents/diff_agent.py): a person annotates a node in the
// inspector (thumbs down, labels, a comment), thumbs a node up with the U key, thumbs the
// run up from the run bar, an agent's annotation (the agent token) is marked as an
// agent's, and the run list filters by label and verdict; a failed `mindgate check` shows on
// the run, its failed rule linked to its node. Screenshots light and dark in
// test-artifacts/evaluate/.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { startServer, launchBrowser, openPage, until, ROOT, recordDiffRun, artifactIn } from './lib/harness.mjs';

let srv;
let browser;
const ids = {};

const shot = (name) => artifactIn('evaluate', name);

const record = (name, variant) => recordDiffRun(srv, name, variant);

async function annotations(query) {
  const res = await fetch(`${srv.base}/api/annotations?${query}`);
  return (await res.json()).annotations;
}

before(async () => {
  srv = await startServer();
  ids.a = await record('trip', 'a');
  ids.b = await record('trip', 'b');
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
});

test('annotate a node and the run, then filter the run list by label', async () => {
  const { page, errors } = await openPage(browser, srv.url(`#/run/${encodeURIComponent(ids.a)}/node/${encodeURIComponent('tool:search')}`));
  const box = page.locator('#inspector .annot');
  await box.locator('.annot-form').waitFor();
  await box.getByRole('button', { name: 'Thumbs down' }).click();
  await box.getByLabel('Score from 0 to 1').fill('0.2');
  await box.getByLabel('Labels, comma separated').fill('wrong-price, stale-cache');
  await box.getByLabel('Comment').fill('The search returned last week\'s price.');
  await box.getByRole('button', { name: 'Save annotation' }).click();
  await until(async () => (await box.locator('.annot-row').count()) === 1, { what: 'the saved annotation listed' });
  const stored = await annotations(`runId=${encodeURIComponent(ids.a)}&nodeId=tool:search`);
  assert.equal(stored.length, 1);
  assert.deepEqual([stored[0].verdict, stored[0].score, stored[0].labels, stored[0].author.kind, stored[0].instanceId !== undefined],
    ['down', 0.2, ['wrong-price', 'stale-cache'], 'person', true]);
  assert.match(await box.locator('.annot-row').textContent(), /person.*▼.*score 0\.2.*wrong-price.*stale-cache.*last week/s);

  // U: thumbs up for the selected node (outside a text field).
  await page.locator('#graph').click({ position: { x: 5, y: 5 } }).catch(() => {});
  await page.evaluate(() => document.activeElement && document.activeElement.blur());
  await page.evaluate((id) => window.mindgate.store.selectNode('llm:answer'), ids.a);
  await until(async () => (await page.locator('#inspector .insp-name').textContent()) === 'answer', { what: 'llm:answer inspected' });
  await page.keyboard.press('u');
  await until(async () => (await annotations(`runId=${encodeURIComponent(ids.a)}&nodeId=llm:answer`)).some((a) => a.verdict === 'up'), { what: 'U stored a thumbs up' });
  await until(async () => (await page.locator('#inspector .annot-row').count()) === 1, { what: 'the U annotation listed' });

  // An agent's annotation (the agent token) is marked as an agent's.
  const agentToken = JSON.parse(readFileSync(path.join(srv.home, 'run', `agent-${srv.port}.json`), 'utf8')).token;
  const res = await fetch(`${srv.base}/api/annotations`, {
    method: 'POST', headers: { Authorization: `Bearer ${agentToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ runId: ids.a, nodeId: 'llm:answer', score: 0.9, labels: ['fluent'], comment: 'reads well (judge model)' }),
  });
  assert.equal(res.status, 201);

  // The run bar: thumbs up for the run.
  await page.getByRole('button', { name: 'Thumbs up for this run' }).click();
  await until(async () => /▲ 1/.test(await page.locator('[data-testid="run-annotations"]').textContent()), { what: 'the run bar counting the thumbs up' });
  await page.evaluate(() => window.mindgate.store.selectNode('llm:answer'));
  await page.evaluate(() => window.mindgate.inspector.annot.reload());
  await until(async () => (await page.locator('#inspector .annot-row').count()) === 2, { what: 'both llm annotations listed' });
  assert.equal(await page.locator('#inspector .annot-who.agent').count(), 1, 'the agent annotation is marked');
  await page.screenshot({ path: shot('annotations-inspector-light.png') });

  // The run list: label:, verdict: and score>= keep only the matching run.
  const filter = page.getByLabel(/Filter runs by name/);
  const shown = async () => page.locator('#runs .run-row').count();
  assert.equal(await shown(), 2);
  await filter.fill('label:wrong-price');
  await until(async () => (await shown()) === 1, { what: 'label filter' });
  assert.match(await page.locator('#runs .run-row').textContent(), /trip/);
  await filter.fill('label:nothing-like-this');
  await until(async () => (await shown()) === 0, { what: 'no run for an unknown label' });
  await filter.fill('verdict:up');
  await until(async () => (await shown()) === 1, { what: 'verdict filter' });
  await filter.fill('label:wrong-price');
  await until(async () => (await shown()) === 1, { what: 'label filter again' });
  await page.screenshot({ path: shot('annotations-runlist-filter-light.png') });
  assert.deepEqual(errors, []);
});

test('the run dialog and the inspector read well in the dark theme', async () => {
  const { page, errors } = await openPage(browser, srv.url(`#/run/${encodeURIComponent(ids.a)}/node/${encodeURIComponent('llm:answer')}`), { colorScheme: 'dark' });
  await until(async () => (await page.locator('#inspector .annot-row').count()) === 2, { what: 'annotations in the inspector' })
    .catch(async (e) => { await page.screenshot({ path: shot('debug-dark.png') }); throw e; });
  await page.screenshot({ path: shot('annotations-inspector-dark.png') });
  await page.locator('.annot-open').click();
  await until(async () => (await page.locator('.annot-dialog .annot-row').count()) >= 1, { what: 'the run dialog listing the run annotation' });
  await page.screenshot({ path: shot('annotations-run-dialog-dark.png') });
  assert.deepEqual(errors, []);
});

test('a failed check shows on the run, its failed rule linked to its node', async () => {
  const bin = process.env.MINDGATE_BIN || path.join(ROOT, 'target/debug/mindgate');
  const rules = path.join(srv.home, 'rules.toml');
  writeFileSync(rules, '[tools]\nsame = "sequence"\n\n[[output]]\nnode = "tool:search"\nsame_as_baseline = true\n');
  const out = spawnSync(bin, ['check', ids.b, '--baseline', ids.a, '--rules', rules], { env: { ...process.env, MINDGATE_HOME: srv.home }, encoding: 'utf8' });
  assert.equal(out.status, 1, out.stdout + out.stderr);
  assert.match(out.stdout, /FAIL {2}output\.same_as_baseline\(tool:search\)/);
  const { page, errors } = await openPage(browser, srv.url(`#/run/${encodeURIComponent(ids.b)}`));
  const pill = page.locator('[data-testid="run-check"]');
  await until(async () => (await pill.count()) === 1 && /check failed/.test(await pill.textContent()), { what: 'the run bar showing the failed check' });
  await page.locator('.annot-open').click();
  const rule = page.locator('.annot-dialog .annot-rule button', { hasText: 'output.same_as_baseline(tool:search)' });
  await rule.waitFor();
  await page.screenshot({ path: shot('check-failed-run-light.png') });
  await rule.click();
  await until(async () => (await page.locator('#inspector .insp-name').textContent()) === 'search', { what: 'the failed rule opening its node' });
  assert.deepEqual(errors, []);
});

test('an annotation is edited in the inspector and its history shows the version before', async () => {
  const { page, errors } = await openPage(browser, srv.url(`#/run/${encodeURIComponent(ids.b)}/node/${encodeURIComponent('tool:search')}`));
  const box = page.locator('#inspector .annot');
  await box.locator('.annot-form').waitFor();
  await box.getByRole('button', { name: 'Thumbs down' }).click();
  await box.getByLabel('Labels, comma separated').first().fill('stale-price');
  await box.getByLabel('Comment').first().fill('Price from last week.');
  await box.getByRole('button', { name: 'Save annotation' }).click();
  const row = box.locator('.annot-row').first();
  await until(async () => (await box.locator('.annot-row').count()) === 1, { what: 'the annotation listed' });
  assert.equal(await row.locator('[data-testid="annot-history"]').count(), 0, 'no history before an edit');

  // Edit: another verdict, a score, other labels, another comment.
  await row.getByRole('button', { name: 'Edit this annotation' }).click();
  const form = row.locator('.annot-edit-form');
  await form.waitFor();
  assert.equal(await form.getByLabel('Verdict').inputValue(), 'down', 'the form starts from the stored one');
  assert.equal(await form.getByLabel('Labels, comma separated').inputValue(), 'stale-price');
  await form.getByLabel('Verdict').selectOption('up');
  await form.getByLabel('Score from 0 to 1').fill('0.8');
  await form.getByLabel('Labels, comma separated').fill('price-ok');
  await form.getByLabel('Comment').fill('Re-checked: the price was right.');
  await form.getByRole('button', { name: 'Save changes' }).click();
  await until(async () => /edited/.test(await box.locator('.annot-row').first().textContent()), { what: 'the edited annotation listed' });

  // The server holds the edit and keeps the version before in the history.
  const [stored] = await annotations(`runId=${encodeURIComponent(ids.b)}&nodeId=tool:search`);
  assert.deepEqual([stored.verdict, stored.score, stored.labels, stored.comment, stored.version],
    ['up', 0.8, ['price-ok'], 'Re-checked: the price was right.', 2]);
  const detail = await (await fetch(`${srv.base}/api/annotations/${stored.id}`)).json();
  assert.equal(detail.history.length, 1);
  assert.deepEqual([detail.history[0].action, detail.history[0].before.verdict, detail.history[0].before.labels], ['edit', 'down', ['stale-price']]);

  // The row: the new one, and its history behind a disclosure.
  const edited = box.locator('.annot-row').first();
  assert.match(await edited.locator('.annot-line').first().textContent(), /person.*▲.*score 0\.8.*price-ok/s);
  const history = edited.locator('[data-testid="annot-history"]');
  assert.match(await history.locator('summary').textContent(), /History \(1 earlier version\)/);
  await history.locator('summary').click();
  const item = history.locator('.annot-history-item');
  await item.waitFor();
  assert.match(await item.textContent(), /Edited .* by person — before:.*▼.*stale-price.*Price from last week\./s);
  await page.screenshot({ path: shot('annotations-edit-history-light.png') });

  // Cleared fields: no verdict, no score.
  await edited.getByRole('button', { name: 'Edit this annotation' }).click();
  await edited.locator('.annot-edit-form').getByLabel('Verdict').selectOption('');
  await edited.locator('.annot-edit-form').getByLabel('Score from 0 to 1').fill('');
  await edited.locator('.annot-edit-form').getByRole('button', { name: 'Save changes' }).click();
  await until(async () => (await annotations(`runId=${encodeURIComponent(ids.b)}&nodeId=tool:search`))[0].version === 3, { what: 'the second edit stored' });
  const [cleared] = await annotations(`runId=${encodeURIComponent(ids.b)}&nodeId=tool:search`);
  assert.deepEqual([cleared.verdict, cleared.score, cleared.labels], [undefined, undefined, ['price-ok']]);
  await until(async () => /History \(2 earlier versions\)/.test(await box.locator('.annot-row').first().textContent()), { what: 'two versions in the history' });
  assert.deepEqual(errors, []);
});

test('an edited annotation and its history read well in the dark theme', async () => {
  const { page, errors } = await openPage(browser, srv.url(`#/run/${encodeURIComponent(ids.b)}/node/${encodeURIComponent('tool:search')}`), { colorScheme: 'dark' });
  const history = page.locator('#inspector [data-testid="annot-history"]').first();
  await history.waitFor();
  await history.locator('summary').click();
  await until(async () => (await history.locator('.annot-history-item').count()) === 2, { what: 'the two earlier versions' });
  await page.locator('#inspector .annot-row').first().getByRole('button', { name: 'Edit this annotation' }).click();
  await page.locator('#inspector .annot-edit-form').waitFor();
  await page.screenshot({ path: shot('annotations-edit-history-dark.png') });
  assert.deepEqual(errors, []);
});
