// Issue 26 item 1, 3 and 6 at the page: a task opens on its turn overview (the server's
// /task-graph/api/task/overview, never recounted), which fits a 44-turn / 220-step session at
// 1440×900 with no label under 11 px; the critical path band keeps the agent's work apart from
// waiting for the person; a turn zooms into its graph (click, keys) and back; the timeline is
// one click away and linked both ways with the turn graph; a subagent call expands its child
// session in place; the counts agree with `mindgate taskgraph`. Fixtures of our own reproduce
// the real shapes (a long pi-like session with long replies, a Claude Code session with a
// subagent, a permission prompt the person rejected). The last test reports (never asserts)
// the page's figures on a big live session.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, mkdirSync, appendFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServer, launchBrowser, openPage, until, ROOT } from './lib/harness.mjs';

const FIXTURES = path.join(ROOT, 'crates/taskgraph/tests/fixtures');
const SHOTS = path.join(ROOT, 'test-artifacts', 'taskgraph');
const BIN = process.env.MINDGATE_BIN || path.join(ROOT, 'target/debug/mindgate');
/** Events of the big live session whose figures the last test reports. */
const BIG_EVENTS = Number(process.env.MINDGATE_TG_OVERVIEW_EVENTS || 20000);

let srv;
let browser;
let sessions;

/**
 * A DSH session shaped like the long pi session: `turns` turns of `steps` LLM steps, each
 * with one tool call (every 13th fails), the person replying `replyMs` after each turn, a
 * long first line per message. Ends `end` ms (archived unless recent).
 */
function longSession({ id, title, turns, steps, replyMs, end = Date.parse('2026-08-24T19:00:00Z'), open = false }) {
  const perTurn = steps * 4200;
  let t = end - turns * (perTurn + replyMs);
  const lines = [JSON.stringify({ type: 'session', version: 1, id, createdAt: t, cwd: `/work/${id}`, delegationDepth: 0 })];
  let seq = 1;
  let call = 0;
  const ev = (type, data) => { lines.push(JSON.stringify({ type, seq: seq++, time: t, data })); };
  ev('session/title', { title });
  for (let turn = 1; turn <= turns; turn++) {
    ev('user/message', { text: `Turn ${turn}: please look at module ${turn} and make the failing check pass, then tell me what changed and why it broke` });
    ev('turn/start', { turn });
    for (let step = 1; step <= steps; step++) {
      t += 1000;
      ev('step/start', { turn, step });
      ev('request/header', { header: { config: { provider: 'anthropic', model: 'claude-sonnet-4-5' } } });
      t += 2000;
      ev('assistant/chunk', { chunk: { type: 'usage', usage: { inputTokens: 2000 + step, outputTokens: 80, cacheReadTokens: 500 } } });
      ev('assistant/chunk', { chunk: { type: 'finish', reason: { kind: 'tool-calls' } } });
      const cid = `c${++call}`;
      ev('tool/call', { turn, step, callId: cid, name: ['bash', 'read', 'edit'][call % 3], arguments: JSON.stringify({ path: `src/m${call}.rs` }) });
      t += 1000;
      ev('tool/result', { message: { source: { callId: cid }, content: [{ type: 'tool-result', toolCallId: cid, content: `out ${cid}`, isError: call % 13 === 0 }] } });
      t += 200;
      if (open && turn === turns && step === steps) return { text: `${lines.join('\n')}\n`, seq, t, turn, step };
      ev('step/end', { turn, step });
    }
    ev('turn/end', { turn, reason: { kind: 'completed' } });
    t += replyMs;
  }
  return { text: `${lines.join('\n')}\n`, seq, t };
}

function writeDsh(root, ws, id, text) {
  const dir = path.join(root, 'dsh', ws, id);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'session.v1.jsonl');
  writeFileSync(file, text);
  return file;
}

before(async () => {
  sessions = mkdtempSync(path.join(tmpdir(), 'mindgate-overview-'));
  writeDsh(sessions, '--work-long--', 'long', longSession({ id: 'long', title: 'Long session with many turns', turns: 44, steps: 5, replyMs: 150000 }).text);
  cpSync(path.join(FIXTURES, 'claude'), path.join(sessions, 'claude'), { recursive: true });
  mkdirSync(path.join(sessions, 'wait'), { recursive: true });
  cpSync(path.join(FIXTURES, 'fidelity/waiting/claude-rejected-write.jsonl'), path.join(sessions, 'wait', 'claude-rejected-write.jsonl'));
  srv = await startServer({ extraArgs: ['--no-default-homes', '--sessions', sessions] });
  browser = await launchBrowser();
  mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
  if (sessions) rmSync(sessions, { recursive: true, force: true });
});

