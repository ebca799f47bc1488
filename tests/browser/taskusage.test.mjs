// Issue 31 item 4 at the page: the Tasks page's Usage view shows the server's usage report
// (GET /task-graph/api/usage, the report `mindgate usage` prints) for every grouping — the
// cards and every row's figures are the server's, never recounted — with cache writes and
// reads apart and the models without a price named.
// Fixtures of our own: crates/taskgraph/tests/fixtures (all six agents).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { startServer, launchBrowser, openPage, until, fixtureHomeArgs, ROOT } from './lib/harness.mjs';

const SHOTS = path.join(ROOT, 'test-artifacts', 'usage');

let srv;
let browser;

before(async () => {
  srv = await startServer({ extraArgs: fixtureHomeArgs() });
  browser = await launchBrowser();
  mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
});

const num = (n) => n.toLocaleString('en-US');

/** The report the page asked for, fetched again with the same query. */
async function served(page, by) {
  return page.evaluate(async (by) => {
    const tz = Intl.DateTimeFormat().resolvedOptions().timeZone;
    return (await fetch(`/task-graph/api/usage?by=${by}&tz=${encodeURIComponent(tz)}`)).json();
  }, by);
}

for (const colorScheme of ['light', 'dark']) {
  test(`the Usage view shows the server's report for every grouping (${colorScheme})`, async () => {
    const { page, errors } = await openPage(browser, srv.url(), { colorScheme });
    await page.locator('#nav-tasks').click();
    await page.locator('.tg-row').first().waitFor();
    await page.locator('.tg-list-tabs a[data-page="usage"]').click();
    await until(async () => (await page.locator('.tu-row').count()) > 0, { what: 'usage rows' });
    assert.equal(await page.evaluate(() => location.hash), '#/tasks/usage');
    for (const by of ['day', 'agent', 'model', 'session', 'month', 'project', 'week']) {
      await page.locator(`.tu-group[data-by="${by}"]`).click();
      await until(async () => (await page.locator('.tu-page').getAttribute('data-by')) === by
        && (await page.locator('.tu-group[aria-pressed="true"]').getAttribute('data-by')) === by, { what: `grouped by ${by}` });
      const report = await served(page, by);
      const rows = page.locator('.tu-row');
      assert.equal(await rows.count(), report.rows.length, `rows by ${by}`);
      for (let i = 0; i < report.rows.length; i++) {
        const r = report.rows[i];
        assert.equal(await rows.nth(i).getAttribute('data-key'), r.key, `row ${i} by ${by}`);
        const cells = await rows.nth(i).locator('td').allTextContents();
        assert.ok(cells.includes(num(r.tokens.total)), `${r.key}: total ${r.tokens.total} in ${cells}`);
        assert.ok(cells.includes(num(r.tokens.cache_read)), `${r.key}: cache read in ${cells}`);
        assert.ok(cells.includes(num(r.tokens.input - r.tokens.cache_write)), `${r.key}: fresh input in ${cells}`);
      }
      const foot = await page.locator('.tu-total').locator('td,th').allTextContents();
      assert.ok(foot.includes(num(report.total.tokens.total)), `total row ${foot}`);
      assert.ok(foot.includes(num(report.total.tokens.cache_write)), `total cache writes ${foot}`);
      if (by === 'agent') {
        assert.deepEqual(report.rows.map((r) => r.key).sort(), ['claude_code', 'codex', 'dsh', 'gemini', 'opencode', 'pi']);
        assert.ok(report.total.tokens.cache_write > 0, 'the fixtures have cache writes');
        await page.screenshot({ path: path.join(SHOTS, `usage-by-agent-${colorScheme}.png`) });
      }
      if (by === 'day') await page.screenshot({ path: path.join(SHOTS, `usage-by-day-${colorScheme}.png`) });
    }
    // The cards are the report's total; unpriced models are named.
    const report = await served(page, 'week');
    const cards = await page.locator('.tu-card-value').allTextContents();
    assert.ok(cards.includes(num(report.total.tokens.total)), `cards ${cards}`);
    assert.ok(report.unpriced_models.length > 0);
    const note = await page.locator('.tu-unpriced').textContent();
    for (const m of report.unpriced_models) assert.ok(note.includes(m), `${m} named in ${note}`);
    // A session row links to its task.
    await page.locator('.tu-group[data-by="session"]').click();
    await until(async () => (await page.locator('.tu-row a.tg-link').count()) > 0, { what: 'session links' });
    const first = page.locator('.tu-row a.tg-link').first();
    const key = await page.locator('.tu-row').first().getAttribute('data-key');
    await first.click();
    await until(async () => (await page.evaluate(() => window.mindgateTasks.overview()?.session_id)) === key,
      { what: 'the session opened from its usage row' });
    assert.deepEqual(errors, []);
    await page.close();
  });
}
