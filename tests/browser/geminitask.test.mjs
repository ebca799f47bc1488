// Issue 31 items 1 and 3 at the page: Gemini CLI sessions found under a Gemini `tmp` folder
// (`--gemini-sessions`) are listed on the Tasks page with their project folder as workspace,
// and a Gemini task graph opens: the page's headline is the server's (never recounted), the
// failed read_file call is a failed node, and the subagent file is included as a child session
// (and listed under its parent).
// Fixtures of our own: crates/taskgraph/tests/fixtures/gemini/tmp.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { startServer, launchBrowser, openPage, until, ROOT } from './lib/harness.mjs';

const GEMINI_TMP = path.join(ROOT, 'crates/taskgraph/tests/fixtures/gemini/tmp');
const SHOTS = path.join(ROOT, 'test-artifacts', 'readers');
const MAIN = '11111111-1111-4111-8111-111111111111';

let srv;
let browser;

before(async () => {
  srv = await startServer({ extraArgs: ['--no-default-homes', '--gemini-sessions', GEMINI_TMP] });
  browser = await launchBrowser();
  mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
});

for (const colorScheme of ['light', 'dark']) {
  test(`a Gemini CLI session on the Tasks page and its task graph (${colorScheme})`, async () => {
    const { page, errors } = await openPage(browser, srv.url(), { colorScheme });
    await page.locator('#nav-tasks').click();
    const row = page.locator(`.tg-row[data-id="${MAIN}"]`);
    await row.waitFor();
    // Seven sessions: the two subagent files are listed under their parents, the two A2A
    // files (same sessionId) are two tasks.
    assert.equal(await page.locator('.tg-row').count(), 7);
    const cells = await row.locator('td').allTextContents();
    assert.ok(cells.includes('gemini'), `agent cell: ${cells}`);
    assert.ok(cells.some((c) => c.startsWith('3f1c9b5e')), `project folder as workspace: ${cells}`);
    await page.screenshot({ path: path.join(SHOTS, `gemini-tasks-${colorScheme}.png`) });

    await row.locator('.tg-link').first().click();
    await until(async () => (await page.evaluate(() => window.mindgateTasks.overview()?.session_id)) === MAIN,
      { what: 'the Gemini overview' });
    const served = await page.evaluate(async (id) => (await (await fetch(`/task-graph/api/task?id=${id}`)).json()), MAIN);
    const headline = await page.evaluate(() => window.mindgateTasks.overview().headline);
    assert.deepEqual(headline, served.summary.headline, 'the page shows the graph summary\'s headline');
    assert.deepEqual([headline.turns, headline.tool_calls, headline.errors], [2, 5, 1]);
    const failed = served.nodes.find((n) => n.id === 'tool-read_file_2');
    assert.equal(failed.status, 'FAILED');
    const tokens = served.summary.tokens;
    assert.deepEqual([tokens.input, tokens.output, tokens.cache_read], [1105, 230, 4300]);
    const stats = await page.locator('.tg-stats').textContent();
    assert.match(stats, /1 subagent session included/);
    assert.match(stats, /2 turns, \d+ steps, 5 tool calls, 1 error/);
    await page.screenshot({ path: path.join(SHOTS, `gemini-task-${colorScheme}.png`) });
    assert.deepEqual(errors, []);
    await page.close();
  });
}
