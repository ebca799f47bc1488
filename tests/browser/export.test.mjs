// End-to-end: `mindgate export --html` of a run recorded by the real GraphMind client
// (graphmind-ai 0.5.1), opened from file:// in chromium with no server running: the graph
// boxes, a node's inspector with its input and output, the timeline, and not one request
// leaving the page. With --hide-inputs the input is nowhere in the file.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startServer, launchBrowser, openPage, runAgent, until, artifact } from './lib/harness.mjs';

const BIN = process.env.MINDGATE_BIN || path.resolve('../../target/debug/mindgate');
const SECRET = 'SECRET-QUERY-7f3a';

let out;
let runId;
let browser;

function exportRun(db, file, extra = []) {
  const r = spawnSync(BIN, ['export', runId, '--html', file, '--db', db, ...extra], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
}

before(async () => {
  out = mkdtempSync(path.join(tmpdir(), 'mindgate-export-'));
  const srv = await startServer();
  try {
    const agent = runAgent(srv.port, { AGENT_RUN_NAME: 'shared-trip', AGENT_QUERY: SECRET }, 'diff_agent.py');
    const printed = await agent.waitFor('RUN-END ok');
    await agent.exited;
    runId = /RUN-ID (\S+)/.exec(printed)[1];
    await until(async () => {
      const res = await fetch(`${srv.base}/api/runs/${encodeURIComponent(runId)}`, { headers: { Authorization: `Bearer ${srv.token}` } });
      return res.ok && (await res.json()).status === 'ok';
    }, { what: 'the run finished' });
    // Exported while the server runs (the database is read, not locked)…
    exportRun(path.join(srv.home, 'mindgate.db'), path.join(out, 'run.html'));
    exportRun(path.join(srv.home, 'mindgate.db'), path.join(out, 'hidden.html'), ['--hide-inputs']);
  } finally {
    await srv.stop(); // …and opened with no server at all.
  }
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  if (out) rmSync(out, { recursive: true, force: true });
});

test('the exported page draws the run from file:// with no server and makes no request', async () => {
  const file = pathToFileURL(path.join(out, 'run.html')).href;
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  const requests = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('request', (r) => { if (!r.url().startsWith('data:') && r.url().split('#')[0] !== file) requests.push(r.url()); });
  page.on('websocket', (ws) => requests.push(ws.url()));
  await page.goto(`${file}#/run/${encodeURIComponent(runId)}/node/${encodeURIComponent('tool:search')}`);
  await until(() => page.evaluate(() => window.mindgate && window.mindgate.boxes().length >= 3), { what: 'the graph boxes' });
  const names = (await page.evaluate(() => window.mindgate.boxes())).map((b) => b.name).sort();
  assert.deepEqual(names, ['answer', 'search', 'shared-trip']);
  // The inspector of the linked node: its input and output, from the embedded node detail.
  await page.locator('.insp-name', { hasText: 'search' }).waitFor();
  await page.locator('#inspector .jt-str', { hasText: SECRET }).first().waitFor();
  await page.locator('#inspector', { hasText: 'hits' }).waitFor();
  // Another node by clicking its box: the llm, with its cost from the embedded report.
  const llm = (await page.evaluate(() => window.mindgate.boxes())).find((b) => b.name === 'answer');
  await page.mouse.click(llm.x + llm.w / 2, llm.y + llm.h / 2);
  await page.locator('.insp-name', { hasText: 'answer' }).waitFor();
  await until(() => page.locator('#inspector .insp-cost').textContent().then((t) => /Node cost\$0\.000/.test(t)), { what: 'the node cost' });
  // Its answer reads as a conversation (the transcript the export carries).
  await page.locator('#inspector .insp-convo .tx-text', { hasText: 'book flight 1' }).first().waitFor();
  // The run list and the banner say what this is.
  await page.locator('.run-button', { hasText: 'shared-trip' }).waitFor();
  assert.match(await page.locator('#banner').textContent(), /Exported run/);
  assert.equal(await page.locator('#conn').textContent(), 'Exported file');
  assert.equal(await page.locator('#timeline canvas').count(), 1);
  await page.screenshot({ path: artifact('export-file.png') });
  assert.deepEqual(requests, [], 'no request left the page');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the exported page is read-only: no mode, pause-on-error, breakpoint, replay or held-gate controls', async () => {
  const file = pathToFileURL(path.join(out, 'run.html')).href;
  for (const colorScheme of ['light', 'dark']) {
    const { page, context, errors } = await openPage(browser, `${file}#/run/${encodeURIComponent(runId)}/node/${encodeURIComponent('tool:search')}`, { colorScheme });
    await until(() => page.evaluate(() => window.mindgate && window.mindgate.boxes().length >= 3), { what: 'the graph boxes' });
    await page.locator('.insp-name', { hasText: 'search' }).waitFor();
    await page.locator('#inspector .jt-str', { hasText: SECRET }).first().waitFor();
    // The run bar keeps its graph tools and run facts, nothing that changes the run.
    assert.equal(await page.locator('#runbar button[aria-label="Fit graph to view"]').count(), 1);
    for (const selector of ['#runbar .seg-group', '#pause-on-error', '#runbar select', '#runbar .chips', '#pauses', '.insp-actions']) {
      assert.equal(await page.locator(selector).count(), 0, `${selector} is on the exported page`);
    }
    const controls = page.getByRole('button', { name: /^(Run|Step)$|^(Break|Replay|Continue|Retry|Inject|Abort)\b/ });
    assert.equal(await controls.count(), 0, `buttons: ${await controls.allTextContents()}`);
    await page.screenshot({ path: artifact(`export-readonly-${colorScheme}.png`) });
    // The node menu (Shift+F10 on the selected node) offers no breakpoint.
    await page.locator('#graph canvas').focus();
    await page.keyboard.press('Shift+F10');
    const items = await page.locator('[role=menuitem]').allTextContents();
    assert.ok(items.includes('Inspect'), `menu: ${items}`);
    assert.deepEqual(items.filter((t) => /Break/.test(t)), []);
    await page.keyboard.press('Escape');
    // The keyboard help lists no key that acts on gates, breakpoints or memory.
    const help = await page.locator('#help').textContent();
    assert.doesNotMatch(help, /Continue, Retry|breakpoints|validate/i);
    assert.deepEqual(errors, []);
    await context.close();
  }
});

test('--hide-inputs leaves every input out of the file', () => {
  const plain = readFileSync(path.join(out, 'run.html'), 'utf8');
  const hidden = readFileSync(path.join(out, 'hidden.html'), 'utf8');
  assert.ok(plain.includes(SECRET), 'the plain export carries the input');
  assert.ok(!hidden.includes(SECRET), 'the hidden export does not');
  assert.ok(!hidden.includes(encodeURIComponent(SECRET)) && !hidden.includes(SECRET.replace(/-/g, '%2D')));
  assert.ok(hidden.includes('book flight 1'), 'outputs stay');
  assert.match(hidden, /"redaction":\{"inputs":true/);
});