const overviewOf = (page) => page.evaluate(() => window.mindgateTasks.overview());

/** Screenshots `<name>-light.png` and `<name>-dark.png` of the page as it is, switching the theme with the page's own toggle (and back). */
async function shootBothThemes(page, name) {
  const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
  const first = await theme();
  for (let k = 0; k < 2; k++) {
    const now = await theme();
    // Two frames: the theme's redraw of the canvases is painted.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await page.screenshot({ path: path.join(SHOTS, `${name}-${now}.png`) });
    await page.locator('#theme-toggle').click();
    await until(async () => (await theme()) !== now, { what: 'the theme switched' });
  }
  assert.equal(await theme(), first);
}

async function openOverview(page, id) {
  await page.goto(srv.url(`#/task/${id}`));
  await until(async () => (await overviewOf(page))?.session_id === id, { what: `the overview of ${id}` });
  await page.locator('.tov-turn').first().waitFor();
}

/** Every element matching `sel`: its text, font size and box. */
function measure(page, sel) {
  return page.locator(sel).evaluateAll((els) => els.map((e) => {
    const r = e.getBoundingClientRect();
    return { text: e.textContent.trim(), font: parseFloat(getComputedStyle(e).fontSize), top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height };
  }));
}

for (const colorScheme of ['light', 'dark']) {
  test(`the overview of 44 turns fits 1440×900 with every turn labelled at 11 px or more (${colorScheme})`, async () => {
    const { page, errors } = await openPage(browser, srv.url(), { colorScheme });
    await openOverview(page, 'long');
    const ov = await overviewOf(page);
    assert.equal(ov.turns.length, 44);
    assert.equal(ov.headline.steps, 220);
    const rows = await measure(page, '.tov-turn');
    assert.equal(rows.length, 44, 'one row per turn');
    for (const r of rows) assert.ok(r.top >= 0 && r.bottom <= 900, `row "${r.text.slice(0, 30)}" on screen (${r.top}–${r.bottom})`);
    for (const sel of ['.tov-turn .tov-num', '.tov-turn .tov-msg', '.tov-turn .tov-counts', '.tov-turn .tov-cost', '.tov-tick', '.tov-path-label', '.tg-stats-line', '.tg-summary .tg-title']) {
      const cells = await measure(page, sel);
      assert.ok(cells.length > 0, sel);
      for (const c of cells) {
        assert.ok(c.font >= 11, `${sel} "${c.text.slice(0, 20)}" at ${c.font}px`);
        assert.ok(c.text.length > 0, `${sel} labelled`);
      }
    }
    // Each turn's bar and path marks are drawn in its row, on the time axis, in time order.
    const bars = await page.evaluate(() => window.mindgateTasks.turnBars());
    const band = await page.locator('[data-testid="path-band"]').boundingBox();
    assert.deepEqual(bars.map((b) => b.turn), ov.turns.map((t) => t.id), 'a bar for every turn');
    bars.forEach((b, i) => {
      const row = rows[i];
      assert.ok(b.top >= row.top && b.bottom <= row.bottom, `turn ${i + 1}'s bar inside its row`);
      assert.ok(b.left >= band.x - 0.5 && b.right <= band.x + band.width + 0.5, `turn ${i + 1}'s bar on the axis`);
      if (i) assert.ok(b.left >= bars[i - 1].right - 1, `turn ${i + 1} starts after turn ${i} ends`);
      assert.ok(b.marks.some((m) => m.kind === 'work'), `turn ${i + 1}'s path marks drawn`);
      for (const m of b.marks) assert.ok(m.left >= b.left - 1 && m.right <= b.right + 3, `turn ${i + 1}'s marks under its bar`);
    });
    // Each row names its turn and shows the person's message (whole on hover).
    const msgs = await page.locator('.tov-turn .tov-msg').evaluateAll((els) => els.map((e) => e.title));
    assert.deepEqual(msgs, ov.turns.map((t) => t.user_message));
    // The header: title with its tooltip, the stats on one line.
    assert.equal(await page.locator('.tg-summary .tg-title').getAttribute('title'), 'Long session with many turns');
    const stats = (await measure(page, '.tg-stats-line'))[0];
    assert.ok(stats.height < 20, `stats on one line (${stats.height}px)`);
    await page.screenshot({ path: path.join(SHOTS, `overview-long-${colorScheme}.png`) });
    assert.deepEqual(errors, [], errors.join('\n'));
    await page.close();
  });
}

