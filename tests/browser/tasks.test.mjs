// End-to-end: the Tasks page of the real `mindgate serve --sessions <copy of the taskgraph
// fixtures>` in Debian's chromium: the list, a task graph drawn with its critical path,
// failed and retried marks, node → trajectory events, and a live session that grows.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, mkdirSync, appendFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServer, launchBrowser, openPage, until, artifact, ROOT } from './lib/harness.mjs';

/**
 * Events in the big live session of the latency test. The default keeps CI's debug-build run
 * short; the README figure is `MINDGATE_TG_LIVE_EVENTS=100000` with the release binary.
 */
const BIG_EVENTS = Number(process.env.MINDGATE_TG_LIVE_EVENTS || 20000);

const FIXTURES = path.join(ROOT, 'crates/taskgraph/tests/fixtures');
const WS = '--Users-kevin-Desktop-Nothing-Napkin--';

let srv;
let browser;
let page;
let errors;
let sessions;

before(async () => {
  sessions = mkdtempSync(path.join(tmpdir(), 'mindgate-sessions-'));
  for (const agent of ['dsh', 'pi', 'claude', 'codex']) {
    cpSync(path.join(FIXTURES, agent), path.join(sessions, agent), { recursive: true });
  }
  srv = await startServer({ extraArgs: ['--no-default-homes', '--sessions', sessions] });
  browser = await launchBrowser();
  ({ page, errors } = await openPage(browser, srv.url()));
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
  if (sessions) rmSync(sessions, { recursive: true, force: true });
});

const boxes = () => page.evaluate(() => window.mindgateTasks.boxes());
const graph = () => page.evaluate(() => window.mindgateTasks.graph());

async function openTask(title, id) {
  await page.locator('#nav-tasks').click();
  await page.locator('.tg-row').first().waitFor();
  await page.locator('.tg-link', { hasText: title }).click();
  // A task opens on its overview; the whole graph is one click away.
  await page.locator('.tov-turn').first().waitFor();
  await page.locator('.tg-tab[data-view="graph"]').click();
  await until(async () => (await graph())?.session_id === id && (await boxes()).length > 0, { what: `the graph of ${id}` });
}

test('the Tasks link opens the list of every discovered session', async () => {
  await page.locator('#nav-tasks').click();
  assert.equal(new URL(page.url()).hash, '#/tasks');
  // One row per discovered session, subagent sessions included (listed under their parent).
  const listed = await page.evaluate(async () => (await (await fetch('/task-graph/api/tasks')).json()).tasks.length);
  assert.ok(listed >= 10, `sessions listed by the server: ${listed}`);
  await until(async () => (await page.locator('.tg-row').count()) === listed, { what: `${listed} task rows` });
  assert.equal(await page.locator('main.layout').isHidden(), true, 'the run viewer is hidden');
  const row = page.locator('.tg-row[data-id="dsh-main"]');
  assert.match(await row.textContent(), /NIS-11688/);
  assert.match(await row.textContent(), /dsh/);
  assert.match(await row.textContent(), /SUCCESS/);
  // Copies are fresh, so the open session is listed live.
  assert.match(await page.locator('.tg-row[data-id="dsh-live"]').textContent(), /live/);
  // The filter narrows the list.
  await page.locator('.tg-filter').fill('codex');
  await until(async () => (await page.locator('.tg-row').count()) === 2, { what: 'two codex rows' });
  await page.locator('.tg-filter').fill('');
});

