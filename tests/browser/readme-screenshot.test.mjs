// The README's screenshot (docs/viewer.png), made from a real run: the real `mindgate serve`,
// the real `mindgate demo` agent (Rust SDK) held at its error gate while this page watches,
// the viewer at 1440×900. CI runs it so a broken script fails; `MINDGATE_README_SCREENSHOT=1`
// also writes docs/viewer.png (the committed image). Light and dark copies go to
// test-artifacts/readme/.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, startServer, launchBrowser, openPage, until } from './lib/harness.mjs';

const BIN = process.env.MINDGATE_BIN || path.join(ROOT, 'target/debug/mindgate');
const OUT = path.join(ROOT, 'test-artifacts', 'readme');
const README_IMAGE = path.join(ROOT, 'docs', 'viewer.png');
const VIEWPORT = { width: 1440, height: 900 };

let srv;
let browser;
let demo;

before(async () => {
  srv = await startServer();
  browser = await launchBrowser();
  mkdirSync(OUT, { recursive: true });
});

after(async () => {
  if (demo && demo.exitCode === null) demo.kill('SIGKILL');
  if (browser) await browser.close();
  if (srv) await srv.stop();
});

async function api(pathAndQuery, init = {}) {
  const res = await fetch(`${srv.base}${pathAndQuery}`, {
    ...init,
    headers: { Authorization: `Bearer ${srv.token}`, 'Content-Type': 'application/json', ...(init.headers || {}) },
  });
  return { status: res.status, body: await res.json() };
}

/** Width and height from a PNG's IHDR chunk. */
function pngSize(file) {
  const png = readFileSync(file);
  assert.equal(png.toString('latin1', 1, 4), 'PNG', `${file} is not a PNG`);
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** Opens the held run at its failing node and waits until the view is complete. */
async function showHeldRun(colorScheme, runId) {
  const { page, context, errors } = await openPage(browser, srv.url(`#/run/${runId}/node/tool:book_hotel`), { ...VIEWPORT, colorScheme });
  await until(() => page.locator('#conn').textContent().then((t) => t.startsWith('Live')), { what: 'the feed to connect' });
  await page.locator('.pause-item').first().waitFor({ timeout: 15000 });
  await page.locator('.insp-name', { hasText: 'book_hotel' }).waitFor({ timeout: 15000 });
  await until(() => page.evaluate(() => window.mindgate.boxes().length >= 6), { what: 'the run graph drawn' });
  return { page, context, errors };
}

test('the README screenshot: a demo run held at its error gate, light and dark', async () => {
  // The page watches before the agent starts, as a person would.
  const watcher = await openPage(browser, srv.url(), VIEWPORT);
  demo = spawn(BIN, ['demo', '--url', `ws://127.0.0.1:${srv.port}/ingest`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let demoOut = '';
  demo.stdout.on('data', (d) => { demoOut += d; });
  demo.stderr.on('data', (d) => { demoOut += d; });

  const pause = await until(async () => (await api('/api/pauses')).body.pauses?.[0], { what: 'the demo held at its error gate', timeout: 30000 });
  assert.equal(pause.nodeId, 'tool:book_hotel');
  assert.equal(pause.point, 'error');

  const shots = {};
  for (const scheme of ['light', 'dark']) {
    const { page, context, errors } = await showHeldRun(scheme, pause.runId);
    const file = path.join(OUT, `viewer-${scheme}.png`);
    await page.screenshot({ path: file });
    assert.deepEqual(pngSize(file), VIEWPORT);
    assert.deepEqual(errors, [], `console errors in the ${scheme} page`);
    shots[scheme] = file;
    await context.close();
  }
  if (process.env.MINDGATE_README_SCREENSHOT === '1') copyFileSync(shots.light, README_IMAGE);
  assert.deepEqual(pngSize(README_IMAGE), VIEWPORT, 'docs/viewer.png is the README screenshot at 1440×900');

  // Release the gate so the agent finishes as it would for a person.
  const resumed = await api(`/api/runs/${pause.runId}/pauses/${pause.pauseId}/resume`, { method: 'POST', body: JSON.stringify({ action: 'continue' }) });
  assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
  const exited = await until(() => (demo.exitCode === null ? null : { code: demo.exitCode }), { timeout: 30000, what: 'the demo to exit' });
  assert.equal(exited.code, 0, demoOut);
  await watcher.context.close();
});