test('the counts on the page are the CLI\'s and the turns add up to them', async () => {
  const { page, errors } = await openPage(browser, srv.url());
  await openOverview(page, 'long');
  const ov = await overviewOf(page);
  const cli = JSON.parse(execFileSync(BIN, ['taskgraph', path.join(sessions, 'dsh', '--work-long--', 'long'), '--json'], { maxBuffer: 1 << 28 }).toString());
  assert.deepEqual(ov.headline, cli.summary.headline, 'overview headline = CLI headline');
  const sum = (k) => ov.turns.reduce((s, t) => s + t.counts[k], 0);
  assert.equal(sum('steps'), cli.summary.headline.steps);
  assert.equal(sum('tool_calls'), cli.summary.headline.tool_calls);
  assert.equal(sum('errors'), cli.summary.headline.errors);
  // The rows show those figures.
  const counts = await page.locator('.tov-turn .tov-counts').allTextContents();
  ov.turns.forEach((t, i) => assert.ok(counts[i].startsWith(`${t.counts.steps} steps · ${t.counts.tool_calls} call`), counts[i]));
  const stats = await page.locator('.tg-stats-line').textContent();
  assert.match(stats, new RegExp(`44 turns, 220 steps, ${cli.summary.headline.tool_calls} tool calls, ${cli.summary.headline.errors} errors`));
  assert.deepEqual(errors, []);
  await page.close();
});

test('the critical path band keeps waiting for the person apart from the agent\'s work', async () => {
  const { page, errors } = await openPage(browser, srv.url());
  await openOverview(page, 'cl-wait');
  // The band is drawn on a canvas: the runs it drew, in page coordinates, inside the band.
  const segs = await page.evaluate(() => window.mindgateTasks.pathBand());
  const band = await page.locator('[data-testid="path-band"]').boundingBox();
  for (const s of segs) assert.ok(s.left >= band.x - 1 && s.right <= band.x + band.width + 1, `${s.kind} run inside the band`);
  const perm = segs.filter((s) => s.kind === 'permission');
  assert.deepEqual(perm.map((s) => s.node), ['tool-w1'], 'the rejected Write is a permission wait');
  assert.deepEqual(segs.filter((s) => s.kind === 'user_reply').map((s) => s.node), ['phase-2']);
  for (const w of segs.filter((s) => s.kind === 'work')) {
    for (const p of perm) assert.ok(w.right <= p.left + 1 || w.left >= p.right - 1, `work ${JSON.stringify(w)} drawn over the prompt ${JSON.stringify(p)}`);
  }
  assert.match(await page.locator('.tov-path .tov-counts').textContent(), /25 s work · 2m 20s waiting/);
  // Zoomed in, the rejected Write is failed but not hot.
  await page.locator('.tov-turn').first().click();
  await until(async () => (await page.evaluate(() => window.mindgateTasks.boxes())).some((b) => b.id === 'tool-w1'), { what: 'turn 1 drawn' });
  const w1 = (await page.evaluate(() => window.mindgateTasks.boxes())).find((b) => b.id === 'tool-w1');
  assert.equal(w1.failed, true);
  assert.equal(w1.hot, false);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a turn zooms in by click and keys, back to the overview, and the timeline links both ways', async () => {
  const { page, errors } = await openPage(browser, srv.url());
  await openOverview(page, 'long');
  // Keys: focus the first row, go down one, Enter zooms into turn 2.
  await page.locator('.tov-turn').first().focus();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await until(() => new URL(page.url()).hash.startsWith('#/task/long/turn/phase-2'), { what: 'turn 2 opened' });
  await until(async () => (await page.evaluate(() => window.mindgateTasks.boxes())).length === 1 + 1 + 5 * 2, { what: 'task, phase, 5 steps and 5 calls drawn' });
  const boxes = await page.evaluate(() => window.mindgateTasks.boxes());
  assert.ok(boxes.every((b) => b.id === 'task' || b.id === 'phase-2' || /^step-2-|^tool-/.test(b.id)), 'only turn 2');
  // Readable at zoom: a box's height at scale ≥ 0.9 of its layout height.
  assert.ok(boxes.find((b) => b.type === 'agent').h >= 27, 'steps drawn at full size');
  await page.screenshot({ path: path.join(SHOTS, 'turn-long-light.png') });
  // Show in timeline: the selected node's row is marked in the waterfall.
  const step = boxes.find((b) => b.id === 'step-2-3');
  await page.mouse.click(step.x + step.w / 2, step.y + step.h / 2);
  await page.locator('.tg-node-name', { hasText: step.name }).waitFor();
  await page.locator('[data-testid="show-in-timeline"]').click();
  await until(async () => (await page.evaluate(() => window.mindgateTasks.timelineRows())).some((r) => r.id === 'step-2-3' && r.highlighted), { what: 'the step marked in the timeline' });
  await page.screenshot({ path: path.join(SHOTS, 'timeline-long-light.png') });
  // Click a bar of turn 7 in the timeline: its turn opens with that node selected.
  await page.evaluate(() => window.mindgateTasks.page.timelineView.reveal('step-7-2'));
  const row = (await page.evaluate(() => window.mindgateTasks.timelineRows())).find((r) => r.id === 'step-7-2');
  await page.mouse.click(700, row.y + row.h / 2);
  await until(() => new URL(page.url()).hash.startsWith('#/task/long/turn/phase-7'), { what: 'turn 7 from the timeline' });
  await until(async () => (await page.evaluate(() => window.mindgateTasks.boxes())).some((b) => b.id === 'step-7-2' && b.selected), { what: 'the bar\'s node selected' });
  // Back to the overview, focus on the turn we came from.
  await page.locator('.tg-toolbar a', { hasText: 'Overview' }).click();
  await until(async () => (await page.evaluate(() => document.activeElement?.dataset?.turn)) === 'phase-7', { what: 'the turn row focused again' });
  assert.deepEqual(errors, []);
  await page.close();
});

