// Issue 31 item 5 at the page: the Tasks page searches inside every session (user messages,
// model replies, tool arguments and output) through GET /task-graph/api/search; the hits are
// the server's, grouped by session, with the match marked; a hit opens its turn with the
// node selected.
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

for (const colorScheme of ['light', 'dark']) {
  test(`searching inside sessions finds tool output and opens the node (${colorScheme})`, async () => {
    const { page, errors } = await openPage(browser, srv.url(), { colorScheme });
    await page.locator('#nav-tasks').click();
    await page.locator('.tg-row').first().waitFor();
    const box = page.locator('.tg-textsearch');
    await box.fill('upload');
    await box.press('Enter');
    await until(async () => (await page.locator('.ts-hit').count()) > 0, { what: 'search hits' });
    assert.equal(await page.evaluate(() => location.hash), '#/tasks/search?q=upload');
    const served = await page.evaluate(async () => (await (await fetch('/task-graph/api/search?q=upload&limit=200')).json()));
    assert.equal(await page.locator('.ts-hit').count(), served.hits.length, 'every hit the server gave');
    const kinds = new Set(served.hits.map((h) => h.kind));
    for (const k of ['user', 'tool_args', 'tool_output']) assert.ok(kinds.has(k), `a ${k} hit: ${[...kinds]}`);
    const marks = await page.locator('.ts-hit mark').allTextContents();
    assert.ok(marks.length === served.hits.length && marks.every((m) => m.toLowerCase() === 'upload'), `marks ${marks}`);
    await page.screenshot({ path: path.join(SHOTS, `search-${colorScheme}.png`) });

    // A tool output hit opens its turn with the node selected.
    const hit = served.hits.find((h) => h.kind === 'tool_output' && h.session_id === 'c-main' && h.turn);
    assert.ok(hit, 'a c-main tool output hit');
    await page.locator(`.ts-session[data-id="c-main"] .ts-hit[data-node="${hit.node_id}"] a`).first().click();
    await until(async () => (await page.evaluate(() => location.hash)).startsWith(`#/task/c-main/turn/${hit.turn}`), { what: 'the turn opened' });
    await until(async () => (await page.locator('.tg-panel').textContent()).includes(hit.node_id)
      || (await page.locator('.tg-node-name').count()) > 0, { what: 'the node selected in the panel' });
    const panel = await page.locator('.tg-panel').textContent();
    const name = (await page.evaluate(async (id) => (await (await fetch(`/task-graph/api/task?id=c-main`)).json()).nodes.find((n) => n.id === id)?.name, hit.node_id));
    assert.ok(panel.includes(name), `the panel shows ${name}: ${panel.slice(0, 200)}`);

    // A search for text that is nowhere says so.
    await page.evaluate(() => { location.hash = '#/tasks/search?q=zz-nowhere-zz'; });
    await until(async () => /No session text contains/.test(await page.locator('.ts-status').textContent()), { what: 'no hits' });
    assert.deepEqual(errors, []);
    await page.close();
  });
}
