// The newcomer's first hour (issue 24), walked end to end on a fresh home exactly as a person
// meets it: `mindgate serve` with its defaults (no --hold-unwatched: the page open with the
// token is what keeps the demo's error gate), the empty states, "Run the demo" pressed on the
// page, the held gate opening its run by itself, Continue pressed, a second demo aborted, the two
// runs compared, and the run exported as a read-only share page. Screenshots of every step in
// light and dark at 1440×900 go to test-artifacts/newcomer/.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startServer, launchBrowser, openPage, until, ROOT } from './lib/harness.mjs';

const SHOTS = path.join(ROOT, 'test-artifacts', 'newcomer');
const BIN = process.env.MINDGATE_BIN || path.join(ROOT, 'target/debug/mindgate');
const shot = (name) => { mkdirSync(SHOTS, { recursive: true }); return path.join(SHOTS, name); };

let srv;
let browser;
let noSessions;
let out;

async function api(p) {
  const res = await fetch(`${srv.base}${p}`, { headers: { Authorization: `Bearer ${srv.token}` } });
  assert.equal(res.status, 200, `${p}: ${res.status}`);
  return res.json();
}

async function both(page, name) {
  for (const scheme of ['light', 'dark']) {
    await page.evaluate((s) => {
      document.documentElement.dataset.theme = s;
      window.dispatchEvent(new Event('mindgate:theme'));
      return new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    }, scheme);
    await page.screenshot({ path: shot(`${name}-${scheme}.png`) });
  }
  await page.evaluate(() => {
    document.documentElement.dataset.theme = 'light';
    window.dispatchEvent(new Event('mindgate:theme'));
  });
}

/**
 * Waits for the page's held gate and answers it by button. With no run open the page opens the
 * gate's run by itself; with one open (`openIt`) the person picks it in the run list.
 */
async function holdThenPress(page, button, step, { openIt = false } = {}) {
  const item = page.locator('.pause-item').first();
  await item.waitFor({ timeout: 30000 });
  const { pauses } = await api('/api/pauses');
  assert.equal(pauses.length, 1, JSON.stringify(pauses));
  const runId = pauses[0].runId;
  if (openIt) await page.evaluate((id) => { location.hash = `#/run/${encodeURIComponent(id)}`; }, runId);
  await until(() => page.evaluate((id) => window.mindgate.store.runId === id, runId), { what: `${step}: the held gate's run open` });
  await both(page, `${step}-held`);
  await item.getByRole('button', { name: button, exact: true }).click();
  return runId;
}

before(async () => {
  noSessions = mkdtempSync(path.join(tmpdir(), 'mindgate-newcomer-sessions-'));
  for (const v of ['DSH_HOME', 'PI_CODING_AGENT_DIR', 'CLAUDE_CONFIG_DIR', 'CODEX_HOME']) process.env[v] = noSessions;
  out = mkdtempSync(path.join(tmpdir(), 'mindgate-newcomer-'));
  // The defaults a newcomer gets: no --hold-unwatched.
  srv = await startServer({ holdUnwatched: false });
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
  for (const dir of [noSessions, out]) if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a newcomer starts, runs the demo from the page, releases its gate, compares two runs and exports one', async () => {
  const { page, context, errors } = await openPage(browser, srv.url());

  // 1. The empty states say what fills them.
  await page.locator('[data-testid="runs-empty"]').waitFor();
  await both(page, '1-start');

  // 2. "Run the demo" on the page; the demo's error gate holds (the page watches) and opens its run.
  await page.locator('[data-testid="graph-empty-first"] [data-testid="run-demo"]').click();
  const first = await holdThenPress(page, 'Continue', '2-demo');
  await until(async () => (await api(`/api/runs/${encodeURIComponent(first)}`)).status !== 'running', { what: 'the continued demo run finished', timeout: 30000 });
  await page.locator('.result-log .result.ok', { hasText: 'Continued' }).first().waitFor();
  // The run bar settles on the run's final figures (its held time lands with the app's
  // last `exec.resumed`, which may follow `run.finished`).
  await until(async () => {
    const run = await api(`/api/runs/${encodeURIComponent(first)}`);
    const shown = await page.locator('.run-times [data-figure="work"]').first().getAttribute('data-value');
    return run.heldMs > 0 && shown === String(run.workMs);
  }, { what: 'the run bar showing the finished run\'s work time' });
  const liveTimes = await page.locator('.run-times').first().textContent();
  assert.match(liveTimes, /held \d/, 'the released run shows its held time');
  await both(page, '3-released');

  // 3. A second demo, aborted by the person: recorded as the viewer's abort.
  await until(async () => {
    const res = await fetch(`${srv.base}/api/demo`, { method: 'POST', headers: { Authorization: `Bearer ${srv.token}` } });
    return res.status === 202;
  }, { what: 'a second demo accepted once the first ended', timeout: 30000 });
  const second = await holdThenPress(page, 'Abort', '4-second', { openIt: true });
  await until(async () => (await api(`/api/runs/${encodeURIComponent(second)}`)).status === 'aborted', { what: 'the second demo aborted', timeout: 30000 });
  await page.locator('.result-log .result.ok', { hasText: 'Aborted the run at tool:book_hotel' }).waitFor();
  const detail = await api(`/api/runs/${encodeURIComponent(second)}/nodes/tool:book_hotel`);
  const record = detail.instances.flatMap((i) => i.pauses || []).find((p) => p.action === 'abort');
  assert.ok(record, JSON.stringify(detail.instances));
  assert.deepEqual(record.principal, { kind: 'viewer' }, 'the abort is the person\'s');

  // 4. Compare the two runs.
  await page.evaluate(([a, b]) => { location.hash = `#/diff/${encodeURIComponent(a)}/${encodeURIComponent(b)}`; }, [first, second]);
  await page.locator('[data-testid="diff-table"]').waitFor();
  await both(page, '5-compare');

  // 5. Export the first run by a unique id prefix; the share page is read-only and needs no server.
  const file = path.join(out, 'demo.html');
  const prefix = first.slice(0, 10);
  const r = spawnSync(BIN, ['export', prefix, '--html', file, '--db', path.join(srv.home, 'mindgate.db')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.ok(readFileSync(file, 'utf8').includes(first), 'the export is of the run the prefix names');
  const shared = await openPage(browser, pathToFileURL(file).href);
  await shared.page.locator('canvas').first().waitFor();
  for (const selector of ['#runbar .seg-group', '#pause-on-error', '#pauses']) {
    assert.equal(await shared.page.locator(selector).count(), 0, `${selector} is on the share page`);
  }
  // The share page shows the run's held and work time as the live page did, holds amber.
  await until(async () => (await shared.page.locator('.run-times').first().textContent()) === liveTimes, { what: `the share page's run times (${liveTimes})` });
  await both(shared.page, '6-export');
  assert.deepEqual(shared.errors, []);
  await shared.context.close();

  assert.deepEqual(errors, []);
  await context.close();
});
