// End-to-end: facts in conflict (issue 28, item 3) in the memory inspector of a real
// `mindgate serve`, the store filled through the HTTP API with the control token. The
// quarantine tab shows each conflicting pair side by side (the active fact beside the new
// one: subject, predicate, object, valid times, provenance) with three one-click decisions;
// a decision goes to the server (the facts' states, the ledger row) and the list updates;
// the inspector shows the same pair. A contradicting fact that is not a person's word (the
// agent's Initech) waits in quarantine too, so the tab's count is its cards; so does an
// agent's new version of a person's fact, on a card worded for it. Screenshots light and
// dark at 1440x900.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchBrowser, openPage, until, artifact } from './lib/harness.mjs';

const USER = 'bo';
let srv;
let browser;
let page;
let errors;
const ids = {};

/** `/api/memory/<path>` with the control token; resolves to the JSON body, throws on errors. */
async function memApi(path, { method = 'GET', body } = {}) {
  const headers = { 'content-type': 'application/json', Authorization: `Bearer ${srv.token}` };
  const res = await fetch(`${srv.base}/api/memory${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
  return data;
}

const fact = (text, predicate, object, more = {}) => memApi('/facts', {
  method: 'POST', body: { userId: USER, text, subject: 'Bo', predicate, object, ...more },
});

before(async () => {
  srv = await startServer();
  ids.oslo = (await fact('Bo lives in Oslo', 'lives_in', 'Oslo', { provenance: 'user', validFrom: '2023-01-01T00:00:00Z' })).id;
  const bergen = await fact('Bo lives in Bergen', 'lives_in', 'Bergen', { provenance: 'extraction', validFrom: '2025-01-01T00:00:00Z', agentId: 'planner' });
  ids.bergen = bergen.id;
  assert.deepEqual(bergen.conflictsWith, [ids.oslo]);
  ids.window = (await fact('Bo prefers window seats', 'seat_preference', 'window', { provenance: 'user' })).id;
  ids.aisle = (await fact('Bo prefers aisle seats', 'seat preference', 'aisle', { provenance: 'extraction' })).id;
  ids.acme = (await fact('Bo works at Acme', 'works_at', 'Acme', { provenance: 'user', validFrom: '2020-05-01T00:00:00Z' })).id;
  const initech = await fact('Bo works at Initech', 'works_at', 'Initech', { provenance: 'agent', agentId: 'planner' });
  ids.initech = initech.id;
  assert.equal(initech.status, 'quarantined');
  assert.equal(initech.quarantineReason, `contradicts active fact ${ids.acme}`);
  browser = await launchBrowser();
  ({ page, errors } = await openPage(browser, srv.url('#/memory/quarantine')));
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
});

const go = (hash) => page.evaluate((h) => { location.hash = h; }, hash);
const card = (p, id) => p.locator(`.mem-conflicts .mem-conflict[data-id="${id}"]`);
const openIds = async () => (await memApi(`/conflicts?userId=${USER}`)).records.map((r) => r.id);

test('the quarantine tab shows each conflicting pair side by side with its three decisions', async () => {
  await until(async () => (await page.locator('.mem-conflicts .mem-conflict').count()) === 3, { what: 'three conflicts drawn' });
  assert.deepEqual(await page.locator('.mem-conflicts .mem-conflict').evaluateAll((els) => els.map((e) => e.dataset.id)), await openIds());
  await until(async () => (await page.locator('#mem-tab-quarantine').getAttribute('data-count')) === '3', { what: "the quarantine tab's count to match its three cards" });
  const pair = card(page, ids.bergen);
  const old = pair.locator(`.mem-conflict-side.old[data-id="${ids.oslo}"]`);
  const fresh = pair.locator(`.mem-conflict-side.new[data-id="${ids.bergen}"]`);
  await until(async () => (await old.count()) === 1, { what: 'the active fact beside the new one' });
  assert.equal(await old.locator('.mem-conflict-text').textContent(), 'Bo lives in Oslo');
  assert.equal(await fresh.locator('.mem-conflict-text').textContent(), 'Bo lives in Bergen');
  for (const [side, object, valid, prov] of [[old, 'Oslo', 'from 2023-01-01', 'user'], [fresh, 'Bergen', 'from 2025-01-01', 'extraction · by planner']]) {
    assert.equal(await side.locator('.mc-subject').textContent(), 'Bo');
    assert.equal(await side.locator('.mc-predicate').textContent(), 'lives_in');
    assert.equal(await side.locator('.mc-object').textContent(), object);
    assert.equal(await side.locator('.mc-valid').textContent(), valid);
    assert.equal(await side.locator('.mc-prov').textContent(), prov);
  }
  assert.equal(await old.locator('[data-status]').getAttribute('data-status'), 'active');
  assert.equal(await fresh.locator('[data-status]').getAttribute('data-status'), 'quarantined');
  assert.deepEqual(await pair.locator('.mem-conflict-actions button').allTextContents(), ['Supersede the old one', 'Keep both', 'Reject the new one']);
  // The quarantined row below names its conflict too.
  await page.locator(`.mem-list-host:not([hidden]) .mem-row[data-id="${ids.bergen}"] .mem-conflict-badge`).waitFor();
  await page.screenshot({ path: artifact('memory-conflicts-queue.png') });
});

test('the inspector shows the pair of an open conflict (light and dark)', async () => {
  await go(`#/memory/semantic/${ids.initech}`);
  const pair = page.locator(`.mem-detail .mem-conflict[data-id="${ids.initech}"]`);
  await pair.locator(`.mem-conflict-side.old[data-id="${ids.acme}"]`).waitFor();
  assert.equal(await pair.locator('.mem-conflict-side.old .mc-valid').textContent(), 'from 2020-05-01');
  assert.equal(await pair.locator('.mem-conflict-actions button').count(), 3);
  await page.screenshot({ path: artifact('memory-conflicts-inspector.png') });
  const dark = await openPage(browser, srv.url('#/memory/quarantine'), { colorScheme: 'dark' });
  await until(async () => (await dark.page.locator('.mem-conflicts .mem-conflict .mem-conflict-side.old').count()) === 3, { what: 'the dark page drawn' });
  await dark.page.screenshot({ path: artifact('memory-conflicts-queue-dark.png') });
  await dark.page.evaluate((h) => { location.hash = h; }, `#/memory/semantic/${ids.initech}`);
  await dark.page.locator(`.mem-detail .mem-conflict-side.old[data-id="${ids.acme}"]`).waitFor();
  await dark.page.screenshot({ path: artifact('memory-conflicts-inspector-dark.png') });
  assert.deepEqual(dark.errors, []);
  await dark.context.close();
});