test('a turn is loaded while the pointer rests on its row, the click uses it, and back on the overview the rows take clicks', async () => {
  const { page, errors } = await openPage(browser, srv.url());
  await openOverview(page, 'long');
  const asked = [];
  page.on('request', (r) => { if (r.url().includes('/task-graph/api/task/turn')) asked.push(new URL(r.url()).searchParams.get('turn')); });
  const row = page.locator('.tov-turn[data-turn="phase-3"]');
  await row.hover();
  await until(() => asked.includes('phase-3'), { what: 'turn 3 asked for while the pointer rests on it' });
  await row.click();
  await until(async () => (await page.evaluate(() => window.mindgateTasks.boxes())).some((b) => b.id === 'phase-3'), { what: 'turn 3 drawn' });
  assert.deepEqual(asked, ['phase-3'], 'the click used the turn loaded on hover');
  // Loaded before the view had its size, the turn is still fitted: its lane centred in the view.
  const canvas = await page.locator('.tg-canvas').boundingBox();
  const lane = await until(async () => {
    const b = (await page.evaluate(() => window.mindgateTasks.boxes())).find((x) => x.id === 'phase-3');
    return b && Math.abs((b.x - canvas.x) - (canvas.x + canvas.width - b.x - b.w)) <= 2 ? b : null;
  }, { what: 'turn 3 fitted in the view', timeout: 3000 });
  assert.ok(lane.h >= 40, 'at full size');
  // Back on the overview nothing of the turn's view is left over the rows: another row opens on a click.
  await page.locator('.tg-toolbar a', { hasText: 'Overview' }).click();
  await page.locator('.tov-turn[data-turn="phase-5"]').click({ timeout: 5000 });
  await until(async () => (await page.evaluate(() => window.mindgateTasks.boxes())).some((b) => b.id === 'phase-5'), { what: 'turn 5 drawn' });
  assert.ok(new URL(page.url()).hash.startsWith('#/task/long/turn/phase-5'));
  assert.deepEqual(errors, []);
  await page.close();
});

