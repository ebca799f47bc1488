// Issue 26 items 2, 4, 5 at the page: the Tasks list shows the recorded cwd (the agents'
// folder encoding only on hover), and a task's header shows the server's headline counts
// (`summary.headline` of the HTTP body, never recounted) and the time spent waiting for the
// person apart from the critical path's agent work. Fixture: a Claude Code session whose Write
// the person rejected after 1m 55s at the permission prompt.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServer, launchBrowser, openPage, until, ROOT } from './lib/harness.mjs';

const FIXTURE = path.join(ROOT, 'crates/taskgraph/tests/fixtures/fidelity/waiting/claude-rejected-write.jsonl');
const SHOTS = path.join(ROOT, 'test-artifacts', 'taskgraph');

let srv;
let browser;
let sessions;

before(async () => {
  sessions = mkdtempSync(path.join(tmpdir(), 'mindgate-sessions-'));
  cpSync(FIXTURE, path.join(sessions, 'claude-rejected-write.jsonl'));
  srv = await startServer({ extraArgs: ['--no-default-homes', '--sessions', sessions] });
  browser = await launchBrowser();
  mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
  if (sessions) rmSync(sessions, { recursive: true, force: true });
});

for (const colorScheme of ['light', 'dark']) {
  test(`task header reads the server's headline and waiting (${colorScheme})`, async () => {
    const { page, errors } = await openPage(browser, srv.url(), { colorScheme });
    await page.locator('#nav-tasks').click();
    const row = page.locator('.tg-row[data-id="cl-wait"]');
    await row.waitFor();
    const cell = row.locator('td').nth(2);
    assert.equal(await cell.textContent(), '/work/wait');
    assert.equal(await cell.getAttribute('title'), '--work-wait--');
    await page.screenshot({ path: path.join(SHOTS, `tasks-list-${colorScheme}.png`) });
    await page.locator('.tg-link').first().click();
    await until(async () => (await page.evaluate(() => window.mindgateTasks.overview()?.session_id)) === 'cl-wait', { what: 'the overview' });
    const headline = await page.evaluate(() => window.mindgateTasks.overview().headline);
    const served = await page.evaluate(async () => (await (await fetch('/task-graph/api/task?id=cl-wait')).json()).summary.headline);
    assert.deepEqual(headline, served, 'the overview carries the graph summary\'s headline');
    assert.deepEqual(
      [headline.turns, headline.steps, headline.tool_calls, headline.errors, headline.waiting_ms],
      [2, 4, 3, 1, 140000]);
    const text = await page.locator('.tg-stats').textContent();
    assert.match(text, /2 turns, 4 steps, 3 tool calls, 1 error/);
    assert.match(text, /critical path 25 s of agent work in 3m 0s/);
    assert.match(text, /waited for you 2m 20s/);
    await page.screenshot({ path: path.join(SHOTS, `task-page-${colorScheme}.png`) });
    assert.deepEqual(errors, []);
    await page.close();
  });
}
