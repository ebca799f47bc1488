// A TypeScript run live in the viewer: the TypeScript SDK's example agent
// (sdks/typescript/examples/agent.mjs: the `ai` package's mock model, two tools, one fails
// once) is drawn as it runs, holds at the failing tool's error gate on the open page, and a
// Retry pressed here re-runs the tool and the run finishes ok. Screenshots (1440×900, light
// and dark) of the held and the finished run.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ROOT, startServer, launchBrowser, openPage, until, artifact } from './lib/harness.mjs';

const SDK = path.join(ROOT, 'sdks/typescript');
const missing = !existsSync(path.join(SDK, 'node_modules/ai')) || !existsSync(path.join(SDK, 'dist/index.js'))
  ? 'skipped: the TypeScript SDK is not installed (cd sdks/typescript && npm ci)'
  : false;
if (missing) console.log(missing);

let srv;
let browser;
let page;
let errors;

before(async () => {
  if (missing) return;
  srv = await startServer();
  browser = await launchBrowser();
  ({ page, errors } = await openPage(browser, srv.url()));
  await until(() => page.locator('#conn').textContent().then((t) => t.startsWith('Live')), { what: 'the feed to connect' });
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
});

function runExample() {
  const child = spawn(process.execPath, [path.join(SDK, 'examples/agent.mjs')], {
    cwd: SDK,
    env: { ...process.env, GRAPHMIND_URL: `ws://127.0.0.1:${srv.port}/ingest`, MINDGATE_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => out };
}

const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
const painted = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

async function shoot(name) {
  for (const scheme of ['light', 'dark']) {
    if ((await theme()) !== scheme) await page.locator('#theme-toggle').click();
    await painted();
    await page.screenshot({ path: artifact(`typescript-${name}-${scheme}.png`) });
  }
  await page.locator('#theme-toggle').click();
  assert.equal(await theme(), 'light');
}

const boxes = () => page.evaluate(() => (window.mindgate ? window.mindgate.boxes() : []));

test('a TypeScript run is drawn live, held at its error gate, retried from the page and finished', { skip: missing }, async () => {
  const agent = runExample();
  try {
    const pause = page.getByRole('group', { name: /Held: tool:book_table error/ });
    await pause.waitFor({ timeout: 20000 });
    await page.locator('.run-button', { hasText: 'plan-trip' }).click();
    // Live: the run is drawn while it is still running, from the TypeScript SDK's events.
    await until(async () => {
      const b = await boxes();
      return ['agent:plan-trip', 'llm:step', 'tool:get_weather', 'tool:book_table'].every((id) => b.some((x) => x.nodeId === id));
    }, { what: 'the TypeScript run drawn' });
    const run = (await (await fetch(`${srv.base}/api/runs?limit=5`)).json()).runs.find((r) => r.name === 'plan-trip');
    assert.equal(run.status, 'running');
    assert.equal(run.app, 'trip-planner-ts');
    assert.equal(run.sdk.name, 'mindgate');
    assert.equal(agent.child.exitCode, null, 'the agent waits at the gate');
    await page.evaluate(() => window.mindgate.store.selectNode('tool:book_table', { reveal: true }));
    await page.locator('#inspector .held', { hasText: 'held now' }).waitFor();
    await shoot('held');

    await pause.getByRole('button', { name: 'Retry', exact: true }).click();
    await page.locator('.result-log .result.ok', { hasText: 'Retried tool:book_table' }).waitFor();
    assert.equal(await agent.exited, 0, agent.output());
    assert.match(agent.output(), /done: .*booked.*\(3 steps, 2 booking attempts\)/);
    await until(async () => {
      const b = await boxes();
      return b.length === 4 && b.every((x) => x.status === 'ok');
    }, { what: 'every box finished ok' });
    await until(async () => (await (await fetch(`${srv.base}/api/runs/${run.id}`)).json()).status === 'ok', { what: 'the run ok' });
    await page.evaluate(() => window.mindgate.store.selectNode('llm:step', { reveal: true }));
    await painted();
    await shoot('finished');
    // A live run's reads wait for the writer's commit (crates/server/tests/announced_runs.rs):
    // the 404 once tolerated here is gone, so any error fails.
    assert.deepEqual(errors, []);
  } finally {
    if (agent.child.exitCode === null) agent.child.kill('SIGKILL');
  }
});