for (const colorScheme of ['light', 'dark']) {
  test(`a subagent call expands its child session in place (${colorScheme})`, async () => {
    const { page, errors } = await openPage(browser, srv.url(), { colorScheme });
    await openOverview(page, 'c-main');
    const ov = await overviewOf(page);
    const turn = ov.turns.find((t) => t.subagents.length);
    assert.ok(turn, 'a turn with a subagent call');
    const child = turn.subagents[0].child_session;
    assert.ok(child, 'the call is linked to its child session');
    // The child's tokens count once in the task's totals.
    assert.equal(ov.totals.tokens.total, ov.tokens.total + ov.subagents.tokens.total);
    assert.ok(ov.subagents.tokens.total > 0);
    const row = page.locator(`.tov-turn[data-turn="${turn.id}"]`);
    assert.equal(await page.locator('.tov-child').count(), 0);
    await row.locator('.tov-sub-toggle').click();
    const childRow = page.locator(`.tov-child[data-child="${child.id}"]`);
    await childRow.waitFor();
    assert.match(await childRow.textContent(), new RegExp(child.title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    assert.equal(await row.locator('.tov-sub-toggle').getAttribute('aria-expanded'), 'true');
    // The child row sits right under its turn's row (in place, not on another page).
    const [rb, cb] = [await row.boundingBox(), await childRow.boundingBox()];
    assert.ok(Math.abs(cb.y - (rb.y + rb.height)) <= 2, 'directly below its turn');
    // The rows below moved down a row: their bars with them; the hovered row's bar shows over its highlight.
    const bars = await page.evaluate(() => window.mindgateTasks.turnBars());
    for (const t of ov.turns) {
      const b = bars.find((x) => x.turn === t.id);
      const box = await page.locator(`.tov-turn[data-turn="${t.id}"]`).boundingBox();
      assert.ok(b && b.top >= box.y && b.bottom <= box.y + box.height, `turn ${t.turn}'s bar in its row`);
    }
    await row.hover();
    const bar = bars.find((x) => x.turn === turn.id);
    const pixel = async (x, y) => [...(await page.screenshot({ clip: { x: Math.floor(x), y: Math.floor(y), width: 1, height: 1 } }))].join();
    const [barY, beside] = [(bar.top + bar.bottom) / 2, bar.right + 20];
    assert.notEqual(await pixel((bar.left + bar.right) / 2, barY), await pixel(beside, barY), 'the bar is seen over the hovered row');
    await page.screenshot({ path: path.join(SHOTS, `subagent-expanded-${colorScheme}.png`) });
    await row.locator('.tov-sub-toggle').click();
    await until(async () => (await page.locator('.tov-child').count()) === 0, { what: 'folded again' });
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('a live append regroups only its turn\'s path segments and re-renders only its row, the same as a whole regroup', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mindgate-live-groups-'));
  const live = longSession({ id: 'livegrp', title: 'Live regroup session', turns: 12, steps: 6, replyMs: 20000, end: Date.now(), open: true });
  const file = writeDsh(dir, '--work-livegrp--', 'livegrp', live.text);
  const srv3 = await startServer({ extraArgs: ['--no-default-homes', '--sessions', dir] });
  const { page, errors } = await openPage(browser, srv3.url());
  try {
    await page.goto(srv3.url('#/task/livegrp'));
    await until(async () => (await overviewOf(page))?.session_id === 'livegrp', { what: 'the live overview' });
    await page.locator('.tov-turn').first().waitFor();
    await until(() => page.locator('.tg-live-state').textContent().then((t) => t.includes('following')), { what: 'the live feed' });
    const lastTurn = (await overviewOf(page)).turns.at(-1).id;
    let seq = live.seq;
    let t = live.t;
    const line = (type, data) => JSON.stringify({ type, seq: seq++, time: (t += 700), data });
    // Three appends to the open last turn: a call starts, it returns and the step ends, a new step with a call.
    const appends = [
      [line('tool/call', { turn: live.turn, step: live.step, callId: 'g1', name: 'bash', arguments: '{"command":"ls"}' })],
      [line('tool/result', { message: { source: { callId: 'g1' }, content: [{ type: 'tool-result', toolCallId: 'g1', content: 'ok', isError: false }] } }),
        line('step/end', { turn: live.turn, step: live.step })],
      [line('step/start', { turn: live.turn, step: live.step + 1 }),
        line('assistant/chunk', { chunk: { type: 'finish', reason: { kind: 'tool-calls' } } }),
        line('tool/call', { turn: live.turn, step: live.step + 1, callId: 'g2', name: 'read', arguments: '{"path":"a"}' })],
    ];
    let regroupedLast = 0;
    for (const lines of appends) {
      const before = await page.evaluate(() => {
        // Every row element is marked: a row the update leaves alone keeps its mark.
        for (const r of document.querySelectorAll('.tov-turn')) r.dataset.kept = '1';
        return { live: window.mindgateTasks.live(), groups: window.mindgateTasks.pathGroups() };
      });
      appendFileSync(file, `${lines.join('\n')}\n`);
      await until(async () => (await page.evaluate(() => window.mindgateTasks.live())).updates > before.live.updates, { what: 'the append applied', interval: 20 });
      const after = await page.evaluate(() => ({
        live: window.mindgateTasks.live(), timings: window.mindgateTasks.timings(),
        groups: window.mindgateTasks.pathGroups(), whole: window.mindgateTasks.wholePathGroups(),
        kept: [...document.querySelectorAll('.tov-turn')].map((r) => [r.dataset.turn, r.dataset.kept === '1']),
      }));
      assert.equal(after.live.lastEvent, 'overview_delta');
      // The groups kept are those a whole regroup of the spliced path gives.
      assert.deepEqual(Object.fromEntries(Object.entries(after.groups).map(([id, g]) => [id, g.segs])), after.whole, 'the groups = a whole regroup');
      // Only the grown turn was regrouped: every other turn's group is the one it had.
      for (const [id, g] of Object.entries(after.groups)) {
        if (id !== lastTurn) assert.equal(g.gen, before.groups[id]?.gen, `turn ${id}'s group untouched`);
      }
      if (after.groups[lastTurn]?.gen !== before.groups[lastTurn]?.gen) regroupedLast++;
      // Only the grown turn's row was re-rendered; the other rows are the same elements.
      assert.equal(after.timings.rowsRendered, 1);
      assert.deepEqual(after.kept.filter(([, k]) => !k).map(([id]) => id), [lastTurn], 'only the last row replaced');
    }
    assert.ok(regroupedLast >= 1, 'an append changed the last turn\'s path segments (the incremental regroup ran)');
    const ov = await overviewOf(page);
    assert.equal(ov.turns.at(-1).counts.tool_calls, 8, 'the new calls counted in their turn');
    // What the lanes and the band drew after the appends is what a whole render draws.
    await until(async () => (await page.evaluate(() => window.mindgateTasks.live())).paintedAt, { what: 'the last update painted', interval: 20 });
    const drawn = await page.evaluate(() => ({ bars: window.mindgateTasks.turnBars(), band: window.mindgateTasks.pathBand() }));
    await page.evaluate(() => window.mindgateTasks.page.overviewView.set(window.mindgateTasks.overview()));
    const whole = await page.evaluate(() => ({ bars: window.mindgateTasks.turnBars(), band: window.mindgateTasks.pathBand() }));
    assert.equal(drawn.bars.length, 12, 'every turn drawn');
    assert.deepEqual(drawn, whole, 'the bars, marks and band after the appends = a whole render');
    await shootBothThemes(page, 'overview-live-append');
    assert.deepEqual(errors, [], errors.join('\n'));
  } finally {
    await page.close();
    await srv3.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test(`a ${BIG_EVENTS.toLocaleString('en')}-event live session: overview render, zoom and a live append that re-renders one turn (figures reported)`, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mindgate-big-overview-'));
  const turns = Math.max(2, Math.round(BIG_EVENTS / 400));
  const big = longSession({ id: 'bigov', title: 'Big overview session', turns, steps: 40, replyMs: 20000, end: Date.now(), open: true });
  const file = writeDsh(dir, '--work-bigov--', 'bigov', big.text);
  const srv2 = await startServer({ extraArgs: ['--no-default-homes', '--sessions', dir] });
  const { page, errors } = await openPage(browser, srv2.url());
  try {
    const t0 = Date.now();
    await page.goto(srv2.url('#/task/bigov'));
    // Polled by its id alone: the whole overview (1.3 MB at 250 turns) copied out of the page at
    // every poll held the page's thread (~150 ms, and as much in garbage collection) while it drew.
    await until(() => page.evaluate(() => window.mindgateTasks.overview()?.session_id === 'bigov'), { what: 'the big overview', timeout: 60000 });
    await page.locator('.tov-turn').first().waitFor();
    const openMs = Date.now() - t0;
    await until(() => page.locator('.tg-live-state').textContent().then((t) => t.includes('following')), { what: 'the live feed', timeout: 60000 });
    const before = await page.evaluate(() => window.mindgateTasks.live());
    // Whether the page had run its idle warm-up (warm()) when the line was appended.
    const warmedAtAppend = await page.evaluate(() => window.mindgateTasks.timings().warmed);
    const sent = Date.now();
    const cid = 'late1';
    appendFileSync(file, [
      JSON.stringify({ type: 'tool/call', seq: big.seq, time: big.t + 100, data: { turn: big.turn, step: big.step, callId: cid, name: 'bash', arguments: '{"command":"ls"}' } }),
      '',
    ].join('\n'));
    await until(async () => (await page.evaluate(() => window.mindgateTasks.live())).updates > before.updates, { what: 'the append applied', timeout: 30000, interval: 20 });
    await until(async () => (await page.evaluate(() => window.mindgateTasks.live())).paintedAt, { what: 'the update painted', timeout: 30000, interval: 20 });
    const after = await page.evaluate(() => ({ live: window.mindgateTasks.live(), timings: window.mindgateTasks.timings() }));
    assert.equal(after.live.lastEvent, 'overview_delta');
    assert.equal(after.timings.rowsRendered, 1, 'only the grown turn re-rendered');
    const ov = await overviewOf(page);
    assert.equal(ov.turns[ov.turns.length - 1].counts.tool_calls, 41, 'the new call counted in its turn');
    // The band after the splice is the band a whole render draws.
    const spliced = await page.evaluate(() => window.mindgateTasks.pathBand());
    await page.evaluate(() => window.mindgateTasks.page.overviewView.set(window.mindgateTasks.overview()));
    // The rows' bars and marks, redrawn on the rescaled axis, are those a whole render draws.
    const barsLive = await page.evaluate(() => window.mindgateTasks.turnBars());
    assert.deepEqual(spliced, await page.evaluate(() => window.mindgateTasks.pathBand()), 'the spliced band = a whole render');
    assert.ok(barsLive.length > 10, 'bars drawn for the rows in view');
    assert.deepEqual(barsLive, await page.evaluate(() => window.mindgateTasks.turnBars()), 'the bars after the append = a whole render');
    await shootBothThemes(page, 'overview-big-live-append');
    // Scrolled to the end, the lanes draw the rows now in view, each bar in its row.
    await page.locator('.tov-host').evaluate((h) => { h.scrollTop = h.scrollHeight; });
    const last = ov.turns[ov.turns.length - 1].id;
    const lastBar = await until(async () => (await page.evaluate(() => window.mindgateTasks.turnBars())).find((b) => b.turn === last), { what: 'the last turn\'s bar drawn' });
    const lastRow = await page.locator(`.tov-turn[data-turn="${last}"]`).boundingBox();
    assert.ok(lastBar.top >= lastRow.y && lastBar.bottom <= lastRow.y + lastRow.height, 'the last bar in its row after scrolling');
    const z0 = Date.now();
    await page.locator('.tov-turn').last().click();
    await until(async () => (await page.evaluate(() => window.mindgateTasks.boxes())).length > 40, { what: 'the last turn drawn', timeout: 30000 });
    const zoomMs = Date.now() - z0;
    // The page times its zoom to the frame that painted the turn: a moment after the boxes exist.
    const timings = await until(async () => {
      const t = await page.evaluate(() => window.mindgateTasks.timings());
      return t.zoomMs != null ? t : null;
    }, { what: 'the zoom timed', interval: 20 });
    const report = {
      events: BIG_EVENTS, turns, openMs, overviewRenderMs: after.timings.overviewRenderMs,
      appendToPageMs: after.live.appliedAt - sent, appendToPaintMs: after.live.paintedAt - sent, pageApplyMs: after.live.applyMs, deltaBytes: after.live.deltaBytes,
      zoomMs, pageOpenMs: after.timings.overviewOpenMs, zoomClickToPaintMs: timings.zoomMs, zoomFetchMs: timings.zoomFetchMs, binary: process.env.MINDGATE_BIN || 'target/debug/mindgate',
      // The page open's parts: the overview's answer (from the page's open), its parse, its render, the frame that painted it; the first update's regrouped turns.
      open: after.timings.open, regroupedTurns: after.timings.regrouped, warmedAtAppend,
    };
    console.log(`task overview figures: ${JSON.stringify(report)}`);
    writeFileSync(path.join(SHOTS, 'overview-figures.json'), JSON.stringify(report, null, 2));
    assert.deepEqual(errors, [], errors.join('\n'));
  } finally {
    await page.close();
    await srv2.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