test('a task graph is drawn with its critical path, retries, and events per node', async () => {
  await openTask('NIS-11688', 'dsh-main');
  assert.match(new URL(page.url()).hash, /^#\/task\/dsh-main\/graph$/);
  const g = await graph();
  const b = await boxes();
  // Every node is drawn (small graph: nothing folded), phases as lanes left to right.
  assert.deepEqual(b.map((x) => x.id).sort(), g.nodes.map((n) => n.id).sort());
  const phases = b.filter((x) => x.type === 'phase').sort((p, q) => p.x - q.x);
  assert.ok(phases.length >= 2 && phases[0].x < phases[1].x, 'phase lanes side by side');
  for (const x of b) assert.ok(x.w > 20 && x.h > 10, `${x.id} has a size`);
  // The critical path is highlighted exactly on its nodes.
  const crit = b.filter((x) => x.critical).map((x) => x.id).sort();
  assert.deepEqual(crit, [...g.critical_path.node_ids].sort());
  assert.deepEqual(b.filter((x) => x.hot).map((x) => x.id).sort(), [...g.critical_path.hot_node_ids].sort());
  assert.ok(g.critical_path.hot_node_ids.length > 0);
  // Retried nodes are marked.
  const retried = g.summary.retried_steps.map((r) => r.id);
  assert.ok(retried.length > 0);
  for (const id of retried) assert.ok(b.find((x) => x.id === id).retried, `${id} marked retried`);
  // Clicking a tool shows its trajectory events.
  const tool = b.find((x) => x.type === 'tool' || x.type === 'test');
  await page.mouse.click(tool.x + tool.w / 2, tool.y + tool.h / 2);
  await page.locator('.tg-node-name', { hasText: tool.name }).waitFor();
  const node = g.nodes.find((n) => n.id === tool.id);
  await until(async () => (await page.locator('.tg-event').count()) >= node.event_ids.length, { what: 'the node events' });
  const types = await page.locator('.tg-event-type').allTextContents();
  assert.ok(types.includes('tool/call'), types.join(','));
  assert.ok(types.includes('tool/result'), types.join(','));
  const seqs = await page.locator('.tg-event').evaluateAll((els) => els.map((e) => Number(e.dataset.seq)));
  assert.deepEqual([...new Set(seqs)], node.event_ids);
  // The heading counts the rows it lists (a record of some formats holds several events).
  await until(async () => (await page.locator('.insp-sub', { hasText: 'Trajectory events' }).textContent()) === `Trajectory events (${seqs.length})`, { what: 'the heading counting the rows' });
  assert.ok((await boxes()).find((x) => x.id === tool.id).selected);
  // Folding a phase hides its steps behind a +N count.
  const phase = (await boxes()).find((x) => x.type === 'phase');
  await page.mouse.click(phase.x + 6, phase.y + phase.h / 2);
  await until(async () => (await boxes()).find((x) => x.id === phase.id).folded > 0, { what: 'the phase to fold' });
  assert.ok((await boxes()).length < b.length);
  await page.screenshot({ path: artifact('tasks-graph.png') });
});

test('a failed task marks its failed nodes', async () => {
  await openTask('Build the release', 'dsh-fail');
  const g = await graph();
  assert.equal(g.status, 'FAILED');
  const failed = (await boxes()).filter((x) => x.failed).map((x) => x.id).sort();
  assert.deepEqual(failed, g.nodes.filter((n) => n.status === 'FAILED').map((n) => n.id).sort());
  assert.ok(failed.length > 0);
});

test('a Claude Code record holding several events: the trajectory heading counts the rows it lists, not the records', async () => {
  await openTask('Fix flaky upload test', 'c-main');
  const g = await graph();
  const node = g.nodes.find((n) => n.id === 'tool-t_grep');
  assert.ok(node, 'the Grep call of the fixture');
  const box = (await boxes()).find((x) => x.id === node.id);
  await page.mouse.click(box.x + box.w / 2, box.y + box.h / 2);
  await page.locator('.tg-node-name', { hasText: node.name }).waitFor();
  await until(async () => (await page.locator('[data-testid="trajectory-head"]').textContent()) !== 'Trajectory events', { what: 'the trajectory read' });
  const rows = await page.locator('.tg-event').count();
  // Its records (the assistant turn calling Grep, the user turn with its result) each hold
  // several events: the heading counts what it lists.
  assert.ok(rows > node.event_ids.length, `${rows} rows from ${node.event_ids.length} records`);
  assert.equal(await page.locator('[data-testid="trajectory-head"]').textContent(), `Trajectory events (${rows})`);
});

test('Induce procedure on a succeeded task stores a quarantined procedure and opens it in #/memory', async () => {
  await openTask('NIS-11688', 'dsh-main');
  await page.getByLabel('Memory user for the procedure').fill('kevin');
  await page.getByRole('button', { name: 'Induce procedure' }).click();
  await until(() => /^#\/memory\/procedural\//.test(new URL(page.url()).hash), { what: 'the induced procedure opened' });
  await page.locator('.mem-steps li').first().waitFor();
  const id = decodeURIComponent(new URL(page.url()).hash.split('/').pop());
  const rec = (await (await fetch(`${srv.base}/api/memory/records/${encodeURIComponent(id)}`)).json()).record;
  assert.equal(rec.provenance, 'induction');
  assert.equal(rec.status, 'quarantined');
  assert.equal(rec.userId, 'kevin');
  assert.deepEqual(await page.locator('.mem-steps li').allTextContents(), rec.steps);
  // The inspector follows the link to the procedure's user.
  await until(async () => (await page.getByLabel('Memory user', { exact: true }).inputValue()) === 'kevin', { what: 'the memory user switched' });
  // A failed task offers no induction.
  await openTask('Build the release', 'dsh-fail');
  assert.equal(await page.getByRole('button', { name: 'Induce procedure' }).count(), 0);
});

test('a live session updates in place when its file grows', async () => {
  await openTask('Watch the logs', 'dsh-live');
  await until(() => page.locator('.tg-live-state').textContent().then((t) => t.includes('following')), { what: 'the live feed to open' });
  const before = (await boxes()).find((x) => x.id === 'tool-l_tail');
  assert.equal(before.status, 'RUNNING');
  const file = path.join(sessions, 'dsh', WS, 's-live', 'session.v3.jsonl');
  appendFileSync(file, [
    '{"type":"tool/result","seq":7,"time":1787600009000,"data":{"message":{"source":{"callId":"l_tail"},"content":[{"type":"tool-result","toolCallId":"l_tail","content":"log line 1","isError":false}]}}}',
    '{"type":"step/end","seq":8,"time":1787600009100,"data":{"turn":1,"step":1}}',
    '{"type":"step/start","seq":9,"time":1787600009200,"data":{"turn":1,"step":2}}',
    '',
  ].join('\n'));
  await until(async () => (await boxes()).find((x) => x.id === 'tool-l_tail')?.status === 'SUCCESS', { what: 'the tool to finish live' });
  await until(async () => (await boxes()).some((x) => x.id === 'step-1-2'), { what: 'the new step to appear' });
  assert.ok(Number(await page.locator('#tasks-page').getAttribute('data-updates')) >= 1);
  // The view stayed on the same task; the new result's events are there on click.
  const tool = (await boxes()).find((x) => x.id === 'tool-l_tail');
  await page.mouse.click(tool.x + tool.w / 2, tool.y + tool.h / 2);
  await until(async () => (await page.locator('.tg-event[data-seq="7"]').count()) === 1, { what: 'the appended event in the panel' });
  appendFileSync(file, '{"type":"turn/end","seq":10,"time":1787600010000,"data":{"turn":1,"reason":{"kind":"completed"}}}\n');
  await until(async () => (await graph()).status === 'SUCCESS', { what: 'the task to finish live' });
  await page.screenshot({ path: artifact('tasks-live.png') });
  // Back to the run viewer.
  await page.locator('.tg-head a', { hasText: 'Tasks' }).click();
  await page.locator('.tg-head a', { hasText: 'Runs' }).click();
  await until(() => page.locator('main.layout').isVisible(), { what: 'the run viewer' });
  assert.deepEqual(errors, [], errors.join('\n'));
});

/**
 * A deterministic DSH session of `n` events (turns of 40 steps, one to three tool calls per
 * step, every 17th result failed) that ends inside an open step at `end` (ms), so it reads as
 * live.
 * Returns { text, seq, time, turn, step } with the next free seq and the open step.
 */
function bigSession(n, end = Date.now()) {
  // Laid out once from 0, then again so that the last event is `end` (recent, so live).
  const start = end - (end === 0 ? 0 : bigSession(n, 0).time);
  const lines = [JSON.stringify({ type: 'session', version: 1, id: 'big', createdAt: start, cwd: '/work/big', delegationDepth: 0 })];
  let seq = 1;
  let t = start;
  let call = 0;
  const ev = (type, data) => { lines.push(JSON.stringify({ type, seq: seq++, time: t, data })); };
  ev('session/title', { title: 'Big live session' });
  for (let turn = 1; ; turn++) {
    ev('user/message', { text: `request ${turn}` });
    ev('turn/start', { turn });
    for (let step = 1; step <= 40; step++) {
      t += 400;
      ev('step/start', { turn, step });
      ev('request/header', { header: { config: { provider: 'deepseek', model: 'deepseek-chat' } } });
      if (lines.length >= n) return { text: `${lines.join('\n')}\n`, seq, time: t, turn, step };
      ev('assistant/chunk', { chunk: { type: 'usage', usage: { inputTokens: 1000 + step, outputTokens: 50, cacheReadTokens: 10 } } });
      ev('assistant/chunk', { chunk: { type: 'finish', reason: { kind: 'tool-calls' } } });
      const ids = [];
      for (let k = 0; k <= (turn + step) % 3; k++) {
        const id = `c${++call}`;
        ids.push(id);
        ev('tool/call', { turn, step, callId: id, name: ['bash', 'read', 'edit', 'grep'][call % 4], arguments: JSON.stringify({ path: `src/m${call % 50}.rs` }) });
      }
      ev('step/end', { turn, step });
      for (const id of ids) {
        t += 30;
        ev('tool/result', { message: { source: { callId: id }, content: [{ type: 'tool-result', toolCallId: id, content: `out ${id}`, isError: call % 17 === 0 }] } });
      }
    }
    ev('turn/end', { turn, reason: { kind: 'completed' } });
  }
}

test(`a ${BIG_EVENTS.toLocaleString('en')}-event live session: appended events reach the page as deltas (latency reported)`, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mindgate-big-'));
  const sessionDir = path.join(dir, 'dsh', '--work-big--', 'big');
  mkdirSync(sessionDir, { recursive: true });
  const file = path.join(sessionDir, 'session.v1.jsonl');
  const big = bigSession(BIG_EVENTS);
  writeFileSync(file, big.text);
  const srv2 = await startServer({ extraArgs: ['--no-default-homes', '--sessions', dir] });
  const { page: p2, errors: errors2 } = await openPage(browser, srv2.url());
  try {
    const live = () => p2.evaluate(() => window.mindgateTasks.live());
    const has = (id) => p2.evaluate((nid) => !!window.mindgateTasks.graph()?.nodes.some((n) => n.id === nid), id);
    const t0 = Date.now();
    await p2.locator('#nav-tasks').click();
    await p2.locator('.tg-link', { hasText: 'Big live session' }).click({ timeout: 60000 });
    await p2.locator('.tg-tab[data-view="graph"]').click({ timeout: 60000 });
    await until(() => p2.locator('.tg-live-state').textContent().then((t) => t.includes('following')), { what: 'the live feed to open', timeout: 60000 });
    // The whole graph's own feed (not the overview's, which opened first) has sent its graph.
    await until(async () => { const l = await live(); return l.feed === 'graph' && l.version !== null; }, { what: 'the first graph over the feed', timeout: 60000 });
    const openMs = Date.now() - t0;
    const nodes = await p2.evaluate(() => window.mindgateTasks.graph().nodes.length);
    const samples = [];
    let seq = big.seq;
    let time = big.time;
    for (let k = 1; k <= 7; k++) {
      const before = await live();
      const id = `lat${k}`;
      const line = JSON.stringify({ type: 'tool/call', seq: seq++, time: (time += 100), data: { turn: big.turn, step: big.step, callId: id, name: 'bash', arguments: '{"command":"ls"}' } });
      const sent = Date.now();
      appendFileSync(file, `${line}\n`);
      await until(() => has(`tool-${id}`), { what: `node tool-${id} on the page`, timeout: 30000, interval: 20 });
      const after = await live();
      assert.ok(after.updates > before.updates, 'the page applied an update');
      assert.equal(after.lastEvent, 'delta', 'growth arrives as a delta, not the whole graph');
      samples.push({ ms: after.appliedAt - sent, deltaBytes: after.deltaBytes, applyMs: after.applyMs });
    }
    // The page's graph equals the server's after the deltas.
    const same = await p2.evaluate(async () => {
      const server = await (await fetch('/task-graph/api/task?id=big')).text();
      return JSON.stringify(window.mindgateTasks.graph()) === JSON.stringify(JSON.parse(server));
    });
    assert.ok(same, 'the page graph built from deltas equals /task-graph/api/task');
    const ms = samples.map((x) => x.ms).sort((a, b) => a - b);
    const report = {
      events: BIG_EVENTS, nodes, openMs,
      appendToPageMs: { median: ms[Math.floor(ms.length / 2)], min: ms[0], max: ms[ms.length - 1], all: samples.map((x) => x.ms) },
      deltaBytes: samples.map((x) => x.deltaBytes), pageApplyMs: samples.map((x) => x.applyMs),
      binary: process.env.MINDGATE_BIN || 'target/debug/mindgate',
    };
    console.log(`task-graph live latency: ${JSON.stringify(report)}`);
    writeFileSync(artifact('tasks-live-latency.json'), JSON.stringify(report, null, 2));
    // Keyboard: the focused canvas walks to a node and opens it.
    await p2.locator('.tg-canvas').focus();
    await p2.keyboard.press('j');
    await p2.keyboard.press('Enter');
    await p2.locator('.tg-node-name').waitFor();
    const focused = (await p2.evaluate(() => window.mindgateTasks.boxes())).find((b) => b.focused);
    assert.ok(focused && focused.selected, 'the focused node is selected by Enter');
    assert.deepEqual(errors2, [], errors2.join('\n'));
  } finally {
    await p2.close();
    await srv2.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