test('"Supersede the old one": one click, the new fact replaces the old, the queue updates', async () => {
  await go('#/memory/quarantine');
  const pair = card(page, ids.bergen);
  await pair.getByRole('button', { name: 'Supersede the old one' }).click();
  await until(async () => (await card(page, ids.bergen).count()) === 0, { what: 'the pair to leave the list' });
  await until(async () => (await page.locator(`.mem-list-host:not([hidden]) .mem-row[data-id="${ids.bergen}"]`).count()) === 0, { what: 'the fact to leave the quarantine queue' });
  const bergen = (await memApi(`/records/${ids.bergen}`)).record;
  const oslo = (await memApi(`/records/${ids.oslo}`)).record;
  assert.equal(bergen.state, 'active');
  assert.equal(bergen.supersedes, ids.oslo);
  assert.equal(bergen.conflictDecision.decision, 'supersede_old');
  assert.equal(oslo.state, 'superseded');
  const row = (await memApi(`/records/${ids.bergen}/history`)).events.find((e) => e.action === 'conflict.decide' && e.subjectId === ids.bergen);
  assert.equal(row.actor, 'user');
  assert.deepEqual(row.detail, { decision: 'supersede_old', fact: ids.bergen, with: [ids.oslo] });
  assert.ok(!(await openIds()).includes(ids.bergen));
});

