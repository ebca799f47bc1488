// The pause panel's input editor (a gate the app marked editable: the GraphMind
// head's `exec.paused.editable`), validated before anything is sent; who
// released a gate in the inspector; "Replay to here" on a finished run.
// A raw protocol app (agents/editable_agent.py) holds one tool call.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchBrowser, openPage, runAgent, until, artifact } from './lib/harness.mjs';

let srv;
let browser;
let page;
let errors;

before(async () => {
  srv = await startServer();
  browser = await launchBrowser();
  ({ page, errors } = await openPage(browser, srv.url()));
  await until(() => page.locator('#conn').textContent().then((t) => t.startsWith('Live')), { what: 'the feed to connect' });
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
});

const resumes = (out) => out.split('\n').filter((l) => l.startsWith('RESUME ')).map((l) => JSON.parse(l.slice(7)));

test('Edit input validates the JSON, then continues the held call with the edited input', async () => {
  const agent = runAgent(srv.port, {}, 'editable_agent.py');
  await agent.waitFor('HELD');
  const pause = page.getByRole('group', { name: /Held: tool:search before/ });
  await pause.waitFor({ timeout: 15000 });
  await pause.getByRole('button', { name: 'Edit input' }).click();
  const editor = page.getByRole('textbox', { name: 'Edited input (JSON)' });
  // Preset with the call's current input (from node detail).
  await until(() => editor.inputValue().then((v) => v.includes('"osloo"')), { what: 'the current input in the editor' });

  await editor.fill('{"q": "oslo",');
  await page.getByRole('button', { name: 'Continue with this input' }).click();
  await page.locator('#inject-error', { hasText: 'Invalid JSON' }).waitFor();
  await editor.fill('["oslo"]');
  await page.getByRole('button', { name: 'Continue with this input' }).click();
  await page.locator('#inject-error', { hasText: 'must stay an object' }).waitFor();
  await page.screenshot({ path: artifact('pause-edit-refused.png') });
  assert.equal(resumes(agent.output()).length, 0, 'nothing was sent for an invalid edit');

  await editor.fill(JSON.stringify({ q: 'oslo', limit: 3 }));
  await page.getByRole('button', { name: 'Continue with this input' }).click();
  await agent.waitFor('DONE');
  const sent = resumes(agent.output());
  assert.equal(sent.length, 1);
  assert.equal(sent[0].action, 'continue');
  assert.deepEqual(sent[0].input, { q: 'oslo', limit: 3 });
  await page.locator('.result-log .result.ok', { hasText: 'Continued tool:search' }).waitFor();
  assert.equal(await agent.exited, 0);
});

test('the inspector says who released the gate and arms a replay of the finished run', async () => {
  const row = page.locator('.run-button', { hasText: 'edit-1' });
  await row.first().click();
  await until(() => page.evaluate(() => window.mindgate.boxes().some((b) => b.name === 'search')), { what: 'the search box' });
  const b = (await page.evaluate(() => window.mindgate.boxes())).find((x) => x.name === 'search');
  await page.mouse.click(b.x + b.w / 2, b.y + b.h / 2);
  await page.locator('#inspector dd', { hasText: 'before (breakpoint) → continue by viewer' }).waitFor();
  await until(() => page.locator('.run-button', { hasText: 'edit-1' }).locator('.pill').textContent().then((t) => t === 'ok'), { what: 'the run finished' });
  await page.getByRole('button', { name: 'Replay to here' }).click();
  await page.locator('.result-log .result.ok', { hasText: 'Replay armed: the next run of edit-app replays 0 step(s), then holds at search' }).waitFor();
  await page.screenshot({ path: artifact('replay-armed.png') });
  assert.deepEqual(errors, [], 'no console errors');
});