test('"Keep both": both stay active and the conflict is marked resolved', async () => {
  await card(page, ids.aisle).getByRole('button', { name: 'Keep both' }).click();
  await until(async () => (await card(page, ids.aisle).count()) === 0, { what: 'the pair to leave the list' });
  const aisle = (await memApi(`/records/${ids.aisle}`)).record;
  assert.equal(aisle.state, 'active');
  assert.equal((await memApi(`/records/${ids.window}`)).record.state, 'active');
  assert.equal(aisle.conflictDecision.decision, 'keep_both');
  assert.ok((await memApi(`/records/${ids.window}/history`)).events.some((e) => e.action === 'conflict.decide' && e.detail.decision === 'keep_both'));
});

test('"Reject the new one" from the inspector tombstones it and shows the decision', async () => {
  await go(`#/memory/semantic/${ids.initech}`);
  const pair = page.locator(`.mem-detail .mem-conflict[data-id="${ids.initech}"]`);
  await pair.getByRole('button', { name: 'Reject the new one' }).click();
  await page.locator('.mem-detail .mem-conflict-decided[data-decision="reject"]').waitFor();
  assert.equal(await page.locator('.mem-detail-head [data-status]').getAttribute('data-status'), 'tombstoned');
  assert.equal((await memApi(`/records/${ids.acme}`)).record.state, 'active');
  await page.locator('.mem-ledger tr[data-action="conflict.decide"]').waitFor();
  await page.screenshot({ path: artifact('memory-conflicts-decided.png') });
  await go('#/memory/quarantine');
  await until(async () => (await page.locator('.mem-conflicts').isHidden()) && (await openIds()).length === 0, { what: 'no conflict left' });
});

test("an agent's new version of a person's fact waits as a card worded for it; superseding applies it", async () => {
  const tea = (await fact('Bo likes tea', 'likes', 'tea', { provenance: 'user' })).id;
  const coffee = await memApi(`/records/${tea}/supersede`, {
    method: 'POST',
    body: { reason: 'changed his mind', text: 'Bo likes coffee', subject: 'Bo', predicate: 'likes', object: 'coffee', provenance: 'agent', agentId: 'planner' },
  });
  assert.equal(coffee.status, 'quarantined');
  assert.deepEqual(coffee.conflictsWith, [tea]);
  assert.equal(coffee.quarantineReason, `would supersede a person's fact ${tea}`);
  assert.equal((await memApi(`/records/${tea}`)).record.state, 'active');
  await go(`#/memory/semantic/${tea}`);
  await go('#/memory/quarantine');
  const pair = card(page, coffee.id);
  await pair.locator(`.mem-conflict-side.old[data-id="${tea}"]`).waitFor();
  const head = await pair.locator('.mem-conflict-head').textContent();
  assert.match(head, /an agent’s new version of a person’s fact/);
  assert.doesNotMatch(head, /single-valued/);
  assert.equal(await pair.locator('.mem-conflict-side.new .mc-prov').textContent(), 'agent · by planner');
  await page.screenshot({ path: artifact('memory-conflicts-held-supersession.png') });
  const dark = await openPage(browser, srv.url('#/memory/quarantine'), { colorScheme: 'dark' });
  await card(dark.page, coffee.id).locator(`.mem-conflict-side.old[data-id="${tea}"]`).waitFor();
  await dark.page.screenshot({ path: artifact('memory-conflicts-held-supersession-dark.png') });
  assert.deepEqual(dark.errors, []);
  await dark.context.close();
  await pair.getByRole('button', { name: 'Supersede the old one' }).click();
  // The last card: the list is redrawn empty (no decided card left behind) and hidden.
  await until(async () => (await card(page, coffee.id).count()) === 0, { what: 'the held version to leave the list' });
  await until(async () => (await page.locator('.mem-conflicts').isHidden()) && (await page.locator('.mem-conflicts > *').count()) === 0, { what: 'the emptied conflict list' });
  const applied = (await memApi(`/records/${coffee.id}`)).record;
  assert.equal(applied.state, 'active');
  assert.equal(applied.supersedes, tea);
  assert.equal((await memApi(`/records/${tea}`)).record.state, 'superseded');
});

test('a derived new version of an active fact is held as a card worded for it; superseding applies it', async () => {
  const juice = (await fact('Bo likes juice', 'likes', 'juice', { provenance: 'agent' })).id;
  const water = await memApi(`/records/${juice}/supersede`, {
    method: 'POST',
    body: { reason: 'extracted', text: 'Bo likes water', subject: 'Bo', predicate: 'likes', object: 'water', provenance: 'extraction' },
  });
  assert.equal(water.status, 'quarantined');
  assert.deepEqual(water.conflictsWith, [juice]);
  assert.equal(water.quarantineReason, `derived provenance: extraction; would supersede fact ${juice} once validated`);
  assert.equal((await memApi(`/records/${juice}`)).record.state, 'active');
  await go(`#/memory/semantic/${juice}`);
  await go('#/memory/quarantine');
  const pair = card(page, water.id);
  await pair.locator(`.mem-conflict-side.old[data-id="${juice}"]`).waitFor();
  const head = await pair.locator('.mem-conflict-head').textContent();
  assert.match(head, /a quarantined new version \(held until a person validates it\)/);
  assert.doesNotMatch(head, /person’s fact|single-valued/);
  await page.screenshot({ path: artifact('memory-conflicts-held-until-validated.png') });
  const dark = await openPage(browser, srv.url('#/memory/quarantine'), { colorScheme: 'dark' });
  await card(dark.page, water.id).locator(`.mem-conflict-side.old[data-id="${juice}"]`).waitFor();
  await dark.page.screenshot({ path: artifact('memory-conflicts-held-until-validated-dark.png') });
  assert.deepEqual(dark.errors, []);
  await dark.context.close();
  await pair.getByRole('button', { name: 'Supersede the old one' }).click();
  await until(async () => (await card(page, water.id).count()) === 0, { what: 'the held version to leave the list' });
  const applied = (await memApi(`/records/${water.id}`)).record;
  assert.equal(applied.state, 'active');
  assert.equal(applied.supersedes, juice);
  assert.equal((await memApi(`/records/${juice}`)).record.state, 'superseded');
});

test('the emptied queue: its last card decided, no pair is left and the empty state shows (light and dark)', async () => {
  const emptied = async (p) => {
    await until(async () => (await p.locator('.mem-conflicts .mem-conflict').count()) === 0
      && (await p.locator('.mem-list-info').textContent()) === 'Nothing waits for review.'
      && (await p.locator('#mem-tab-quarantine').getAttribute('data-count')) === '0', { what: 'the emptied quarantine queue' });
    assert.equal(await p.locator('.mem-conflicts').isHidden(), true);
    assert.equal(await p.locator('.mem-list-host:not([hidden]) .mem-row').count(), 0);
  };
  await go('#/memory/quarantine');
  await emptied(page);
  assert.deepEqual(await openIds(), []);
  await page.screenshot({ path: artifact('memory-conflicts-emptied.png') });
  const dark = await openPage(browser, srv.url('#/memory/quarantine'), { colorScheme: 'dark' });
  await emptied(dark.page);
  await dark.page.screenshot({ path: artifact('memory-conflicts-emptied-dark.png') });
  assert.deepEqual(dark.errors, []);
  await dark.context.close();
});

test('no console errors, every visible button named', async () => {
  const unnamed = await page.evaluate(() => [...document.querySelectorAll('button')]
    .filter((b) => b.offsetParent !== null && !(b.getAttribute('aria-label') || b.textContent.trim()))
    .map((b) => b.outerHTML.slice(0, 80)));
  assert.deepEqual(unnamed, []);
  assert.deepEqual(errors, []);
});
